import { Type } from '@sinclair/typebox';

/** POST /api/v1/interactions/{id}/{token}/callback (issue #40 §2): documentation; checkAnswer validates. */
export const InteractionCallbackParams = Type.Object({
  id: Type.String({ description: 'The interaction id (as sent to the app)' }),
  token: Type.String({ description: 'The interaction token (secret; valid 15 minutes)' }),
});

export const InteractionCallbackBody = Type.Object(
  {
    type: Type.Integer({ description: '4 CHANNEL_MESSAGE_WITH_SOURCE or 5 DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE' }),
    data: Type.Optional(
      Type.Object(
        {
          content: Type.Optional(Type.String({ description: 'Type 4: up to 2000 characters (content or embeds required)' })),
          embeds: Type.Optional(Type.Array(Type.Unknown(), { description: 'Type 4: up to 10 embed objects, as for webhook execute' })),
          allowed_mentions: Type.Optional(Type.Unknown({ description: 'Accepted; mentions stay text and notify nobody' })),
          flags: Type.Optional(Type.Integer({ description: '64 EPHEMERAL: only the invoker sees it' })),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

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

export const InteractionCallbackQuery = Type.Object(
  { with_response: Type.Optional(Type.String({ description: 'true: answer 200 with the interaction callback response instead of 204' })) },
  { additionalProperties: true },
);

/** Discord's interaction callback response object (documentation: the route writes it with JSON.stringify). */
export const InteractionCallbackResponseBody = Type.Object(
  {
    interaction: Type.Object({
      id: Type.String({ description: 'The interaction' }),
      type: Type.Integer({ description: '2 APPLICATION_COMMAND' }),
      response_message_id: Type.String({ description: 'The message the answer posted (an ephemeral one too: the invoker alone sees it)' }),
      response_message_loading: Type.Boolean({ description: 'A deferred answer: the message is "thinking"' }),
      response_message_ephemeral: Type.Boolean({ description: 'Shown to the invoker only' }),
    }),
    resource: Type.Object({
      type: Type.Integer({ description: 'The callback type: 4 or 5' }),
      message: Type.Unknown({ description: "Discord's message object (type 20, with interaction_metadata; flags 64 when ephemeral)" }),
    }),
  },
  { description: "Discord's interaction callback response" },
);

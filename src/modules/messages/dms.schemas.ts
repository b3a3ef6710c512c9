import { Type } from '@sinclair/typebox';

/**
 * TypeBox schemas of the bot message and direct-message routes (validation and OpenAPI). Message
 * payloads and recipient ids are typed loosely on purpose: message-payload.ts and dms.service.ts
 * check them, so every problem lands in the 50035 tree at the key that was sent (DESIGN §1).
 */

/** DESIGN §1 API error, with the 50035 field tree when there is one. */
export const ApiErrorWithFields = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  errors: Type.Optional(Type.Unknown({ description: 'Invalid Form Body (50035): the problems, at the paths of the request body' })),
});

export const ApiErrorResponses = { 400: ApiErrorWithFields, 401: ApiErrorWithFields, 403: ApiErrorWithFields, 404: ApiErrorWithFields };

export const ChannelIdParams = Type.Object({ channelId: Type.String({ description: 'Snowflake id of a server text channel or a DM channel' }) });

/** Documents the payload; message-payload.ts applies every rule (code points, sums over embeds, aliases). */
export const BotMessageBody = Type.Object(
  {
    content: Type.Optional(Type.Unknown({ description: 'Text, up to 2000 Unicode code points. Mentions and @everyone stay literal and notify nobody.' })),
    embeds: Type.Optional(Type.Unknown({ description: 'Up to 10 embed objects, as for webhook execute (needs Embed links in a server)' })),
  },
  { additionalProperties: true, description: 'At least one of content and embeds (else 50006). Unknown keys (tts, nonce, allowed_mentions…) are ignored.' },
);

export const BotMessageRecordBody = Type.Object({
  id: Type.String(),
  channelId: Type.String(),
  content: Type.String(),
  embeds: Type.Array(Type.Unknown()),
  author: Type.Object({ id: Type.String({ description: 'The bot account' }), username: Type.String(), avatarUrl: Type.Union([Type.String(), Type.Null()]), bot: Type.Literal(true) }),
  applicationId: Type.String(),
  mentions: Type.Array(Type.Unknown(), { maxItems: 0, description: 'Always empty: bots mention nobody' }),
  mentionEveryone: Type.Boolean({ description: 'Always false' }),
  createdAt: Type.String({ format: 'date-time' }),
  editedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** The recipient is checked by dms.service.ts, so a bad id gets 50035 at the key that was sent. */
export const OpenDmBody = Type.Object(
  {
    recipientId: Type.Optional(Type.Unknown({ description: 'Snowflake id of the person, as a string. Alias: recipient_id.' })),
    recipient_id: Type.Optional(Type.Unknown({ description: "Discord's name for recipientId" })),
  },
  { additionalProperties: true },
);

export const DmChannelBody = Type.Object({
  id: Type.String({ description: 'The DM channel id, for POST /api/v1/channels/{channelId}/messages' }),
  type: Type.Literal(1, { description: 'Direct message' }),
  recipients: Type.Array(
    Type.Object({
      id: Type.String(),
      username: Type.String(),
      name: Type.String({ description: 'Display name' }),
      avatarUrl: Type.Union([Type.String(), Type.Null()]),
      bot: Type.Boolean(),
    }),
    { description: 'The other party' },
  ),
});

export const ConversationParams = Type.Object({ channelId: Type.String() });

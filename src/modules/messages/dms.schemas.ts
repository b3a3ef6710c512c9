import { Type } from '@sinclair/typebox';
import { DmChannelResourceBody, MessageResourceBody, UserResourceBody } from '../resources/resources.schemas.js';
import { MessageLimits } from './message-limits.js';

/**
 * TypeBox schemas of the bot message and direct-message routes (validation and OpenAPI). Message
 * payloads and recipient ids are typed loosely on purpose: message-payload.ts and dms.service.ts
 * check them, so every problem lands in the 50035 tree at the key that was sent (DESIGN §1).
 */

export const ChannelIdParams = Type.Object({ channelId: Type.String({ description: 'Snowflake id of a server text channel or a DM channel' }) });

/** Documents the payload; message-payload.ts applies every rule (code points, sums over embeds, aliases). */
export const BotMessageBody = Type.Object(
  {
    content: Type.Optional(
      Type.Unknown({ description: `Text, up to ${MessageLimits.content} Unicode code points. Mentions and @everyone stay literal and notify nobody.` }),
    ),
    embeds: Type.Optional(Type.Unknown({ description: `Up to ${MessageLimits.embeds} embed objects, as for webhook execute (needs Embed links in a server)` })),
  },
  { additionalProperties: true, description: 'At least one of content and embeds (else 50006). Unknown keys (tts, nonce, allowed_mentions…) are ignored.' },
);

/** Discord's message object (resources.ts presentMessage). */
export const BotMessageRecordBody = MessageResourceBody;

const Snowflake = (description = 'Snowflake id (decimal string, Discord epoch)') => Type.String({ description, pattern: '^[0-9]{1,20}$' });

/** Issue #40 §2: who used which command (interaction-metadata.ts). */
const InteractionMetadataBody = Type.Object(
  {
    id: Snowflake('The interaction'),
    type: Type.Integer({ description: '2 APPLICATION_COMMAND' }),
    name: Type.String({ description: 'The command' }),
    command_type: Type.Optional(Type.Integer({ description: '1 CHAT_INPUT' })),
    user: UserResourceBody,
    authorizing_integration_owners: Type.Optional(Type.Record(Type.String(), Snowflake())),
  },
  { description: 'Who used which command' },
);

/**
 * Discord's message object as a bot reads it (issue #40 §4): a message that answers a command is
 * type 20 with `interaction_metadata` and the older `interaction`, which the type-0 schema would drop.
 */
export const BotReadMessageBody = Type.Object(
  {
    ...MessageResourceBody.properties,
    type: Type.Union([Type.Literal(0), Type.Literal(20)], { description: '0 DEFAULT, or 20 CHAT_INPUT_COMMAND: an app’s answer to a command' }),
    flags: Type.Integer({ description: '128 LOADING: a deferred answer that is still “thinking”' }),
    interaction_metadata: Type.Optional(InteractionMetadataBody),
    interaction: Type.Optional(Type.Object({ id: Snowflake(), type: Type.Integer(), name: Type.String(), user: UserResourceBody }, { description: 'Deprecated by Discord for interaction_metadata; the same command' })),
  },
  { description: "A message (Discord's message object)" },
);
export const BotReadMessageListBody = Type.Array(BotReadMessageBody, { description: 'Newest first' });

/** The recipient is checked by dms.service.ts, so a bad id gets 50035 at the key that was sent. */
export const OpenDmBody = Type.Object(
  {
    recipientId: Type.Optional(Type.Unknown({ description: 'Snowflake id of the person, as a string. Alias: recipient_id.' })),
    recipient_id: Type.Optional(Type.Unknown({ description: "Discord's name for recipientId" })),
  },
  { additionalProperties: true },
);

/** Discord's DM channel object (resources.ts presentDmChannel). */
export const DmChannelBody = DmChannelResourceBody;

export const ConversationParams = Type.Object({ channelId: Type.String() });

// --- What bots read (issue #40 §4) ----------------------------------------------------------------

const MessageId = (description: string) => Type.String({ description, pattern: '^[0-9]{1,20}$' });

/** Discord's history query: one of before, after, around (message ids), and limit 1–100 (default 50). */
export const HistoryQuery = Type.Object(
  {
    before: Type.Optional(MessageId('Messages older than this message id')),
    after: Type.Optional(MessageId('Messages newer than this message id')),
    around: Type.Optional(MessageId('This message and those around it: the older half with it, the newer half')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'How many, 1–100 (default 50)' })),
  },
  { description: 'At most one of before, after and around' },
);

export const ChannelMessageParams = Type.Object({
  channelId: Type.String({ description: 'Snowflake id of a server text channel or a DM channel' }),
  messageId: Type.String({ description: 'Snowflake id of a message of that channel' }),
});

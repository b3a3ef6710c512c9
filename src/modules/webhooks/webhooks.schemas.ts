import { Type, type Static } from '@sinclair/typebox';
import { MessageLimits } from '../messages/message-limits.js';
import { MessageResourceBody, WebhookResourceBody, WebhookResourceListBody } from '../resources/resources.schemas.js';

/**
 * TypeBox schemas of the webhook routes (shared by the URL routes, execute.routes.ts, and the
 * management routes). Response schemas also decide what is serialised, so no field leaks
 * (DESIGN §9.2). Add to this file additively.
 */

const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

/** DESIGN §1: the body of a 429. */
export const RateLimitedBody = Type.Object(
  {
    message: Type.String(),
    retry_after: Type.Number({ description: 'Seconds until the bucket refills, with decimals' }),
    global: Type.Boolean(),
    code: Type.Integer(),
  },
  { description: 'Rate limited: wait retry_after seconds (also in Retry-After and X-RateLimit-Reset-After)' },
);

/** The webhook record: Discord's webhook object (resources.ts presentWebhook). */
export const WebhookRecordBody = WebhookResourceBody;

export const WebhookUrlParams = Type.Object({
  id: Type.String({ description: 'Webhook id' }),
  token: Type.String({ description: 'Webhook token (secret)' }),
});
export type WebhookUrlParams = Static<typeof WebhookUrlParams>;

export const WebhookMessageParams = Type.Object({
  id: Type.String({ description: 'Webhook id' }),
  token: Type.String({ description: 'Webhook token (secret)' }),
  messageId: Type.String({ description: 'Id of a message this webhook posted' }),
});
export type WebhookMessageParams = Static<typeof WebhookMessageParams>;

export const ExecuteQuery = Type.Object({
  wait: Type.Optional(
    Type.String({
      description: 'true (also 1, True) answers 200 with the created message; false (0, False) or absent answers 204 without a body',
      enum: ['true', 'false', '1', '0', 'True', 'False'],
    }),
  ),
});
export type ExecuteQuery = Static<typeof ExecuteQuery>;

// Every limit below is read from MessageLimits, the table the parser enforces
// (test/unit/message-limits.test.ts holds the two together).
const L = MessageLimits;
const Url = (description: string) => Type.String({ format: 'uri', maxLength: L.url, description });

/** An embed (embed.ts): stored and returned in this shape. */
export const EmbedBody = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: L.title })),
    description: Type.Optional(Type.String({ maxLength: L.description })),
    url: Type.Optional(Url('http(s)')),
    timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; returned in UTC' })),
    color: Type.Optional(Type.Integer({ minimum: 0, maximum: L.color })),
    footer: Type.Optional(Type.Object({ text: Type.String({ maxLength: L.footerText }), iconUrl: Type.Optional(Url('http(s); alias icon_url')) })),
    image: Type.Optional(Type.Object({ url: Url('http(s)') })),
    thumbnail: Type.Optional(Type.Object({ url: Url('http(s)') })),
    author: Type.Optional(
      Type.Object({ name: Type.String({ maxLength: L.authorName }), url: Type.Optional(Url('http(s)')), iconUrl: Type.Optional(Url('http(s); alias icon_url')) }),
    ),
    fields: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ maxLength: L.fieldName }), value: Type.String({ maxLength: L.fieldValue }), inline: Type.Optional(Type.Boolean()) }), {
        maxItems: L.fields,
      }),
    ),
  },
  {
    description: `Lengths in Unicode code points; at most ${L.embedTotal} over all embeds of a message (title, description, field names and values, footer text, author name)`,
  },
);

/**
 * SPEC §2.9, for the document only: message-payload.ts validates (code-point lengths, the
 * embedTotal sum, aliases and unknown keys are beyond what a JSON schema says well).
 */
export const ExecuteBody = Type.Object(
  {
    content: Type.Optional(Type.String({ maxLength: L.content, description: `Up to ${L.content} Unicode code points; mentions stay literal text` })),
    embeds: Type.Optional(Type.Array(EmbedBody, { maxItems: L.embeds })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: L.username, description: 'Display name for this message only; may not pass for the service' })),
    avatar_url: Type.Optional(Type.String({ format: 'uri', description: 'https avatar for this message only' })),
    avatarUrl: Type.Optional(Type.String({ format: 'uri', description: 'SPEC §2.9 name of avatar_url' })),
  },
  { additionalProperties: true, description: 'At least one of content or embeds. Unknown keys (tts, nonce, allowed_mentions…) are ignored.' },
);

export const EditMessageBody = Type.Object(
  {
    content: Type.Optional(NullableString('New content (null or "" clears it)')),
    embeds: Type.Optional(Type.Union([Type.Array(EmbedBody, { maxItems: L.embeds }), Type.Null()], { description: 'New embeds (null or [] clears them)' })),
  },
  { additionalProperties: true, description: 'Absent fields stay as they are; the message may not end up empty. username and avatarUrl cannot change.' },
);

/** A message posted by a webhook: Discord's message object (resources.ts presentMessage). */
export const WebhookMessageBody = MessageResourceBody;

export const PatchWebhookByTokenBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: L.username, description: 'May not pass for the service' })),
    avatar_url: Type.Optional(NullableString('https URL, or null to remove')),
    avatarUrl: Type.Optional(NullableString('Alias of avatar_url')),
    avatar: Type.Optional(NullableString('Image data to upload (`data:image/png;base64,…`: PNG, JPEG, GIF or WebP, at most 10 MiB), or null to remove')),
  },
  { additionalProperties: true },
);

// --- Management with bot credentials, and the Integrations pages (helper "webhook-manage") ----

/** The body of POST /channels/{id}/webhooks and PATCH /webhooks/{id}; rules are checked by the service (50035). */
export const WebhookManageBody = Type.Object(
  {
    name: Type.Optional(Type.String({ description: `1–${L.username} characters after trimming; must not pass for the service (SPEC §7)` })),
    avatarUrl: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'An https:// image URL; null or "" removes it' })),
    avatar_url: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Alias of avatarUrl' })),
    avatar: Type.Optional(Type.Union([Type.Null(), Type.String()], { description: 'Image data to upload (`data:image/png;base64,…`: PNG, JPEG, GIF or WebP, at most 10 MiB), or null to remove' })),
  },
  { additionalProperties: true },
);
export type WebhookManageBody = Static<typeof WebhookManageBody>;

/** A channel's webhooks, without tokens. */
export const WebhookListBody = WebhookResourceListBody;

export const ChannelIdParams = Type.Object({ channelId: Type.String({ description: 'Channel snowflake id' }) });
export type ChannelIdParams = Static<typeof ChannelIdParams>;

export const WebhookIdParams = Type.Object({ id: Type.String({ description: 'Webhook snowflake id' }) });
export type WebhookIdParams = Static<typeof WebhookIdParams>;

// Pages: every field optional so that bad or missing values reach the service and come back
// beside the form (as the directory pages do).
const formField = Type.Optional(Type.String());

export const IntegrationsServerParams = Type.Object({ serverId: Type.String() });
export type IntegrationsServerParams = Static<typeof IntegrationsServerParams>;
export const IntegrationsChannelParams = Type.Object({ channelId: Type.String() });
export type IntegrationsChannelParams = Static<typeof IntegrationsChannelParams>;
export const IntegrationsServerWebhookParams = Type.Object({ serverId: Type.String(), webhookId: Type.String() });
export type IntegrationsServerWebhookParams = Static<typeof IntegrationsServerWebhookParams>;
export const IntegrationsChannelWebhookParams = Type.Object({ channelId: Type.String(), webhookId: Type.String() });
export type IntegrationsChannelWebhookParams = Static<typeof IntegrationsChannelWebhookParams>;

export const IntegrationsQuery = Type.Object({ done: formField });
export type IntegrationsQuery = Static<typeof IntegrationsQuery>;

export const WebhookFormBody = Type.Object({ name: formField, avatarUrl: formField, channelId: formField, _csrf: formField });
export type WebhookFormBody = Static<typeof WebhookFormBody>;

export const WebhookConfirmBody = Type.Object({ _csrf: formField });
export type WebhookConfirmBody = Static<typeof WebhookConfirmBody>;

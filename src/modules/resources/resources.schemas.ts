import { Type, type TSchema } from '@sinclair/typebox';
import { MessageLimits as L } from '../messages/message-limits.js';

/**
 * The response schemas of /api/v1's resources, one per presenter of resources.ts (DESIGN §1:
 * Discord's snake_case wire format). Every route returning a resource uses these, so the OpenAPI
 * document shows Discord's names and no field leaks (DESIGN §9.2). docs/api-resources.md lists
 * the same fields with examples.
 */

const Snowflake = (description = 'Snowflake id (decimal string, Discord epoch)') => Type.String({ description, pattern: '^[0-9]{1,20}$' });
const Nullable = <T extends TSchema>(schema: T, description?: string) => Type.Union([schema, Type.Null()], description ? { description } : {});
const ImageHash = (description: string) => Nullable(Type.String({ pattern: '^[0-9a-f]{32}$' }), description);

export const UserResourceBody = Type.Object(
  {
    id: Snowflake(),
    username: Type.String(),
    global_name: Nullable(Type.String(), 'Display name'),
    avatar: ImageHash('Avatar hash: {base_url}/avatars/{id}/{avatar}.png serves the image at avatar_url'),
    discriminator: Type.Literal('0'),
    public_flags: Type.Literal(0),
    flags: Type.Literal(0),
    bot: Type.Boolean(),
    banner: Type.Null(),
    accent_color: Type.Null(),
    avatar_decoration_data: Type.Null(),
    avatar_url: Nullable(Type.String(), 'Gatehouse: the https URL of the avatar'),
    email: Type.Optional(Nullable(Type.String(), 'With the email scope')),
    verified: Type.Optional(Type.Boolean({ description: 'With the email scope: whether the e-mail address is verified' })),
    mfa_enabled: Type.Optional(Type.Boolean({ description: 'On /users/@me: whether the person has two-factor authentication on' })),
  },
  { description: "A user (Discord's user object)" },
);

export const PartialGuildBody = Type.Object(
  {
    id: Snowflake(),
    name: Type.String(),
    icon: ImageHash('Icon hash: {base_url}/icons/{id}/{icon}.png serves the image at icon_url'),
    banner: Type.Null(),
    owner: Type.Boolean({ description: 'Whether the person owns the server' }),
    permissions: Type.String({ description: "The person's permissions there, a 64-bit bit set as a decimal string" }),
    features: Type.Array(Type.String(), { maxItems: 0 }),
    icon_url: Nullable(Type.String(), 'Gatehouse: the https URL of the icon'),
  },
  { description: "A server of the person (Discord's partial guild)" },
);

export const PartialGuildListBody = Type.Array(PartialGuildBody);

export const GuildBody = Type.Object(
  {
    id: Snowflake(),
    name: Type.String(),
    icon: ImageHash('Icon hash'),
    owner_id: Snowflake(),
    mfa_level: Type.Union([Type.Literal(0), Type.Literal(1)], { description: 'Whether moderators need two-factor authentication (0 none, 1 elevated)' }),
    features: Type.Array(Type.String(), { maxItems: 0 }),
    icon_url: Nullable(Type.String(), 'Gatehouse: the https URL of the icon'),
  },
  { description: 'A server (Discord guild)' },
);

export const ApplicationResourceBody = Type.Object(
  {
    id: Snowflake('The application (client) id'),
    name: Type.String(),
    icon: ImageHash('Icon hash: {base_url}/app-icons/{id}/{icon}.png serves the image at icon_url'),
    description: Type.String(),
    summary: Type.Literal(''),
    type: Type.Null(),
    bot_public: Type.Boolean(),
    bot_require_code_grant: Type.Boolean(),
    verify_key: Type.String({ description: "The hex Ed25519 public key that verifies the X-Signature-Ed25519 of every request Gatehouse sends the app (Discord's)" }),
    flags: Type.Literal(0),
    hook: Type.Literal(true),
    icon_url: Nullable(Type.String(), 'Gatehouse: the https URL of the icon'),
    owner: Type.Optional(UserResourceBody),
    bot: Type.Optional(UserResourceBody),
    interactions_endpoint_url: Type.Optional(Nullable(Type.String(), '/applications/@me: where interactions are sent (verified on save)')),
    event_webhooks_url: Type.Optional(Nullable(Type.String(), '/applications/@me: where app events are sent (verified on save)')),
    event_webhooks_status: Type.Optional(Type.Integer({ description: '/applications/@me: 1 disabled, 2 enabled, 3 disabled by the server (deliveries kept failing)' })),
    event_webhooks_types: Type.Optional(Type.Array(Type.String(), { description: '/applications/@me: the app events sent (APPLICATION_AUTHORIZED, APPLICATION_DEAUTHORIZED)' })),
  },
  { description: "An application (Discord's application object)" },
);

export const AuthorizationResourceBody = Type.Object({
  application: ApplicationResourceBody,
  scopes: Type.Array(Type.String()),
  expires: Type.String({ format: 'date-time', description: 'When the presented access token expires' }),
  user: Type.Optional(UserResourceBody),
});

// Embed limits are read from MessageLimits, the table the parser enforces (test/unit/message-limits.test.ts).
const Url = (description: string) => Type.String({ format: 'uri', maxLength: L.url, description });
const Icon = { icon_url: Type.Optional(Url('http(s)')), proxy_icon_url: Type.Optional(Url('The same URL: there is no media proxy')) };
const Media = Type.Object({ url: Url('http(s)'), proxy_url: Url('The same URL: there is no media proxy') });

export const EmbedResourceBody = Type.Object(
  {
    type: Type.Literal('rich'),
    title: Type.Optional(Type.String({ maxLength: L.title })),
    description: Type.Optional(Type.String({ maxLength: L.description })),
    url: Type.Optional(Url('http(s)')),
    timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601, in UTC' })),
    color: Type.Optional(Type.Integer({ minimum: 0, maximum: L.color })),
    footer: Type.Optional(Type.Object({ text: Type.String({ maxLength: L.footerText }), ...Icon })),
    image: Type.Optional(Media),
    thumbnail: Type.Optional(Media),
    author: Type.Optional(Type.Object({ name: Type.String({ maxLength: L.authorName }), url: Type.Optional(Url('http(s)')), ...Icon })),
    fields: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ maxLength: L.fieldName }), value: Type.String({ maxLength: L.fieldValue }), inline: Type.Boolean() }), { maxItems: L.fields }),
    ),
  },
  { description: "An embed (Discord's names)" },
);

/** Issue #42 §3: Discord's attachment object; `url` is signed and expires (docs/files.md). */
export const AttachmentResourceBody = Type.Object(
  {
    id: Snowflake(),
    filename: Type.String(),
    size: Type.Integer({ minimum: 0, description: 'Bytes' }),
    url: Type.String({ description: 'Signed, expiring URL on this origin: /attachments/{channel_id}/{attachment_id}/{filename}?ex=&is=&hm=' }),
    proxy_url: Type.String({ description: 'The same URL (there is no media proxy)' }),
    content_type: Type.Optional(Type.String()),
    width: Type.Optional(Type.Integer({ description: 'PNG, JPEG, GIF and WebP images only' })),
    height: Type.Optional(Type.Integer({ description: 'PNG, JPEG, GIF and WebP images only' })),
    description: Type.Optional(Type.String({ description: 'Alt text' })),
  },
  { description: "A file of a message (Discord's attachment object)" },
);

export const MessageResourceBody = Type.Object(
  {
    id: Snowflake(),
    type: Type.Literal(0),
    content: Type.String(),
    channel_id: Snowflake(),
    author: UserResourceBody,
    attachments: Type.Array(AttachmentResourceBody, { maxItems: 10 }),
    embeds: Type.Array(EmbedResourceBody),
    mentions: Type.Array(Type.Unknown(), { maxItems: 0, description: 'Always empty: messages never mention anyone (SPEC §2.10)' }),
    mention_roles: Type.Array(Type.Unknown(), { maxItems: 0 }),
    mention_everyone: Type.Literal(false),
    pinned: Type.Literal(false),
    tts: Type.Literal(false),
    timestamp: Type.String({ format: 'date-time', description: 'When it was posted' }),
    edited_timestamp: Nullable(Type.String({ format: 'date-time' }), 'When it was last edited'),
    flags: Type.Literal(0),
    components: Type.Array(Type.Unknown(), { maxItems: 0 }),
    webhook_id: Type.Optional(Snowflake('The webhook that posted it')),
    application_id: Type.Optional(Snowflake('The application of the bot or webhook that posted it')),
  },
  { description: "A message (Discord's message object)" },
);

export const DmChannelResourceBody = Type.Object(
  {
    id: Snowflake('The DM channel id, for POST /api/v1/channels/{channelId}/messages'),
    type: Type.Literal(1, { description: 'Direct message' }),
    last_message_id: Type.Null(),
    flags: Type.Literal(0),
    recipients: Type.Array(UserResourceBody, { description: 'The other party' }),
  },
  { description: "A direct-message channel (Discord's channel object)" },
);

export const WebhookResourceBody = Type.Object(
  {
    id: Snowflake(),
    type: Type.Literal(1, { description: 'Incoming webhook' }),
    guild_id: Snowflake('The server of its channel'),
    channel_id: Snowflake('The channel it posts to'),
    name: Type.String(),
    avatar: ImageHash('Avatar hash: {base_url}/avatars/{id}/{avatar}.png serves the image at avatar_url'),
    application_id: Nullable(Snowflake(), "The creating bot's application, or null when a person created it"),
    avatar_url: Nullable(Type.String(), 'Gatehouse: the https URL of its default avatar'),
    created_at: Type.String({ format: 'date-time', description: 'Gatehouse: when it was created' }),
    token: Type.Optional(Type.String({ description: 'Only at creation and regeneration: shown once' })),
    url: Type.Optional(Type.String({ description: 'Only at creation and regeneration: {base_url}/api/v1/webhooks/{id}/{token}' })),
  },
  { description: "A webhook (Discord's webhook object)" },
);

export const WebhookResourceListBody = Type.Array(WebhookResourceBody);

export const CommandResourceBody = Type.Object(
  {
    id: Snowflake('Kept when a command of the same name is overwritten'),
    type: Type.Integer(),
    application_id: Snowflake(),
    name: Type.String(),
    description: Type.String(),
    options: Type.Array(Type.Object({}, { additionalProperties: true })),
    version: Snowflake(),
    default_member_permissions: Type.Union([Type.String({ description: 'Permission bits a member needs to use it in a server; "0": administrators only' }), Type.Null()]),
    dm_permission: Type.Boolean({ description: 'Usable in a DM with the bot (contexts null or listing 1)' }),
    integration_types: Type.Array(Type.Integer(), { description: 'Install types it runs under: 0 server install, 1 user install' }),
    contexts: Type.Union([Type.Array(Type.Integer()), Type.Null()], { description: 'Where it may be used: 0 server channel, 1 DM with the bot, 2 group DM; null: everywhere' }),
    nsfw: Type.Literal(false),
    guild_id: Type.Optional(Snowflake('A guild command: the one server it is registered for (absent on a global command)')),
  },
  { description: "An application command (Discord's names)" },
);

export const CommandResourceListBody = Type.Array(CommandResourceBody);

// --- What bots read (issue #40 §4) ----------------------------------------------------------------

export const GuildChannelResourceBody = Type.Object(
  {
    id: Snowflake(),
    type: Type.Literal(0, { description: 'Server text channel' }),
    guild_id: Snowflake('Its server'),
    name: Type.String(),
    topic: Nullable(Type.String()),
    position: Type.Integer({ minimum: 0 }),
    permission_overwrites: Type.Array(Type.Unknown(), { maxItems: 0, description: 'Always empty: permissions are server-wide' }),
    nsfw: Type.Literal(false),
    parent_id: Type.Null(),
    last_message_id: Type.Null(),
    rate_limit_per_user: Type.Literal(0),
    flags: Type.Literal(0),
  },
  { description: "A server text channel (Discord's channel object, type 0)" },
);

export const GuildChannelListBody = Type.Array(GuildChannelResourceBody);

export const ChannelResourceBody = Type.Union([GuildChannelResourceBody, DmChannelResourceBody], { description: "A server text channel (type 0) or a direct message (type 1), Discord's channel object" });

export const RoleResourceBody = Type.Object(
  {
    id: Snowflake('The @everyone role has the server’s id'),
    name: Type.String(),
    color: Type.Integer({ minimum: 0, maximum: 0xffffff }),
    hoist: Type.Literal(false),
    icon: Type.Null(),
    unicode_emoji: Type.Null(),
    position: Type.Integer({ minimum: 0 }),
    permissions: Type.String({ description: 'A 64-bit bit set as a decimal string' }),
    managed: Type.Boolean({ description: "A bot's own role, changed only by installing its app again or removing it" }),
    mentionable: Type.Literal(false),
    flags: Type.Literal(0),
  },
  { description: "A role (Discord's role object)" },
);

export const RoleListBody = Type.Array(RoleResourceBody);

export const MemberResourceBody = Type.Object(
  {
    user: UserResourceBody,
    nick: Nullable(Type.String()),
    avatar: Type.Null(),
    banner: Type.Null(),
    roles: Type.Array(Snowflake(), { description: 'Role ids, @everyone not included' }),
    joined_at: Type.String({ format: 'date-time' }),
    premium_since: Type.Null(),
    deaf: Type.Literal(false),
    mute: Type.Literal(false),
    flags: Type.Literal(0),
    pending: Type.Literal(false),
    communication_disabled_until: Type.Null(),
  },
  { description: "A server member (Discord's guild member object)" },
);

export const GuildDetailBody = Type.Object(
  {
    ...GuildBody.properties,
    icon_hash: ImageHash('The same as icon'),
    splash: Type.Null(),
    discovery_splash: Type.Null(),
    banner: Type.Null(),
    description: Type.Null(),
    afk_channel_id: Type.Null(),
    afk_timeout: Type.Literal(0),
    verification_level: Type.Literal(0),
    default_message_notifications: Type.Literal(0),
    explicit_content_filter: Type.Literal(0),
    roles: RoleListBody,
    emojis: Type.Array(Type.Unknown(), { maxItems: 0 }),
    stickers: Type.Array(Type.Unknown(), { maxItems: 0 }),
    application_id: Type.Null(),
    system_channel_id: Type.Null(),
    system_channel_flags: Type.Literal(0),
    rules_channel_id: Type.Null(),
    public_updates_channel_id: Type.Null(),
    vanity_url_code: Type.Null(),
    premium_tier: Type.Literal(0),
    premium_subscription_count: Type.Literal(0),
    preferred_locale: Type.Literal('en-US'),
    nsfw_level: Type.Literal(0),
    premium_progress_bar_enabled: Type.Literal(false),
  },
  { description: "A server with its roles (Discord's guild object)" },
);


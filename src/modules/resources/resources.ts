import { createHash } from 'node:crypto';
import type { CommandView } from '../applications/bots.js';
import type { AttachmentResource } from '../files/attachments.js';
import { ATTACHMENT_SCHEME, type Embed } from '../messages/embed.js';
import { parseStoredImage } from './uploaded-images.js';

/**
 * The resources of /api/v1 in Discord's wire format (DESIGN §1): one presenter per resource,
 * used by every route that returns it; resources.schemas.ts holds the matching schemas. Pure.
 *
 * Fields Discord always sends and Gatehouse has no concept for carry Discord's neutral value
 * (null, [], false, 0, "0"), because client libraries index them without checking. Gatehouse's
 * own additions (`avatar_url`, `icon_url`, `created_at`) are snake_case too.
 */

// --- Images ---------------------------------------------------------------------------------

const HASHES = new Map<string, string>();
const HASHES_MAX = 4096;

/**
 * DESIGN §1: an avatar or icon travels as an opaque hash, as on Discord, and the CDN routes
 * (cdn.routes.ts) serve the image behind the stored URL at `/{kind}/{id}/{hash}.png`. The hash is the first
 * 32 hex digits of the URL's SHA-256: derived, so nothing new is stored, and it changes whenever
 * the URL does (libraries cache images by it). Memoised, bounded: the same few avatars are
 * presented again and again (DESIGN §5). An uploaded image (issue #42 §3) is stored as its path
 * `/{kind}/{id}/{hash}.png` and its hash is the one in that path, the hash of its bytes.
 */
export function imageHash(url: string | null): string | null {
  if (url === null) return null;
  const uploaded = parseStoredImage(url);
  if (uploaded !== undefined) return uploaded.hash;
  let hash = HASHES.get(url);
  if (hash === undefined) {
    hash = createHash('sha256').update(url).digest('hex').slice(0, 32);
    if (HASHES.size >= HASHES_MAX) HASHES.clear();
    HASHES.set(url, hash);
  }
  return hash;
}

// --- User -------------------------------------------------------------------------------------

/** What a user is presented from: a person, a bot account, or a webhook as a message author. */
export interface UserSource {
  id: string;
  username: string;
  /** The display name; null when there is none (webhook authors). */
  name: string | null;
  avatarUrl: string | null;
  bot: boolean;
}

/** Discord's user object. */
export interface UserResource {
  id: string;
  username: string;
  global_name: string | null;
  avatar: string | null;
  /** Discord's value for accounts without a discriminator. */
  discriminator: '0';
  public_flags: 0;
  flags: 0;
  bot: boolean;
  banner: null;
  accent_color: null;
  avatar_decoration_data: null;
  /** Gatehouse: the stored https URL behind `avatar`. */
  avatar_url: string | null;
  email?: string | null;
  verified?: boolean;
  /** Issue #38 §4: on GET /users/@me, whether the person has a second factor on. */
  mfa_enabled?: boolean;
}

export function presentUser(u: UserSource): UserResource {
  return {
    id: u.id,
    username: u.username,
    global_name: u.name,
    avatar: imageHash(u.avatarUrl),
    discriminator: '0',
    public_flags: 0,
    flags: 0,
    bot: u.bot,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
    avatar_url: u.avatarUrl,
  };
}

/** GET /users/@me: the user, plus `email` and `verified` with the email scope (SPEC §2.5). */
export function presentCurrentUser(u: UserSource & { email: string | null; emailVerified: boolean; mfaEnabled?: boolean }, withEmail: boolean): UserResource {
  const user: UserResource = { ...presentUser(u), ...(u.mfaEnabled === undefined ? {} : { mfa_enabled: u.mfaEnabled }) };
  if (withEmail) {
    user.email = u.email;
    user.verified = u.emailVerified;
  }
  return user;
}

// --- Partial guild (a server of GET /users/@me/servers) ---------------------------------------

export interface PartialGuildResource {
  id: string;
  name: string;
  icon: string | null;
  banner: null;
  owner: boolean;
  /** The person's permissions there: a 64-bit bit set as a decimal string. */
  permissions: string;
  features: never[];
  /** Gatehouse: the stored https URL behind `icon`. */
  icon_url: string | null;
}

export function presentPartialGuild(s: { id: string; name: string; iconUrl: string | null }, owner: boolean, permissions: bigint): PartialGuildResource {
  return { id: s.id, name: s.name, icon: imageHash(s.iconUrl), banner: null, owner, permissions: permissions.toString(), features: [], icon_url: s.iconUrl };
}

/** The server a bot was added to, in the token response of a bot install (Discord's `guild`). */
export interface GuildResource {
  id: string;
  name: string;
  icon: string | null;
  owner_id: string;
  /** Discord's MFA level: 1 when moderators need a second factor (issue #38 §4). */
  mfa_level: 0 | 1;
  features: never[];
  icon_url: string | null;
}

export function presentGuild(s: { id: string; name: string; iconUrl: string | null; ownerId: string; mfaLevel: 0 | 1 }): GuildResource {
  return { id: s.id, name: s.name, icon: imageHash(s.iconUrl), owner_id: s.ownerId, mfa_level: s.mfaLevel, features: [], icon_url: s.iconUrl };
}

// --- Application --------------------------------------------------------------------------------

export interface ApplicationSource {
  id: string;
  name: string;
  description: string;
  iconUrl: string | null;
  botPublic: boolean;
  botRequireCodeGrant: boolean;
}

/** Issue #40 §1, §3: the app's key and endpoints (app-events/), as Discord's application object names them. */
export interface ApplicationEndpointsSource {
  publicKey: string;
  interactionsEndpointUrl: string | null;
  eventWebhooksUrl: string | null;
  eventWebhooksStatus: number;
  eventWebhooksTypes: readonly string[];
}

export interface ApplicationResource {
  id: string;
  name: string;
  icon: string | null;
  description: string;
  summary: '';
  type: null;
  bot_public: boolean;
  bot_require_code_grant: boolean;
  /** Discord's interaction key: the hex Ed25519 public key that verifies what Gatehouse sends the app. */
  verify_key: string;
  flags: 0;
  hook: true;
  /** Gatehouse: the stored https URL behind `icon`. */
  icon_url: string | null;
  /** GET /applications/@me only: the owner. */
  owner?: UserResource;
  /** GET /applications/@me only: the bot account. */
  bot?: UserResource;
  /** GET /applications/@me only (Discord's): where interactions are sent. */
  interactions_endpoint_url?: string | null;
  /** GET /applications/@me only (Discord's): where app events are sent, whether they are, and which. */
  event_webhooks_url?: string | null;
  event_webhooks_status?: number;
  event_webhooks_types?: string[];
}

/** Discord's application object; `endpoints` gives its verify_key (and, for /applications/@me, its endpoints). */
export function presentApplication(a: ApplicationSource, endpoints?: ApplicationEndpointsSource, withEndpoints = false): ApplicationResource {
  return {
    id: a.id,
    name: a.name,
    icon: imageHash(a.iconUrl),
    description: a.description,
    summary: '',
    type: null,
    bot_public: a.botPublic,
    bot_require_code_grant: a.botRequireCodeGrant,
    verify_key: endpoints?.publicKey ?? '',
    flags: 0,
    hook: true,
    icon_url: a.iconUrl,
    ...(endpoints && withEndpoints
      ? {
          interactions_endpoint_url: endpoints.interactionsEndpointUrl,
          event_webhooks_url: endpoints.eventWebhooksUrl,
          event_webhooks_status: endpoints.eventWebhooksStatus,
          event_webhooks_types: [...endpoints.eventWebhooksTypes],
        }
      : {}),
  };
}

/** GET /oauth2/@me (SPEC §2.7). */
export interface AuthorizationResource {
  application: ApplicationResource;
  scopes: string[];
  /** ISO 8601 expiry of the presented access token. */
  expires: string;
  user?: UserResource;
}

// --- Embeds and messages ---------------------------------------------------------------------

interface WireIcon {
  icon_url?: string;
  proxy_icon_url?: string;
}

/** Discord's embed object. */
export interface WireEmbed {
  type: 'rich';
  title?: string;
  description?: string;
  url?: string;
  timestamp?: string;
  color?: number;
  footer?: { text: string } & WireIcon;
  image?: { url: string; proxy_url: string };
  thumbnail?: { url: string; proxy_url: string };
  author?: { name: string; url?: string } & WireIcon;
  fields?: { name: string; value: string; inline: boolean }[];
}

/**
 * An embed as Discord sends it: `type: "rich"`, `icon_url` and `proxy_icon_url` (there is no
 * media proxy: the proxy URL is the URL itself), `proxy_url` on images. Stored embeds keep the
 * names message-payload.ts gives them; only nested objects with icons or URLs are copied.
 */
export function presentEmbed(e: Embed): WireEmbed {
  const { footer, author, image, thumbnail, ...plain } = e;
  const out: WireEmbed = { type: 'rich', ...plain };
  if (footer) out.footer = withIcon({ text: footer.text }, footer.iconUrl);
  if (author) out.author = withIcon(author.url === undefined ? { name: author.name } : { name: author.name, url: author.url }, author.iconUrl);
  if (image) out.image = { url: image.url, proxy_url: image.url };
  if (thumbnail) out.thumbnail = { url: thumbnail.url, proxy_url: thumbnail.url };
  return out;
}

function withIcon<T extends object>(base: T, iconUrl: string | undefined): T & WireIcon {
  return iconUrl === undefined ? base : { ...base, icon_url: iconUrl, proxy_icon_url: iconUrl };
}

/**
 * Issue #42 §2: an image or thumbnail given as `attachment://name` shows that file of the message,
 * at its signed URL (as Discord resolves it); a name the message no longer has stays as written.
 */
function withFileUrls(embed: WireEmbed, files: readonly AttachmentResource[]): WireEmbed {
  for (const key of ['image', 'thumbnail'] as const) {
    const media = embed[key];
    if (!media?.url.startsWith(ATTACHMENT_SCHEME)) continue;
    const file = files.find((f) => f.filename === media.url.slice(ATTACHMENT_SCHEME.length));
    if (file) embed[key] = { url: file.url, proxy_url: file.proxy_url };
  }
  return embed;
}

/** Discord's message type 0, "Default". */
export const MESSAGE_TYPE_DEFAULT = 0;

export interface MessageSource {
  id: string;
  channelId: string;
  content: string;
  embeds: Embed[];
  author: UserSource;
  webhookId: string | null;
  applicationId: string | null;
  createdAt: number;
  editedAt: number | null;
  /** Issue #42 §3: the message's files, URLs already signed (modules/files presentFiles). */
  attachments?: AttachmentResource[];
}

/** Discord's message object. Messages never mention anyone (SPEC §2.10). */
export interface MessageResource {
  id: string;
  type: 0;
  content: string;
  channel_id: string;
  author: UserResource;
  attachments: AttachmentResource[];
  embeds: WireEmbed[];
  mentions: never[];
  mention_roles: never[];
  mention_everyone: false;
  pinned: false;
  tts: false;
  timestamp: string;
  edited_timestamp: string | null;
  flags: 0;
  components: never[];
  webhook_id?: string;
  application_id?: string;
}

export function presentMessage(m: MessageSource): MessageResource {
  const message: MessageResource = {
    id: m.id,
    type: MESSAGE_TYPE_DEFAULT,
    content: m.content,
    channel_id: m.channelId,
    author: presentUser(m.author),
    attachments: m.attachments ?? [],
    embeds: m.embeds.length === 0 ? [] : m.attachments?.length ? m.embeds.map((e) => withFileUrls(presentEmbed(e), m.attachments ?? [])) : m.embeds.map(presentEmbed),
    mentions: [],
    mention_roles: [],
    mention_everyone: false,
    pinned: false,
    tts: false,
    timestamp: new Date(m.createdAt).toISOString(),
    edited_timestamp: m.editedAt === null ? null : new Date(m.editedAt).toISOString(),
    flags: 0,
    components: [],
  };
  if (m.webhookId !== null) message.webhook_id = m.webhookId;
  if (m.applicationId !== null) message.application_id = m.applicationId;
  return message;
}

// --- Channel ------------------------------------------------------------------------------------

/** Discord's channel type 1, a direct message. */
export const CHANNEL_TYPE_DM_WIRE = 1;

export interface DmChannelResource {
  id: string;
  type: 1;
  last_message_id: null;
  flags: 0;
  recipients: UserResource[];
}

export function presentDmChannel(id: string, recipients: UserSource[]): DmChannelResource {
  return { id, type: CHANNEL_TYPE_DM_WIRE, last_message_id: null, flags: 0, recipients: recipients.map(presentUser) };
}

// --- Webhook --------------------------------------------------------------------------------------

export interface WebhookSource {
  id: string;
  serverId: string;
  channelId: string;
  name: string;
  avatarUrl: string | null;
  applicationId: string | null;
  createdAt: number;
}

export interface WebhookResource {
  id: string;
  /** Discord's webhook type 1, "Incoming". */
  type: 1;
  guild_id: string;
  channel_id: string;
  name: string;
  avatar: string | null;
  application_id: string | null;
  /** Gatehouse: the stored https URL behind `avatar`. */
  avatar_url: string | null;
  /** Gatehouse: when it was created. */
  created_at: string;
  /** Only at creation and regeneration: shown once (SPEC §2.8). */
  token?: string;
  url?: string;
}

/** The URL a webhook is executed at: {base_url}/api/v1/webhooks/{id}/{token} (SPEC §2.8). */
export function webhookUrl(baseUrl: string, id: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/api/v1/webhooks/${id}/${token}`;
}

/**
 * `withToken` is given only right after creation or regeneration, the one time the token is
 * shown (SPEC §2.8; Discord shows an incoming webhook's token to its managers every time, SPEC
 * wins); the creator is never part of the record.
 */
export function presentWebhook(w: WebhookSource, options: { withToken?: string; baseUrl: string }): WebhookResource {
  const record: WebhookResource = {
    id: w.id,
    type: 1,
    guild_id: w.serverId,
    channel_id: w.channelId,
    name: w.name,
    avatar: imageHash(w.avatarUrl),
    application_id: w.applicationId,
    avatar_url: w.avatarUrl,
    created_at: new Date(w.createdAt).toISOString(),
  };
  if (options.withToken !== undefined) {
    record.token = options.withToken;
    record.url = webhookUrl(options.baseUrl, w.id, options.withToken);
  }
  return record;
}

// --- Application command ---------------------------------------------------------------------

export interface CommandResource {
  id: string;
  type: number;
  application_id: string;
  name: string;
  description: string;
  options: Record<string, unknown>[];
  /** Discord's version: the id, since a command keeps its id when overwritten. */
  version: string;
  default_member_permissions: string | null;
  dm_permission: boolean;
  integration_types: number[];
  contexts: number[] | null;
  nsfw: false;
  guild_id?: string;
}

export function presentCommand(c: CommandView): CommandResource {
  return {
    id: c.id,
    type: c.type,
    application_id: c.applicationId,
    name: c.name,
    description: c.description,
    options: c.options,
    version: c.id,
    default_member_permissions: c.defaultMemberPermissions,
    // Discord's older field, read from `contexts`: 1 is a DM with the bot.
    dm_permission: c.contexts === null || c.contexts.includes(1),
    integration_types: c.integrationTypes,
    contexts: c.contexts,
    nsfw: false,
    // Discord: only a guild command carries its server's id.
    ...(c.guildId === null ? {} : { guild_id: c.guildId }),
  };
}

// --- What bots read (issue #40 §4) ----------------------------------------------------------------

/** Discord's channel type 0, a server text channel. */
export const CHANNEL_TYPE_TEXT_WIRE = 0;

/** Discord's guild text channel object. Gatehouse has no overwrites, categories or slow mode: their neutral values. */
export interface GuildChannelResource {
  id: string;
  type: 0;
  guild_id: string;
  name: string;
  topic: string | null;
  position: number;
  permission_overwrites: never[];
  nsfw: false;
  parent_id: null;
  last_message_id: null;
  rate_limit_per_user: 0;
  flags: 0;
}

export function presentGuildChannel(c: { id: string; serverId: string; name: string; topic: string | null; position: number }): GuildChannelResource {
  return {
    id: c.id,
    type: CHANNEL_TYPE_TEXT_WIRE,
    guild_id: c.serverId,
    name: c.name,
    topic: c.topic,
    position: c.position,
    permission_overwrites: [],
    nsfw: false,
    parent_id: null,
    last_message_id: null,
    rate_limit_per_user: 0,
    flags: 0,
  };
}

/** Discord's role object; a bot's managed role is `managed: true`. */
export interface RoleResource {
  id: string;
  name: string;
  color: number;
  hoist: false;
  icon: null;
  unicode_emoji: null;
  position: number;
  /** A 64-bit bit set as a decimal string. */
  permissions: string;
  managed: boolean;
  mentionable: false;
  flags: 0;
}

export function presentRole(r: { id: string; name: string; color: number; position: number; permissions: bigint; managedApplicationId: string | null }): RoleResource {
  return {
    id: r.id,
    name: r.name,
    color: r.color,
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position: r.position,
    permissions: r.permissions.toString(),
    managed: r.managedApplicationId !== null,
    mentionable: false,
    flags: 0,
  };
}

/** Discord's guild member object. `roles` never lists @everyone, as on Discord. */
export interface MemberResource {
  user: UserResource;
  nick: string | null;
  avatar: null;
  banner: null;
  roles: string[];
  joined_at: string;
  premium_since: null;
  deaf: false;
  mute: false;
  flags: 0;
  pending: false;
  communication_disabled_until: null;
}

export function presentMember(m: { nickname: string | null; roleIds: readonly string[]; joinedAt: number }, user: UserSource): MemberResource {
  return {
    user: presentUser(user),
    nick: m.nickname,
    avatar: null,
    banner: null,
    roles: [...m.roleIds],
    joined_at: new Date(m.joinedAt).toISOString(),
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
  };
}

/**
 * Discord's guild object of GET /guilds/{id}: the server (presentGuild) with its roles, and
 * Discord's neutral values for what Gatehouse has no concept of (no emojis, stickers, boosts,
 * AFK or system channels).
 */
export interface GuildDetailResource extends GuildResource {
  icon_hash: string | null;
  splash: null;
  discovery_splash: null;
  banner: null;
  description: null;
  afk_channel_id: null;
  afk_timeout: 0;
  verification_level: 0;
  default_message_notifications: 0;
  explicit_content_filter: 0;
  roles: RoleResource[];
  emojis: never[];
  stickers: never[];
  application_id: null;
  system_channel_id: null;
  system_channel_flags: 0;
  rules_channel_id: null;
  public_updates_channel_id: null;
  vanity_url_code: null;
  premium_tier: 0;
  premium_subscription_count: 0;
  preferred_locale: 'en-US';
  nsfw_level: 0;
  premium_progress_bar_enabled: false;
}

export function presentGuildDetail(s: Parameters<typeof presentGuild>[0], roles: ReadonlyArray<Parameters<typeof presentRole>[0]>): GuildDetailResource {
  const guild = presentGuild(s);
  return {
    ...guild,
    icon_hash: guild.icon,
    splash: null,
    discovery_splash: null,
    banner: null,
    description: null,
    afk_channel_id: null,
    afk_timeout: 0,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: roles.map(presentRole),
    emojis: [],
    stickers: [],
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    public_updates_channel_id: null,
    vanity_url_code: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: 'en-US',
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
  };
}

import type { Transaction } from 'kysely';
import type { Acting, Who } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { AccessError, ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { issueSecret } from '../../core/secrets.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { DomainEvent, FieldChange } from '../../events/domain-events.js';
import { changing, type Emit } from '../../events/event-bus.js';
import type { Database } from '../../storage/database.js';
import { requireBotChannelPermission, type BotPrincipal } from '../applications/bots.service.js';
import type { Channel } from '../directory/channels.js';
import { getChannel } from '../directory/channels.service.js';
import { checkAvatarUrl } from '../directory/people.js';
import type { Server } from '../directory/servers.js';
import { getServer, getServerChannels, memberPermissions } from '../directory/servers.service.js';
import { releaseUploadedImage, storeUploadedImage } from '../resources/uploaded-images.service.js';
import {
  deleteWebhook,
  findWebhook,
  insertWebhookCounted,
  listChannelWebhooks,
  listIncomingWebhooksOfApplication,
  listWebhooksWithCreators,
  updateWebhook,
} from './webhooks.repository.js';
import { checkWebhookName, WEBHOOKS_PER_CHANNEL, type Webhook, type WebhookWithCreator } from './webhooks.js';

/**
 * Creating and managing incoming webhooks (issue #5 "Create", "Manage with bot credentials",
 * "Regenerate"; SPEC §4: people create them too, from the Integrations pages). What people and
 * bots do takes the Actor and checks SPEC §5.8 (Manage webhooks) here, so the pages and the API
 * routes make one call each. updateWebhookSettings, removeWebhook and regenerateWebhookToken act
 * on a webhook already in hand: its token's holder (webhook-messages.service.ts) or a checked actor.
 */

/** A webhook together with its token: returned only by creation and regeneration (shown once). */
export interface IssuedWebhook {
  webhook: Webhook;
  token: string;
}

/** Who creates a webhook: a person (applicationId null) or a bot account (its application). */
export interface WebhookCreator {
  userId: string;
  applicationId: string | null;
}

/** Fields of a create or update request; absent fields are left as they are. */
export interface WebhookInput {
  name?: string | undefined;
  /** null or "" removes the avatar. */
  avatarUrl?: string | null | undefined;
  /** Discord's `avatar`: image data (`data:image/png;base64,…`) to upload, or null to remove (issue #42 §3); wins over avatarUrl. */
  avatar?: unknown;
}

/** SPEC §5.8: creating and managing webhooks needs Manage webhooks; creating also View channel. */
const CREATE_BITS = Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL;
const MANAGE_BITS = Permission.MANAGE_WEBHOOKS;

function checkedName(deps: Deps, raw: string | undefined): string {
  if (raw === undefined) throw invalidField(['name'], 'BASE_TYPE_REQUIRED', 'This field is required');
  const name = checkWebhookName(raw, deps.config.serviceName);
  if (!name.ok) throw invalidField(['name'], name.code, name.message);
  return name.value;
}

function checkedAvatar(raw: string | null): string | null {
  const avatar = checkAvatarUrl(raw);
  if (!avatar.ok) throw invalidField(['avatarUrl'], avatar.code, avatar.message);
  return avatar.value;
}

/** Who a new webhook records as its creator: a person, or a bot with its application. */
function creatorOf(actor: Actor): WebhookCreator {
  // The operator has no account to record; no CLI command creates webhooks.
  if (actor.kind === 'operator') throw ApiErrors.missingAccess();
  return { userId: actor.id, applicationId: actor.kind === 'bot' ? actor.applicationId : null };
}

/** 403 50013 as Discord words it; an AccessError, so a page shows it as an error page, not beside a form. */
function missingPermissions(): AccessError {
  return new AccessError(403, 50013, 'Missing Permissions');
}

/** What the actor holds in a server: undefined for a non-member; everything for the operator. */
async function heldBy(deps: Deps, actor: Actor, serverId: string): Promise<bigint | undefined> {
  return actor.kind === 'operator' ? ~0n : memberPermissions(deps, serverId, actor.id);
}

/**
 * Creates a webhook in a server text channel as `actor`, who needs Manage webhooks and View
 * channel there (SPEC §5.8): a channel of a server they are not in → 404 10003, a member without
 * them → 403 50013. The rest is insertWebhook's.
 */
export async function createWebhook(deps: Deps, acting: Acting, channel: Channel, input: WebhookInput): Promise<IssuedWebhook> {
  const actor = acting.actor;
  // Direct-message channels have no server, hence no Manage webhooks to hold.
  if (channel.serverId === null) throw ApiErrors.missingPermissions();
  const held = await heldBy(deps, actor, channel.serverId);
  if (held === undefined) throw new AccessError(404, 10003, 'Unknown Channel');
  if ((held & CREATE_BITS) !== CREATE_BITS) throw missingPermissions();
  return insertWebhook(deps, acting, channel, creatorOf(actor), input);
}

/**
 * Writes a new webhook for a creator whose right was checked. The token is drawn here, returned
 * once and stored only as its SHA-256. Bad input → 50035 at the field; a channel that already
 * has 10 → 30007, decided atomically by the counter so that racing creations never make an 11th
 * (SPEC §8).
 */
async function insertWebhook(deps: Deps, acting: Acting, channel: Channel, creator: WebhookCreator, input: WebhookInput): Promise<IssuedWebhook> {
  if (channel.serverId === null) throw ApiErrors.missingPermissions();
  const { webhook, token } = newWebhook(deps, channel.id, channel.serverId, creator, { name: checkedName(deps, input.name), avatarUrl: checkedAvatar(input.avatarUrl ?? null) });
  // Issue #42 §3: an uploaded avatar is stored under the new id before the row names it.
  if (input.avatar !== undefined && input.avatar !== null) webhook.avatarUrl = await storeUploadedImage(deps, 'avatar', 'avatars', webhook.id, input.avatar);
  // Issue #37 §2: the audit row commits with the webhook; a full channel writes neither.
  const inserted = await changing(deps, acting, async (trx, emit) => {
    if (!(await insertWebhookCounted(trx, webhook))) return false;
    emit(createdEvent(webhook));
    return true;
  }).catch(async (error: unknown) => {
    await releaseUploadedImage(deps, webhook.avatarUrl, null);
    throw error;
  });
  if (!inserted) {
    await releaseUploadedImage(deps, webhook.avatarUrl, null);
    // The channel may have been deleted meanwhile; otherwise it is full.
    if (!(await getChannel(deps, channel.id))) throw ApiErrors.unknownChannel();
    throw ApiErrors.tooManyWebhooks();
  }
  return { webhook, token };
}

/**
 * Creates a webhook inside the caller's transaction (issue #23: the code exchange of a
 * `webhook.incoming` authorization), with a name and avatar the caller has already checked.
 * Undefined, with nothing written, when the channel is full (SPEC §8) or gone: the caller
 * decides what that means for its own answer. Reads nothing outside the transaction.
 */
export async function createWebhookInTransaction(
  deps: Deps,
  acting: Acting,
  trx: Transaction<Database>,
  channel: Channel & { serverId: string },
  creator: WebhookCreator,
  checked: { name: string; avatarUrl: string | null },
): Promise<(IssuedWebhook & { events: DomainEvent[] }) | undefined> {
  const { webhook, token } = newWebhook(deps, channel.id, channel.serverId, creator, checked);
  if (!(await insertWebhookCounted(trx, webhook))) return undefined;
  // Issue #37 §2: recorded in the caller's transaction; the caller delivers `events` once it committed.
  const events: DomainEvent[] = [createdEvent(webhook)];
  await deps.bus.recordWith(trx, acting, events);
  return { webhook, token, events };
}

function createdEvent(webhook: Webhook): DomainEvent {
  return { type: 'webhook.created', serverId: webhook.serverId, webhookId: webhook.id, channelId: webhook.channelId, name: webhook.name };
}

/** Whether a channel has room for one more webhook (SPEC §8), for a check before anything is written. */
export async function channelHasWebhookRoom(deps: Deps, channelId: string): Promise<boolean> {
  return (await listChannelWebhooks(deps.db, channelId)).length < WEBHOOKS_PER_CHANNEL;
}

/**
 * Renames a webhook or changes its avatar; never its token. 10015 when it no longer exists.
 * `acting` is whoever was let through: a checked actor, or the webhook's own token holder.
 * Emits webhook.updated with each field that changed, old and new (none changed: no event).
 */
export async function updateWebhookSettings(deps: Deps, acting: Acting<Who>, webhook: Webhook, input: WebhookInput): Promise<Webhook> {
  const changes: { name?: string; avatarUrl?: string | null } = {};
  if (input.name !== undefined) changes.name = checkedName(deps, input.name);
  if (input.avatarUrl !== undefined) changes.avatarUrl = checkedAvatar(input.avatarUrl);
  // Issue #42 §3: stored before the row names it; the blob it replaces goes once the row no longer does.
  if (input.avatar !== undefined) changes.avatarUrl = input.avatar === null ? null : await storeUploadedImage(deps, 'avatar', 'avatars', webhook.id, input.avatar);
  const fieldChanges: FieldChange[] = [];
  if (changes.name !== undefined && changes.name !== webhook.name) fieldChanges.push({ key: 'name', old: webhook.name, new: changes.name });
  // Discord's key for a webhook's avatar; here it is the URL (docs/webhooks-management.md).
  if (changes.avatarUrl !== undefined && changes.avatarUrl !== webhook.avatarUrl) fieldChanges.push({ key: 'avatar_url', old: webhook.avatarUrl, new: changes.avatarUrl });
  try {
    await changing(deps, acting, async (trx, emit) => {
      if (!(await updateWebhook(trx, webhook.id, changes))) throw ApiErrors.unknownWebhook();
      if (fieldChanges.length > 0) emit({ type: 'webhook.updated', serverId: webhook.serverId, webhookId: webhook.id, channelId: webhook.channelId, changes: fieldChanges });
    });
  } catch (error) {
    if (changes.avatarUrl !== undefined) await releaseUploadedImage(deps, changes.avatarUrl, webhook.avatarUrl);
    throw error;
  }
  if (changes.avatarUrl !== undefined) await releaseUploadedImage(deps, webhook.avatarUrl, changes.avatarUrl);
  return { ...webhook, ...changes };
}

/** Deletes a webhook and frees its slot; its messages stay in the channel. 10015 when already gone. Emits webhook.deleted. */
export async function removeWebhook(deps: Deps, acting: Acting<Who>, webhook: Pick<Webhook, 'id' | 'serverId' | 'channelId' | 'name'> & { avatarUrl?: string | null }): Promise<void> {
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteWebhook(trx, webhook.id))) throw ApiErrors.unknownWebhook();
    emit({ type: 'webhook.deleted', serverId: webhook.serverId, webhookId: webhook.id, channelId: webhook.channelId, name: webhook.name });
  });
  // Issue #42 §3: its uploaded avatar's blob is its own (uploaded-images.ts imageBlobKey).
  await releaseUploadedImage(deps, webhook.avatarUrl, null);
}

/**
 * Issues a new token for a webhook (SPEC §3: "a new URL is generated … old URL invalid"). One
 * UPDATE replaces the only stored hash, so the old URL stops working at once (50027). Emits
 * webhook.token_regenerated, which names the webhook and never the token.
 */
export async function regenerateWebhookToken(deps: Deps, acting: Acting<Who>, webhook: Webhook): Promise<IssuedWebhook> {
  const token = issueSecret(deps.random, 'webhookToken');
  await changing(deps, acting, async (trx, emit) => {
    if (!(await updateWebhook(trx, webhook.id, { tokenHash: token.hash }))) throw ApiErrors.unknownWebhook();
    emit({ type: 'webhook.token_regenerated', serverId: webhook.serverId, webhookId: webhook.id, channelId: webhook.channelId });
  });
  return { webhook: { ...webhook, tokenHash: token.hash }, token: token.plain };
}

/** A webhook of this server (and channel, when given), or undefined: ids of elsewhere are "not found". */
export async function findScopedWebhook(deps: Deps, scope: { serverId: string; channelId?: string | undefined }, webhookId: string): Promise<Webhook | undefined> {
  const webhook = isSnowflake(webhookId) ? await findWebhook(deps.db, webhookId) : undefined;
  if (!webhook || webhook.serverId !== scope.serverId) return undefined;
  if (scope.channelId !== undefined && webhook.channelId !== scope.channelId) return undefined;
  return webhook;
}

// --- As an actor ---------------------------------------------------------------------------

/**
 * A webhook the actor may manage: Manage webhooks in the webhook's server (SPEC §5.8). Unknown
 * ids and webhooks of servers the actor is not in answer alike, 404 10015, so they do not leak.
 */
async function webhookToManage(deps: Deps, actor: Actor, webhookId: string): Promise<Webhook> {
  const webhook = isSnowflake(webhookId) ? await findWebhook(deps.db, webhookId) : undefined;
  if (!webhook) throw ApiErrors.unknownWebhook();
  const held = await heldBy(deps, actor, webhook.serverId);
  if (held === undefined) throw new AccessError(404, 10015, 'Unknown Webhook');
  if ((held & MANAGE_BITS) !== MANAGE_BITS) throw missingPermissions();
  return webhook;
}

/**
 * POST /channels/{id}/webhooks: the bot needs Manage webhooks and View channel there (403 50013);
 * channels of servers it is not in are 404 10003. The webhook belongs to the bot's application.
 * `acting` is the bot's own, which the route builds from `bot` (bot-auth.routes.ts botActing).
 */
export async function botCreateWebhook(deps: Deps, acting: Acting, bot: BotPrincipal, channelId: string, input: WebhookInput): Promise<IssuedWebhook> {
  const { channel } = await requireBotChannelPermission(deps, bot, channelId, CREATE_BITS);
  return insertWebhook(deps, acting, channel, { userId: bot.botUserId, applicationId: bot.application.id }, input);
}

/** GET /channels/{id}/webhooks: every webhook of the channel, whoever created it. */
export async function botListChannelWebhooks(deps: Deps, bot: BotPrincipal, channelId: string): Promise<Webhook[]> {
  const { channel } = await requireBotChannelPermission(deps, bot, channelId, MANAGE_BITS);
  return listChannelWebhooks(deps.db, channel.id);
}

export async function getWebhookAs(deps: Deps, actor: Actor, webhookId: string): Promise<Webhook> {
  return webhookToManage(deps, actor, webhookId);
}

export async function updateWebhookAs(deps: Deps, acting: Acting, webhookId: string, input: WebhookInput): Promise<Webhook> {
  return updateWebhookSettings(deps, acting, await webhookToManage(deps, acting.actor, webhookId), input);
}

export async function deleteWebhookAs(deps: Deps, acting: Acting, webhookId: string): Promise<void> {
  await removeWebhook(deps, acting, await webhookToManage(deps, acting.actor, webhookId));
}

export async function regenerateWebhookTokenAs(deps: Deps, acting: Acting, webhookId: string): Promise<IssuedWebhook> {
  return regenerateWebhookToken(deps, acting, await webhookToManage(deps, acting.actor, webhookId));
}

// --- For the Integrations pages ---------------------------------------------------------------

/** What an Integrations page lists (the caller has checked access). */
export interface IntegrationsData {
  server: Server;
  /** The server's channels, for the channel select and the channel column. */
  channels: Channel[];
  /** The server's webhooks, or only the channel's on Channel settings → Integrations. */
  webhooks: WebhookWithCreator[];
}

export async function loadIntegrations(deps: Deps, serverId: string, channelId?: string): Promise<IntegrationsData | undefined> {
  const server = isSnowflake(serverId) ? await getServer(deps, serverId) : undefined;
  if (!server) return undefined;
  const [channels, webhooks] = await Promise.all([
    getServerChannels(deps, serverId),
    listWebhooksWithCreators(deps.db, channelId === undefined ? { serverId } : { serverId, channelId }),
  ]);
  return { server, channels, webhooks };
}

/** A channel of this server for the create form, or a 50035 at `channelId`. */
export async function channelOfServer(deps: Deps, serverId: string, channelId: string | undefined): Promise<Channel> {
  const channel = channelId && isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel || channel.serverId !== serverId) throw invalidField(['channelId'], 'BASE_TYPE_CHOICE_NOT_VALID', 'Choose a channel of this server.');
  return channel;
}

/** A webhook row with a fresh token (stored as its hash; the plain token is returned once). */
function newWebhook(deps: Deps, channelId: string, serverId: string, creator: WebhookCreator, checked: { name: string; avatarUrl: string | null }): IssuedWebhook {
  const token = issueSecret(deps.random, 'webhookToken');
  const webhook: Webhook = {
    id: deps.ids.next(),
    tokenHash: token.hash,
    serverId,
    channelId,
    name: checked.name,
    avatarUrl: checked.avatarUrl,
    applicationId: creator.applicationId,
    creatorId: creator.userId,
    createdAt: deps.clock.now(),
    githubSecretSealed: null,
  };
  return { webhook, token: token.plain };
}

/** A webhook by id, token unchecked: for the CDN route of its avatar (resources/cdn.service.ts). */
export function getWebhook(deps: Deps, id: string): Promise<Webhook | undefined> {
  return findWebhook(deps.db, id);
}

/** The webhooks an app created through `webhook.incoming` (issue #39: what deleting the app removes). */
export function incomingWebhooksOf(deps: Deps, app: { id: string; botUserId: string | null }): Promise<Webhook[]> {
  return listIncomingWebhooksOfApplication(deps.db, app.id, app.botUserId);
}

/**
 * A step of deleting an app (issue #39), in its caller's transaction: the webhooks its
 * `webhook.incoming` authorizations created are deleted (their URLs answer 404 at once), each a
 * webhook.deleted; those its bot created through the API stay, as when a bot is removed from a
 * server (issue #4). Returns the deleted webhooks.
 */
export async function deleteIncomingWebhooksOf(trx: Transaction<Database>, emit: Emit, app: { id: string; botUserId: string | null }): Promise<Webhook[]> {
  const webhooks = await listIncomingWebhooksOfApplication(trx, app.id, app.botUserId);
  const deleted: Webhook[] = [];
  for (const webhook of webhooks) {
    if (!(await deleteWebhook(trx, webhook.id))) continue;
    emit({ type: 'webhook.deleted', serverId: webhook.serverId, webhookId: webhook.id, channelId: webhook.channelId, name: webhook.name });
    deleted.push(webhook);
  }
  return deleted;
}

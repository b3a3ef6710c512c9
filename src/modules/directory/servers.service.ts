import { DEFAULT_EVERYONE_PERMISSIONS } from '../../core/permissions.js';
import type { Deps } from '../../deps.js';
import { CHANNEL_TYPE_TEXT } from './channels.js';
import { insertChannel, listChannels, listChannelsOfServers } from './channels.repository.js';
import { insertMember, listMembers } from './members.repository.js';
import type { MemberWithPerson } from './members.js';
import type { ListedInvite } from './invites.js';
import { listServerInvites } from './invites.service.js';
import type { ServerInvitation } from './invitations.js';
import { listServerInvitations } from './invitations.service.js';
import { throttleCreation } from './creation-throttle.js';
import { EVERYONE_ROLE_NAME, type Role } from './roles.js';
import { insertRole, listPermissionRows, listRoles } from './roles.repository.js';
import { DEFAULT_CHANNEL_NAME, validateServerName, type Server, type ServerContents } from './servers.js';
import {
  countServerContents,
  deleteServerRow,
  webhookAvatarUrlsIn,
  findServer,
  findServerByOwnerAndName,
  insertServer,
  listServersOfMember,
  saveMfaLevel,
  updateServer,
} from './servers.repository.js';
import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Channel } from './channels.js';
import { authorize, permissionsFrom } from './access.service.js';
import { isOperator } from './operators.service.js';
import { ServerAction, type MfaLevel } from './policy.js';
import { hasSecondFactor } from '../mfa/mfa.service.js';
import { checkMayCreate } from './people-admin.service.js';
import type { Actor } from '../../core/actor.js';
import type { Acting } from '../../core/acting.js';
import { checkHttpsImageUrl } from '../../core/checked.js';
import type { FieldChange } from '../../events/domain-events.js';
import { changing } from '../../events/event-bus.js';
import { releaseUploadedImage, releaseUploadedImages, storeUploadedImage } from '../resources/uploaded-images.service.js';
import { parseStoredImage } from '../resources/uploaded-images.js';

/** Re-exported: other modules ask the directory for a member's permissions here. */
export { memberPermissions } from './access.service.js';

/** A server as its member sees it in a list: with that member's computed permissions. */
export interface ServerForPerson {
  id: string;
  name: string;
  iconUrl: string | null;
  ownerId: string;
  permissions: bigint;
}

/** The servers a person belongs to, with their permissions there (GET /users/@me/servers). */
export async function listServersForPerson(deps: Deps, userId: string): Promise<ServerForPerson[]> {
  const servers = await listServersOfMember(deps.db, userId);
  const rows = await listPermissionRows(
    deps.db,
    userId,
    servers.map((s) => s.id),
  );
  return servers.map((server) => ({
    id: server.id,
    name: server.name,
    iconUrl: server.iconUrl,
    ownerId: server.ownerId,
    permissions: permissionsFrom(server, userId, rows),
  }));
}

/** A newly created server with what it starts with. */
export interface CreatedServer extends Server {
  everyoneRoleId: string;
  channels: Channel[];
}

/**
 * Creates a server with its @everyone role (id = server id, Discord's default permissions), the
 * owner's membership and a #general text channel, all or nothing. A person creates their own
 * server; the operator names its owner (`ownerId`); a bot creates none (50013). From the web
 * (`acting.address` known) it counts against the server creation limits per person and per
 * address (issue #36 §4, creation-throttle.ts); the CLI is not limited. Throws a 50035 (field
 * `name`) for a bad name, RateLimitedError (429) over a limit.
 */
export async function createServer(deps: Deps, acting: Acting<Actor>, input: { name: string; iconUrl?: string | null; ownerId?: string }): Promise<CreatedServer> {
  const ownerId = serverOwnerFor(acting.actor, input.ownerId);
  await checkMayCreate(deps, acting.actor, 'servers');
  const name = validateServerName(input.name, deps.config.serviceName);
  if (!name.ok) throw invalidField(['name'], name.code, name.message);
  if (acting.address !== null) await throttleCreation(deps.buckets, deps.clock.now(), 'servers', ownerId, acting.address);
  const now = deps.clock.now();
  const server: Server = { id: deps.ids.next(), name: name.value, iconUrl: input.iconUrl ?? null, ownerId, createdAt: now, mfaLevel: 0 };
  const general: Channel = { id: deps.ids.next(), serverId: server.id, type: CHANNEL_TYPE_TEXT, name: DEFAULT_CHANNEL_NAME, topic: null, position: 0, createdAt: now };
  await changing(deps, acting, async (trx, emit) => {
    await insertServer(trx, server);
    await insertRole(trx, {
      id: server.id,
      serverId: server.id,
      name: EVERYONE_ROLE_NAME,
      permissions: DEFAULT_EVERYONE_PERMISSIONS,
      color: 0,
      position: 0,
      managedApplicationId: null,
      createdAt: now,
    });
    await insertMember(trx, { serverId: server.id, userId: ownerId, joinedAt: now, joinedVia: 'created' });
    await insertChannel(trx, general);
    // Issue #37 §2: one event for the whole creation; its role, membership and #general come with it.
    emit({ type: 'server.created', serverId: server.id, ownerId });
  });
  return { ...server, everyoneRoleId: server.id, channels: [general] };
}

/** Who owns a server the actor creates: a person themselves, the operator whom they name. */
function serverOwnerFor(actor: Actor, ownerId: string | undefined): string {
  if (actor.kind === 'person' && (ownerId === undefined || ownerId === actor.id)) return actor.id;
  if (actor.kind === 'operator') {
    if (ownerId === undefined || !isSnowflake(ownerId)) throw invalidField(['owner'], 'BASE_TYPE_REQUIRED', 'A server created by the operator needs its owner.');
    return ownerId;
  }
  throw new ApiError(403, 50013, 'Only a person creates a server of their own.');
}

/** The name and icon changes between a server and its new values, as the audit log shows them. */
function serverChanges(server: Server, next: { name: string; iconUrl?: string | null }): FieldChange[] {
  const changes: FieldChange[] = [];
  if (next.name !== server.name) changes.push({ key: 'name', old: server.name, new: next.name });
  if (next.iconUrl !== undefined && next.iconUrl !== server.iconUrl) changes.push({ key: 'icon_url', old: server.iconUrl, new: next.iconUrl });
  return changes;
}

/** Writes a server's new name (and icon), with its `server.updated` event when something changed. */
async function saveServer(deps: Deps, acting: Acting<Actor>, serverId: string, next: { name: string; iconUrl?: string | null }): Promise<void> {
  const server = await findServer(deps.db, serverId);
  if (!server) throw ApiErrors.unknownServer();
  const changes = serverChanges(server, next);
  await changing(deps, acting, async (trx, emit) => {
    await updateServer(trx, serverId, next);
    // Issue #37 §2: a form saved unchanged changes nothing worth a row in the audit log.
    if (changes.length > 0) emit({ type: 'server.updated', serverId, changes });
  });
}

/** Renames a server; the actor needs Manage server. Throws 10004, 50013 or 50035 (a bad name). */
export async function renameServer(deps: Deps, acting: Acting<Actor>, serverId: string, rawName: string): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageServer);
  const name = validateServerName(rawName, deps.config.serviceName);
  if (!name.ok) throw invalidField(['name'], name.code, name.message);
  await saveServer(deps, acting, serverId, { name: name.value });
}

/**
 * Server settings → Overview (issue #24): the name and the icon URL (https, or empty for none:
 * core/checked.ts). Manage server. Throws 10004, 50013 or 50035 at `name` or `iconUrl`.
 */
export async function updateServerProfile(deps: Deps, acting: Acting<Actor>, serverId: string, input: { name: string; iconUrl: string }): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageServer);
  const name = validateServerName(input.name, deps.config.serviceName);
  if (!name.ok) throw invalidField(['name'], name.code, name.message);
  const icon = checkHttpsImageUrl(input.iconUrl);
  if (!icon.ok) throw invalidField(['iconUrl'], icon.code, icon.message);
  const before = await findServer(deps.db, serverId);
  // An uploaded icon (issue #42 §3) is no URL to type: an empty field keeps it; Remove removes it.
  const keep = icon.value === null && parseStoredImage(before?.iconUrl) !== undefined;
  await saveServer(deps, acting, serverId, { name: name.value, ...(keep ? {} : { iconUrl: icon.value }) });
  if (!keep) await releaseUploadedImage(deps, before?.iconUrl, icon.value);
}

/**
 * Uploads (image data, `data:image/png;base64,…`) or removes (null) a server's icon (issue #42 §3;
 * Discord's `icon` of Modify Guild). Manage server. Throws 10004, 50013, or 50035 at `field` with
 * nothing stored. The icon it replaces is deleted from the blob store once the server no longer names it.
 */
export async function setServerIcon(deps: Deps, acting: Acting<Actor>, serverId: string, data: unknown, field = 'icon'): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageServer);
  const server = await findServer(deps.db, serverId);
  if (!server) throw ApiErrors.unknownServer();
  const iconUrl = data === null ? null : await storeUploadedImage(deps, field, 'icons', serverId, data);
  try {
    await saveServer(deps, acting, serverId, { name: server.name, iconUrl });
  } catch (error) {
    await releaseUploadedImage(deps, iconUrl, server.iconUrl);
    throw error;
  }
  await releaseUploadedImage(deps, server.iconUrl, iconUrl);
}

export async function getServer(deps: Deps, serverId: string): Promise<Server | undefined> {
  return findServer(deps.db, serverId);
}

/** The server's channels in sidebar order. */
export async function getServerChannels(deps: Deps, serverId: string): Promise<Channel[]> {
  return listChannels(deps.db, serverId);
}

/** Everything the settings pages show about one server (the caller has checked access). */
export interface ServerSettingsData {
  server: Server;
  channels: Channel[];
  roles: Role[];
  members: MemberWithPerson[];
  invites: ListedInvite[];
  /** Pending invitations by username, with their senders (issue #36 §3). */
  invitations: ServerInvitation[];
}

export async function loadServerSettings(deps: Deps, serverId: string): Promise<ServerSettingsData | undefined> {
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) return undefined;
  const [channels, roles, members, invites, invitations] = await Promise.all([
    listChannels(deps.db, serverId),
    listRoles(deps.db, serverId),
    listMembers(deps.db, serverId),
    listServerInvites(deps, serverId),
    listServerInvitations(deps, serverId),
  ]);
  return { server, channels, roles, members, invites, invitations };
}

/** The home page: the person's servers, each with its channels. */
export async function homeOverview(deps: Deps, userId: string): Promise<Array<Server & { channels: Channel[] }>> {
  const servers = await listServersOfMember(deps.db, userId);
  const channels = await listChannelsOfServers(
    deps.db,
    servers.map((s) => s.id),
  );
  return servers.map((s) => ({ ...s, channels: channels.filter((c) => c.serverId === s.id) }));
}

/** A server of this owner with exactly this name, oldest first (seed-demo uses it to stay idempotent). */
export async function findOwnedServerByName(deps: Deps, ownerId: string, name: string): Promise<Server | undefined> {
  return findServerByOwnerAndName(deps.db, ownerId, name);
}


const onlyOwnerDeletes = () => new ApiError(403, 50013, 'Only the server\'s owner can delete it.');

/**
 * A server the actor may delete: its owner, or the operator. A non-member gets 10004, as for a
 * server that does not exist; other members learn nothing more than "not yours" (50013).
 */
async function deletableServer(deps: Deps, serverId: string, actor: Actor): Promise<Server> {
  // Issue #39: the operator is the CLI or an instance administrator (operators.service.ts).
  const asOperator = await isOperator(deps, actor);
  if (!asOperator) await authorize(deps, actor, serverId, ServerAction.view);
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) throw ApiErrors.unknownServer();
  if (!asOperator && (actor.kind === 'operator' || server.ownerId !== actor.id)) throw onlyOwnerDeletes();
  return server;
}

/** What deleting the server would remove, for its owner's confirmation page (issue #21 §3). Throws 10004 / 50013. */
export async function serverDeletionPreview(deps: Deps, serverId: string, actor: Actor): Promise<{ server: Server; contents: ServerContents }> {
  const server = await deletableServer(deps, serverId, actor);
  return { server, contents: await countServerContents(deps.db, serverId) };
}

/**
 * Deletes a server and everything in it (issue #21 §3: an owner can delete their server). Only the
 * owner, as on Discord; the confirmation page states what goes with it. Open live views of its
 * channels end at once. Throws 10004 / 50013.
 */
export async function deleteServer(deps: Deps, acting: Acting<Actor>, serverId: string): Promise<void> {
  const server = await deletableServer(deps, serverId, acting.actor);
  let images: (string | null)[] = [];
  await changing(deps, acting, async (trx, emit) => {
    images = [server.iconUrl, ...(await webhookAvatarUrlsIn(trx, { serverId }))];
    if (!(await deleteServerRow(trx, serverId))) throw ApiErrors.unknownServer();
    emit({ type: 'server.deleted', serverId, name: server.name });
    // Issue #21 §5: open live views of its channels end at once.
    emit({ type: 'access.changed', topicId: serverId });
  });
  // Issue #42 §3: its uploaded icon and its webhooks' uploaded avatars are theirs alone (uploaded-images.ts imageBlobKey).
  await releaseUploadedImages(deps, images);
}

/** Enabling the MFA level needs the owner's own second factor, as on Discord. */
const MFA_LEVEL_NEEDS_OWN_2FA = 'Turn on two-factor authentication for your own account (Settings → Security) before requiring it of your moderators.';

/**
 * Server settings → Overview: the server's MFA level (issue #38 §4; Discord's guild `mfa_level`,
 * changed by the owner only). Turning it on needs the owner's own second factor (Discord's rule);
 * turning it off never does, so an owner who lost theirs is not locked out of the setting. Throws
 * 10004 for a non-member, 50013 for anyone but the owner, 50035 at `level`.
 */
export async function setServerMfaLevel(deps: Deps, acting: Acting<Actor>, serverId: string, rawLevel: string): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.view);
  const server = await findServer(deps.db, serverId);
  if (!server) throw ApiErrors.unknownServer();
  const actor = acting.actor;
  if (actor.kind !== 'operator' && !(actor.kind === 'person' && actor.id === server.ownerId)) {
    throw new ApiError(403, 50013, 'Only the server owner can change whether moderators need two-factor authentication.');
  }
  if (rawLevel !== '0' && rawLevel !== '1') throw invalidField(['level'], 'BASE_TYPE_CHOICES', 'Value must be one of (0, 1).');
  const level: MfaLevel = rawLevel === '1' ? 1 : 0;
  if (level === server.mfaLevel) return;
  if (level === 1 && actor.kind === 'person' && !(await hasSecondFactor(deps, actor.id))) throw invalidField(['level'], 'MFA_REQUIRED', MFA_LEVEL_NEEDS_OWN_2FA);
  await changing(deps, acting, async (trx, emit) => {
    await saveMfaLevel(trx, serverId, level);
    emit({ type: 'server.updated', serverId, changes: [{ key: 'mfa_level', old: server.mfaLevel, new: level }] });
    // Moderators without a second factor lose (or regain) their elevated permissions at once.
    emit({ type: 'access.changed', topicId: serverId });
  });
}

import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toId, toNum } from '../../storage/types.js';
import type { ServersTable } from './directory.table.js';
import type { Server, ServerContents } from './servers.js';

type Db = Kysely<Database> | Transaction<Database>;

export function toServer(row: Selectable<ServersTable>): Server {
  return { id: toId(row.id), name: row.name, iconUrl: row.icon_url, ownerId: toId(row.owner_id), createdAt: toNum(row.created_at), mfaLevel: toNum(row.mfa_level) === 1 ? 1 : 0 };
}

export async function insertServer(db: Db, server: Server): Promise<void> {
  await db
    .insertInto('servers')
    .values({ id: server.id, name: server.name, icon_url: server.iconUrl, owner_id: server.ownerId, created_at: server.createdAt, mfa_level: server.mfaLevel })
    .execute();
}

// Prepared (storage/prepared.ts): every permission check in a server reads it (access.service.ts memberStanding).
const serverById = prepareQuery<{ id: string }>()((db, v) => db.selectFrom('servers').selectAll().where('id', '=', v.id));

/** Callers check `isSnowflake` first so bad input never reaches SQL. */
export async function findServer(db: Db, id: string): Promise<Server | undefined> {
  const row = await firstRow(serverById(db, { id }));
  return row ? toServer(row) : undefined;
}

/** The servers a person is a member of, oldest first. */
export async function listServersOfMember(db: Db, userId: string): Promise<Server[]> {
  const rows = await db
    .selectFrom('servers')
    .innerJoin('members', 'members.server_id', 'servers.id')
    .selectAll('servers')
    .where('members.user_id', '=', userId)
    .orderBy('servers.id')
    .execute();
  return rows.map(toServer);
}

export async function updateServer(db: Db, id: string, changes: { name?: string; iconUrl?: string | null }): Promise<void> {
  const set: { name?: string; icon_url?: string | null } = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.iconUrl !== undefined) set.icon_url = changes.iconUrl;
  if (Object.keys(set).length === 0) return;
  await db.updateTable('servers').set(set).where('id', '=', id).execute();
}

/** Server names, for CLI idempotence (seed-demo finds its server by name and owner). */
export async function findServerByOwnerAndName(db: Db, ownerId: string, name: string): Promise<Server | undefined> {
  const row = await db.selectFrom('servers').selectAll().where('owner_id', '=', ownerId).where('name', '=', name).orderBy('id').executeTakeFirst();
  return row ? toServer(row) : undefined;
}

export async function countServerContents(db: Db, serverId: string): Promise<ServerContents> {
  const count = (n: unknown) => Number(n ?? 0);
  const [channels, messages, webhooks, roles, members, installs, invitations, invites] = await Promise.all([
    db.selectFrom('channels').select((eb) => eb.fn.countAll().as('n')).where('server_id', '=', serverId).executeTakeFirst(),
    db
      .selectFrom('messages')
      .innerJoin('channels', 'channels.id', 'messages.channel_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('channels.server_id', '=', serverId)
      .executeTakeFirst(),
    db.selectFrom('webhooks').select((eb) => eb.fn.countAll().as('n')).where('server_id', '=', serverId).executeTakeFirst(),
    db.selectFrom('roles').select((eb) => eb.fn.countAll().as('n')).where('server_id', '=', serverId).where('id', '<>', serverId).executeTakeFirst(),
    db
      .selectFrom('members')
      .innerJoin('servers', 'servers.id', 'members.server_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('members.server_id', '=', serverId)
      .whereRef('members.user_id', '<>', 'servers.owner_id')
      .executeTakeFirst(),
    db.selectFrom('server_installs').select((eb) => eb.fn.countAll().as('n')).where('server_id', '=', serverId).executeTakeFirst(),
    db.selectFrom('member_invitations').select((eb) => eb.fn.countAll().as('n')).where('server_id', '=', serverId).executeTakeFirst(),
    db.selectFrom('invites').select((eb) => eb.fn.countAll().as('n')).where('server_id', '=', serverId).executeTakeFirst(),
  ]);
  return {
    channels: count(channels?.n),
    messages: count(messages?.n),
    webhooks: count(webhooks?.n),
    roles: count(roles?.n),
    members: count(members?.n),
    botInstalls: count(installs?.n),
    pendingInvitations: count(invitations?.n),
    inviteLinks: count(invites?.n),
  };
}

/**
 * Deletes a server; its channels (and their messages), webhooks, roles, memberships, bot installs,
 * invitations and invite links go with it by the foreign keys' ON DELETE CASCADE.
 */
export async function deleteServerRow(db: Db, serverId: string): Promise<boolean> {
  const result = await db.deleteFrom('servers').where('id', '=', serverId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * The avatar_url of every webhook in a server or one channel: what deleting it removes with them
 * (ON DELETE CASCADE), read in the deletion's transaction so their uploaded avatars' blobs can go
 * after it commits (issue #42 §3).
 */
export async function webhookAvatarUrlsIn(db: Db, where: { serverId: string } | { channelId: string }): Promise<string[]> {
  const query = db.selectFrom('webhooks').select('avatar_url').where('avatar_url', 'is not', null);
  const rows = await ('serverId' in where ? query.where('server_id', '=', where.serverId) : query.where('channel_id', '=', where.channelId)).execute();
  return rows.map((r) => r.avatar_url).filter((v): v is string => v !== null);
}

/** Sets the server's MFA level (issue #38 §4). */
export async function saveMfaLevel(db: Db, serverId: string, mfaLevel: 0 | 1): Promise<void> {
  await db.updateTable('servers').set({ mfa_level: mfaLevel }).where('id', '=', serverId).execute();
}

/** One page of servers for the operator (issue #39), oldest first, optionally one owner's; `limit + 1` rows are read so the caller knows whether another page follows. */
export async function listServersPage(db: Db, filter: { ownerId?: string | undefined; after?: string | undefined; limit: number }): Promise<Server[]> {
  let query = db.selectFrom('servers').selectAll();
  if (filter.ownerId !== undefined) query = query.where('owner_id', '=', filter.ownerId);
  if (filter.after !== undefined) query = query.where('id', '>', filter.after);
  const rows = await query.orderBy('id').limit(filter.limit + 1).execute();
  return rows.map(toServer);
}

/**
 * Makes `toUserId` the server's owner, in one UPDATE guarded by the current owner, so two
 * transfers at once cannot both succeed. False when the owner had already changed (or the server is gone).
 */
export async function saveOwner(db: Db, serverId: string, fromUserId: string, toUserId: string): Promise<boolean> {
  const result = await db.updateTable('servers').set({ owner_id: toUserId }).where('id', '=', serverId).where('owner_id', '=', fromUserId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toBool, toId, toIdOrNull, toNum } from '../../storage/types.js';
import { CHANNEL_TYPE_DM, type DmParty } from './dms.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A direct-message channel's two users, stored low id first (dm_channels). */
export interface DmPair {
  channelId: string;
  userLow: string;
  userHigh: string;
}

/** One conversation of a person, with its newest message id (null when empty). */
export interface DmConversationRow {
  channelId: string;
  other: DmParty;
  lastMessageId: string | null;
}

/** Low id first, as dm_channels stores pairs: one row per pair whoever opened it. */
export function orderPair(a: string, b: string): [string, string] {
  return BigInt(a) < BigInt(b) ? [a, b] : [b, a];
}

export async function findDmChannelIdForPair(db: Db, userA: string, userB: string): Promise<string | undefined> {
  const [low, high] = orderPair(userA, userB);
  const row = await db.selectFrom('dm_channels').select('channel_id').where('user_low', '=', low).where('user_high', '=', high).executeTakeFirst();
  return row ? toId(row.channel_id) : undefined;
}

export async function findDmPair(db: Db, channelId: string): Promise<DmPair | undefined> {
  const row = await db.selectFrom('dm_channels').selectAll().where('channel_id', '=', channelId).executeTakeFirst();
  return row ? { channelId: toId(row.channel_id), userLow: toId(row.user_low), userHigh: toId(row.user_high) } : undefined;
}

/**
 * Writes the channel row (type 1, no server, empty name) and its pair. Run it in a transaction:
 * a concurrent open of the same pair fails on dm_channels_pair_unique and rolls back both rows.
 */
export async function insertDmChannel(db: Db, dm: { channelId: string; userA: string; userB: string; createdAt: number }): Promise<void> {
  const [low, high] = orderPair(dm.userA, dm.userB);
  await db.insertInto('channels').values({ id: dm.channelId, server_id: null, type: CHANNEL_TYPE_DM, name: '', topic: null, position: 0, created_at: dm.createdAt }).execute();
  await db.insertInto('dm_channels').values({ channel_id: dm.channelId, user_low: low, user_high: high }).execute();
}

export async function findParty(db: Db, userId: string): Promise<DmParty | undefined> {
  const row = await db.selectFrom('users').select(['id', 'username', 'name', 'avatar_url', 'bot', 'application_id']).where('id', '=', userId).executeTakeFirst();
  return row ? { id: toId(row.id), username: row.username, name: row.name, avatarUrl: row.avatar_url, bot: toBool(row.bot), applicationId: toIdOrNull(row.application_id) } : undefined;
}

/**
 * Whether `userA` is a member of a server that `userB` joined in one of the ways `bJoinedVia`
 * lists (the bot DM rule passes the person's own acts: dms.service botMayMessage).
 */
export async function shareAServer(db: Db, userA: string, userB: string, bJoinedVia: readonly string[]): Promise<boolean> {
  if (bJoinedVia.length === 0) return false;
  const row = await db
    .selectFrom('members as a')
    .innerJoin('members as b', 'b.server_id', 'a.server_id')
    .select('a.server_id')
    .where('a.user_id', '=', userA)
    .where('b.user_id', '=', userB)
    .where('b.joined_via', 'in', bJoinedVia)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Every conversation `userId` is part of, with the other party and the newest message id. */
export async function listDmConversations(db: Db, userId: string): Promise<DmConversationRow[]> {
  const rows = await db
    .selectFrom('dm_channels')
    .innerJoin('users', (join) =>
      join.on((eb) =>
        eb.or([
          eb.and([eb('dm_channels.user_low', '=', userId), eb('users.id', '=', eb.ref('dm_channels.user_high'))]),
          eb.and([eb('dm_channels.user_high', '=', userId), eb('users.id', '=', eb.ref('dm_channels.user_low'))]),
        ]),
      ),
    )
    .select((eb) => [
      'dm_channels.channel_id',
      'users.id',
      'users.username',
      'users.name',
      'users.avatar_url',
      'users.bot',
      'users.application_id',
      // messages (channel_id, id) index: one index probe per conversation.
      eb.selectFrom('messages').select((m) => m.fn.max('messages.id').as('m')).whereRef('messages.channel_id', '=', 'dm_channels.channel_id').as('last_message_id'),
    ])
    .where((eb) => eb.or([eb('dm_channels.user_low', '=', userId), eb('dm_channels.user_high', '=', userId)]))
    .execute();
  return rows.map((row) => ({
    channelId: toId(row.channel_id),
    other: { id: toId(row.id), username: row.username, name: row.name, avatarUrl: row.avatar_url, bot: toBool(row.bot), applicationId: toIdOrNull(row.application_id) },
    lastMessageId: row.last_message_id === null || row.last_message_id === undefined ? null : toId(row.last_message_id as string | bigint),
  }));
}

/** The content of a few messages by id (conversation previews). */
export async function findMessageContents(db: Db, ids: readonly string[]): Promise<Map<string, { content: string; hasEmbeds: boolean; createdAt: number }>> {
  const out = new Map<string, { content: string; hasEmbeds: boolean; createdAt: number }>();
  if (ids.length === 0) return out;
  const rows = await db.selectFrom('messages').select(['id', 'content', 'embeds', 'created_at']).where('id', 'in', ids).execute();
  for (const row of rows) out.set(toId(row.id), { content: row.content, hasEmbeds: row.embeds !== '[]' && row.embeds !== '', createdAt: toNum(row.created_at) });
  return out;
}

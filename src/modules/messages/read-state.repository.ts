import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The newest message id this person has read in this channel; undefined before their first visit. */
export async function findLastRead(db: Db, userId: string, channelId: string): Promise<string | undefined> {
  const row = await db.selectFrom('channel_reads').select('last_read_id').where('user_id', '=', userId).where('channel_id', '=', channelId).executeTakeFirst();
  return row ? toId(row.last_read_id) : undefined;
}

/** Moves the person's read mark forward to `messageId` (never back: an older page read later changes nothing). */
export async function markRead(db: Db, userId: string, channelId: string, messageId: string): Promise<void> {
  await db
    .insertInto('channel_reads')
    .values({ user_id: userId, channel_id: channelId, last_read_id: messageId })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'channel_id'])
        .doUpdateSet({ last_read_id: (eb) => eb.ref('excluded.last_read_id') })
        .where('channel_reads.last_read_id', '<', sql<string>`excluded.last_read_id`),
    )
    .execute();
}

/**
 * The channels of a server holding a message by someone else newer than what this person has
 * read (all of them before a first visit): one statement for the channel list, each EXISTS an
 * index range probe on messages (channel_id, id) starting after the read mark.
 */
export async function listUnreadChannelIds(db: Db, userId: string, serverId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('channels')
    .leftJoin('channel_reads', (join) => join.onRef('channel_reads.channel_id', '=', 'channels.id').on('channel_reads.user_id', '=', userId))
    .select('channels.id')
    .where('channels.server_id', '=', serverId)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('messages')
          .select('messages.id')
          .whereRef('messages.channel_id', '=', 'channels.id')
          .where('messages.id', '>', sql<string>`coalesce(${sql.ref('channel_reads.last_read_id')}, 0)`)
          .where('messages.author_id', '<>', userId),
      ),
    )
    .execute();
  return rows.map((r) => toId(r.id));
}

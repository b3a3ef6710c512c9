import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toId, toIdOrNull, toNum } from '../../storage/types.js';
import type { Channel } from './channels.js';
import type { ChannelsTable } from './directory.table.js';

type Db = Kysely<Database> | Transaction<Database>;

export function toChannel(row: Selectable<ChannelsTable>): Channel {
  return {
    id: toId(row.id),
    serverId: toIdOrNull(row.server_id),
    type: toNum(row.type),
    name: row.name,
    topic: row.topic,
    position: toNum(row.position),
    createdAt: toNum(row.created_at),
  };
}

export async function insertChannel(db: Db, channel: Channel): Promise<void> {
  await db
    .insertInto('channels')
    .values({
      id: channel.id,
      server_id: channel.serverId,
      type: channel.type,
      name: channel.name,
      topic: channel.topic,
      position: channel.position,
      created_at: channel.createdAt,
    })
    .execute();
}

// Prepared (storage/prepared.ts): every channel page, post and command reads it.
const channelById = prepareQuery<{ id: string }>()((db, v) => db.selectFrom('channels').selectAll().where('id', '=', v.id));

export async function findChannel(db: Db, id: string): Promise<Channel | undefined> {
  const row = await firstRow(channelById(db, { id }));
  return row ? toChannel(row) : undefined;
}

/** A server's channels in sidebar order. */
export async function listChannels(db: Db, serverId: string): Promise<Channel[]> {
  const rows = await db.selectFrom('channels').selectAll().where('server_id', '=', serverId).orderBy('position').orderBy('id').execute();
  return rows.map(toChannel);
}

/** The channels of several servers at once (the home page). */
export async function listChannelsOfServers(db: Db, serverIds: readonly string[]): Promise<Channel[]> {
  if (serverIds.length === 0) return [];
  const rows = await db.selectFrom('channels').selectAll().where('server_id', 'in', serverIds).orderBy('position').orderBy('id').execute();
  return rows.map(toChannel);
}

export async function maxChannelPosition(db: Db, serverId: string): Promise<number> {
  const row = await db.selectFrom('channels').select((eb) => eb.fn.max('position').as('max')).where('server_id', '=', serverId).executeTakeFirst();
  return row?.max === null || row?.max === undefined ? -1 : toNum(row.max);
}

/** Deletes a channel; its messages go with it (messages.channel_id cascades on both databases). */
export async function deleteChannel(db: Db, serverId: string, channelId: string): Promise<boolean> {
  const result = await db.deleteFrom('channels').where('server_id', '=', serverId).where('id', '=', channelId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** How many messages a channel holds: what deleting it removes (the confirmation names the number). */
export async function countChannelMessages(db: Db, channelId: string): Promise<number> {
  const row = await db.selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).where('channel_id', '=', channelId).executeTakeFirst();
  return row ? toNum(row.n as number | string | bigint) : 0;
}

/** Sets a channel's name and topic; false when the server has no such channel. */
export async function updateChannelRow(db: Db, serverId: string, channelId: string, changes: { name: string; topic: string | null }): Promise<boolean> {
  const result = await db.updateTable('channels').set({ name: changes.name, topic: changes.topic }).where('server_id', '=', serverId).where('id', '=', channelId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Writes the server's channel order: each id's position is its index in `orderedIds`. */
export async function writeChannelOrder(db: Db, serverId: string, orderedIds: readonly string[]): Promise<void> {
  for (const [position, id] of orderedIds.entries()) {
    await db.updateTable('channels').set({ position }).where('server_id', '=', serverId).where('id', '=', id).execute();
  }
}

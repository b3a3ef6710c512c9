import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toBool, toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import type { StoredMessage } from './messages.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewMessage {
  id: string;
  channelId: string;
  authorId: string;
  webhookId: string | null;
  applicationId: string | null;
  authorName: string | null;
  authorAvatarUrl: string | null;
  content: string;
  embeds: unknown[];
  createdAt: number;
}

export async function insertMessage(db: Db, message: NewMessage): Promise<void> {
  await db
    .insertInto('messages')
    .values({
      id: message.id,
      channel_id: message.channelId,
      author_id: message.authorId,
      webhook_id: message.webhookId,
      application_id: message.applicationId,
      author_name: message.authorName,
      author_avatar_url: message.authorAvatarUrl,
      content: message.content,
      embeds: JSON.stringify(message.embeds),
      created_at: message.createdAt,
      edited_at: null,
    })
    .execute();
}

/**
 * The newest `limit` messages of a channel, returned oldest first for display, each with its
 * author's account when there is one (a webhook's author_id is the webhook, not a user).
 */
export async function listLatestMessages(db: Db, channelId: string, limit: number): Promise<StoredMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .leftJoin('users', (join) => join.onRef('users.id', '=', 'messages.author_id').on('messages.webhook_id', 'is', null))
    .select([
      'messages.id',
      'messages.channel_id',
      'messages.author_id',
      'messages.webhook_id',
      'messages.author_name',
      'messages.author_avatar_url',
      'messages.content',
      'messages.embeds',
      'messages.created_at',
      'messages.edited_at',
      'users.name as user_name',
      'users.avatar_url as user_avatar_url',
      'users.bot as user_bot',
    ])
    .where('messages.channel_id', '=', channelId)
    // (channel_id, id) index: ids are time-ordered, so this is "newest first".
    .orderBy('messages.id', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse().map((row) => ({
    id: toId(row.id),
    channelId: toId(row.channel_id),
    authorId: toId(row.author_id),
    webhookId: toIdOrNull(row.webhook_id),
    authorName: row.author_name,
    authorAvatarUrl: row.author_avatar_url,
    content: row.content,
    embeds: row.embeds,
    createdAt: toNum(row.created_at),
    editedAt: toNumOrNull(row.edited_at),
    user: row.user_name === null ? null : { name: row.user_name, avatarUrl: row.user_avatar_url, bot: row.user_bot === null ? false : toBool(row.user_bot) },
  }));
}

export async function countMessages(db: Db, channelId: string): Promise<number> {
  const row = await db.selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).where('channel_id', '=', channelId).executeTakeFirst();
  return row ? toNum(row.n as number | bigint | string) : 0;
}

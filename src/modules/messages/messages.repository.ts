import type { Kysely, Transaction } from 'kysely';
import { isSnowflake } from '../../core/snowflake.js';
import type { Database } from '../../storage/database.js';
import { toBool, toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import type { StoredMessage, WebhookMessage } from './messages.js';
import type { Embed } from './embed.js';
import type { MessageSource, UserSource } from '../resources/resources.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';

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

// DESIGN §5: the insert of every webhook execute, compiled once (storage/prepared.ts).
const insertMessageRow = prepareQuery<Omit<NewMessage, 'embeds'> & { embeds: string }>()((db, v) =>
  db.insertInto('messages').values({
    id: v.id,
    channel_id: v.channelId,
    author_id: v.authorId,
    webhook_id: v.webhookId,
    application_id: v.applicationId,
    author_name: v.authorName,
    author_avatar_url: v.authorAvatarUrl,
    content: v.content,
    embeds: v.embeds,
    created_at: v.createdAt,
    edited_at: null,
  }),
);

/** Settles once the row is committed (storage/sqlite/write-groups.ts); the caller awaits it, no async wrapper in between. */
export function insertMessage(db: Db, message: NewMessage): Promise<unknown> {
  // Named field by field rather than spread: a literal of one fixed shape, built without the
  // spread's generic copy, on every webhook execute.
  return insertMessageRow(db, {
    id: message.id,
    channelId: message.channelId,
    authorId: message.authorId,
    webhookId: message.webhookId,
    applicationId: message.applicationId,
    authorName: message.authorName,
    authorAvatarUrl: message.authorAvatarUrl,
    content: message.content,
    embeds: JSON.stringify(message.embeds),
    createdAt: message.createdAt,
  });
}

/**
 * The newest `limit` messages of a channel, returned oldest first for display, each with its
 * author's account when there is one (a webhook's author_id is the webhook, not a user).
 */
export async function listLatestMessages(db: Db, channelId: string, limit: number): Promise<StoredMessage[]> {
  const rows = await storedMessages(db)
    .where('messages.channel_id', '=', channelId)
    // (channel_id, id) index: ids are time-ordered, so this is "newest first".
    .orderBy('messages.id', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse().map(toStoredMessage);
}

/**
 * Keyset page of history (issue #24 "Reading"): the newest `limit` messages older than
 * `beforeId`, oldest first, through the (channel_id, id) index like listLatestMessages.
 */
export async function listMessagesBefore(db: Db, channelId: string, beforeId: string, limit: number): Promise<StoredMessage[]> {
  const rows = await storedMessages(db).where('messages.channel_id', '=', channelId).where('messages.id', '<', beforeId).orderBy('messages.id', 'desc').limit(limit).execute();
  return rows.reverse().map(toStoredMessage);
}

// --- A webhook's own messages (issue #5 "Messages"): every query is scoped by webhook_id, so a
// message of anyone else is simply not found (10008) in the same single statement.
// Each names the message id too, so the primary key finds the row: there is no index on
// webhook_id for every stored message to maintain (migration 2026-11-22-07).

const webhookMessageColumns = [
  'id',
  'channel_id',
  'webhook_id',
  'application_id',
  'author_name',
  'author_avatar_url',
  'content',
  'embeds',
  'created_at',
  'edited_at',
] as const;

interface WebhookMessageRow {
  id: string | bigint;
  channel_id: string | bigint;
  webhook_id: string | bigint | null;
  application_id: string | bigint | null;
  author_name: string | null;
  author_avatar_url: string | null;
  content: string;
  embeds: string;
  created_at: number | bigint | string;
  edited_at: number | bigint | string | null;
}

function toWebhookMessage(row: WebhookMessageRow): WebhookMessage {
  return {
    id: toId(row.id),
    channelId: toId(row.channel_id),
    webhookId: toIdOrNull(row.webhook_id) ?? '',
    applicationId: toIdOrNull(row.application_id),
    authorName: row.author_name ?? '',
    authorAvatarUrl: row.author_avatar_url,
    content: row.content,
    embeds: row.embeds,
    createdAt: toNum(row.created_at),
    editedAt: toNumOrNull(row.edited_at),
  };
}

/** A message that this webhook posted, or undefined (any other message, or a malformed id). */
export async function findWebhookMessage(db: Db, webhookId: string, messageId: string): Promise<WebhookMessage | undefined> {
  if (!isSnowflake(messageId)) return undefined;
  const row = await db.selectFrom('messages').select(webhookMessageColumns).where('id', '=', messageId).where('webhook_id', '=', webhookId).executeTakeFirst();
  return row ? toWebhookMessage(row) : undefined;
}

/**
 * Edits a message this webhook posted, in one statement that returns the edited row; undefined
 * when there is no such message (never posted by it, or deleted meanwhile).
 */
export async function updateWebhookMessage(
  db: Db,
  webhookId: string,
  messageId: string,
  changes: { content?: string; embeds?: unknown[]; editedAt: number },
): Promise<WebhookMessage | undefined> {
  if (!isSnowflake(messageId)) return undefined;
  const set: { content?: string; embeds?: string; edited_at: number } = { edited_at: changes.editedAt };
  if (changes.content !== undefined) set.content = changes.content;
  if (changes.embeds !== undefined) set.embeds = JSON.stringify(changes.embeds);
  const row = await db.updateTable('messages').set(set).where('id', '=', messageId).where('webhook_id', '=', webhookId).returning(webhookMessageColumns).executeTakeFirst();
  return row ? toWebhookMessage(row) : undefined;
}

/** Deletes a message this webhook posted, returning its channel; undefined when there is none. */
export async function deleteWebhookMessage(db: Db, webhookId: string, messageId: string): Promise<{ channelId: string } | undefined> {
  if (!isSnowflake(messageId)) return undefined;
  const row = await db.deleteFrom('messages').where('id', '=', messageId).where('webhook_id', '=', webhookId).returning(['channel_id']).executeTakeFirst();
  return row ? { channelId: toId(row.channel_id) } : undefined;
}

/** The columns a StoredMessage is made of: the message and its author's account (none for webhooks). */
function storedMessages(db: Db) {
  return db
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
    ]);
}

type StoredMessageRow = Awaited<ReturnType<ReturnType<typeof storedMessages>['executeTakeFirstOrThrow']>>;

function toStoredMessage(row: StoredMessageRow): StoredMessage {
  return {
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
  };
}

// Read for every live update and every answer a bot posts (docs/performance.md, Interactions): compiled once.
const storedMessageById = prepareQuery<{ channelId: string; messageId: string }>()((db, v) => storedMessages(db).where('messages.id', '=', v.messageId).where('messages.channel_id', '=', v.channelId));

/** One message of a channel with its author, for a live update; undefined when gone or elsewhere. */
export async function findStoredMessage(db: Db, channelId: string, messageId: string): Promise<StoredMessage | undefined> {
  const row = await firstRow(storedMessageById(db, { channelId, messageId }));
  return row ? toStoredMessage(row) : undefined;
}

/** The channel a message is stored in; undefined when it is stored nowhere. */
export async function findMessageChannelId(db: Db, messageId: string): Promise<string | undefined> {
  const row = await db.selectFrom('messages').select('channel_id').where('id', '=', messageId).executeTakeFirst();
  return row ? toId(row.channel_id) : undefined;
}

/** Up to `limit` messages of a channel posted after `afterId`, oldest first (a live view catching up). */
export async function listMessagesAfter(db: Db, channelId: string, afterId: string, limit: number): Promise<StoredMessage[]> {
  const rows = await storedMessages(db).where('messages.channel_id', '=', channelId).where('messages.id', '>', afterId).orderBy('messages.id', 'asc').limit(limit).execute();
  return rows.map(toStoredMessage);
}

/**
 * The avatar overrides of a webhook's latest messages in its channel (the CDN route's lookup of
 * a per-message avatar hash; DESIGN §1). Bounded to the channel's last `limit` messages through
 * messages_channel_idx: messages have no index by webhook (write cost, docs/performance.md §Indexes on messages).
 */
export async function listRecentWebhookAvatarUrls(db: Db, channelId: string, webhookId: string, limit: number): Promise<string[]> {
  const recent = db.selectFrom('messages').select(['author_avatar_url', 'webhook_id']).where('channel_id', '=', channelId).orderBy('id', 'desc').limit(limit).as('recent');
  const rows = await db.selectFrom(recent).select('author_avatar_url').distinct().where('webhook_id', '=', webhookId).where('author_avatar_url', 'is not', null).execute();
  return rows.map((r) => r.author_avatar_url as string);
}

// --- What bots read (issue #40 §4): Discord's message objects, each with its author in the same
// statement (no query per author), through the (channel_id, id) index.

/** Where a page of a channel's history starts (Discord's before / after / around, by message id). */
export type HistoryAnchor = { before: string } | { after: string } | { around: string } | Record<string, never>;

function apiMessages(db: Db) {
  return db
    .selectFrom('messages')
    .leftJoin('users', (join) => join.onRef('users.id', '=', 'messages.author_id').on('messages.webhook_id', 'is', null))
    .select([
      'messages.id',
      'messages.channel_id',
      'messages.author_id',
      'messages.webhook_id',
      'messages.application_id',
      'messages.author_name',
      'messages.author_avatar_url',
      'messages.content',
      'messages.embeds',
      'messages.created_at',
      'messages.edited_at',
      'users.username as user_username',
      'users.name as user_name',
      'users.avatar_url as user_avatar_url',
      'users.bot as user_bot',
    ]);
}

type ApiMessageRow = Awaited<ReturnType<ReturnType<typeof apiMessages>['executeTakeFirstOrThrow']>>;

function storedEmbeds(text: string): Embed[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? (value as Embed[]) : [];
  } catch {
    return [];
  }
}

function toMessageSource(row: ApiMessageRow): MessageSource {
  const webhookId = toIdOrNull(row.webhook_id);
  const authorId = toId(row.author_id);
  const author: UserSource =
    webhookId !== null
      ? // Discord's convention: a webhook's message is authored by the webhook, under the name and avatar shown for it.
        { id: webhookId, username: row.author_name ?? '', name: null, avatarUrl: row.author_avatar_url, bot: true }
      : row.user_username === null
        ? { id: authorId, username: 'deleted_user', name: 'Deleted user', avatarUrl: null, bot: false }
        : { id: authorId, username: row.user_username, name: row.user_name, avatarUrl: row.user_avatar_url, bot: row.user_bot === null ? false : toBool(row.user_bot) };
  return {
    id: toId(row.id),
    channelId: toId(row.channel_id),
    content: row.content,
    embeds: storedEmbeds(row.embeds),
    author,
    webhookId,
    applicationId: toIdOrNull(row.application_id),
    createdAt: toNum(row.created_at),
    editedAt: toNumOrNull(row.edited_at),
  };
}

/**
 * A page of a channel's history, newest first as Discord returns it: the newest `limit`, or those
 * right before or after an id, or around one (the message itself and the older half, then the
 * newer half: two statements, each on the index).
 */
export async function listHistoryPage(db: Db, channelId: string, anchor: HistoryAnchor, limit: number): Promise<MessageSource[]> {
  const inChannel = () => apiMessages(db).where('messages.channel_id', '=', channelId);
  if ('after' in anchor) {
    const rows = await inChannel().where('messages.id', '>', anchor.after).orderBy('messages.id', 'asc').limit(limit).execute();
    return rows.reverse().map(toMessageSource);
  }
  if ('around' in anchor) {
    const newerCount = Math.floor(limit / 2);
    const older = await inChannel().where('messages.id', '<=', anchor.around).orderBy('messages.id', 'desc').limit(limit - newerCount).execute();
    const newer = newerCount === 0 ? [] : await inChannel().where('messages.id', '>', anchor.around).orderBy('messages.id', 'asc').limit(newerCount).execute();
    return [...newer.reverse(), ...older].map(toMessageSource);
  }
  let query = inChannel();
  if ('before' in anchor) query = query.where('messages.id', '<', anchor.before);
  const rows = await query.orderBy('messages.id', 'desc').limit(limit).execute();
  return rows.map(toMessageSource);
}

/** One message of a channel as Discord's message object's source; undefined when it is not there. */
export async function findApiMessage(db: Db, channelId: string, messageId: string): Promise<MessageSource | undefined> {
  if (!isSnowflake(messageId)) return undefined;
  const row = await apiMessages(db).where('messages.id', '=', messageId).where('messages.channel_id', '=', channelId).executeTakeFirst();
  return row ? toMessageSource(row) : undefined;
}

/**
 * Edits a message its author wrote (a bot's own, issue #40 §4), in one statement scoped to the
 * author, so anyone else's message is simply not found. Returns whether a row changed.
 */
export async function updateAuthoredMessage(db: Db, channelId: string, messageId: string, authorId: string, changes: { content?: string; embeds?: unknown[]; editedAt: number }): Promise<boolean> {
  const set: { content?: string; embeds?: string; edited_at: number } = { edited_at: changes.editedAt };
  if (changes.content !== undefined) set.content = changes.content;
  if (changes.embeds !== undefined) set.embeds = JSON.stringify(changes.embeds);
  const result = await db
    .updateTable('messages')
    .set(set)
    .where('id', '=', messageId)
    .where('channel_id', '=', channelId)
    .where('author_id', '=', authorId)
    .where('webhook_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

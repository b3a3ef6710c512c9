import type { Kysely } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toBool, toId, toNum } from '../../storage/types.js';

/** What a message shows of the command it answers (message-interactions.table.ts), with the invoker's names. */
export interface MessageInteraction {
  messageId: string;
  interactionId: string;
  type: number;
  userId: string;
  /** The invoker's display name and username ('Deleted user' when the account is gone). */
  userName: string;
  username: string;
  /** The invoker's avatar, for Discord's user object in `interaction_metadata`. */
  userAvatarUrl: string | null;
  commandName: string;
  loading: boolean;
}

export interface NewMessageInteraction {
  messageId: string;
  interactionId: string;
  type: number;
  userId: string;
  commandName: string;
  loading: boolean;
}

// Every answer a bot posts records its command (docs/performance.md, Interactions): compiled once.
const insertRow = prepareQuery<{ messageId: string; interactionId: string; type: number; userId: string; commandName: string; loading: 0 | 1 }>()((db, v) =>
  db.insertInto('message_interactions').values({ message_id: v.messageId, interaction_id: v.interactionId, interaction_type: v.type, user_id: v.userId, command_name: v.commandName, loading: v.loading }),
);

export async function insertMessageInteraction(db: Kysely<Database>, row: NewMessageInteraction): Promise<void> {
  await insertRow(db, { ...row, loading: row.loading ? 1 : 0 });
}

/** Issue #40 §2: the deferred answer's placeholder became the answer (no longer LOADING). */
export async function clearLoading(db: Kysely<Database>, messageId: string): Promise<void> {
  await db.updateTable('message_interactions').set({ loading: 0 }).where('message_id', '=', messageId).execute();
}

export async function deleteMessageInteraction(db: Kysely<Database>, messageId: string): Promise<void> {
  await db.deleteFrom('message_interactions').where('message_id', '=', messageId).execute();
}

const COLUMNS = [
  'message_interactions.message_id',
  'message_interactions.interaction_id',
  'message_interactions.interaction_type',
  'message_interactions.user_id',
  'message_interactions.command_name',
  'message_interactions.loading',
  'users.name as user_name',
  'users.username as username',
  'users.avatar_url as user_avatar_url',
] as const;

function withInvoker(db: Kysely<Database>) {
  return db.selectFrom('message_interactions').leftJoin('users', 'users.id', 'message_interactions.user_id').select(COLUMNS);
}

function toMessageInteraction(row: Awaited<ReturnType<ReturnType<typeof withInvoker>['executeTakeFirstOrThrow']>>): MessageInteraction {
  return {
    messageId: toId(row.message_id),
    interactionId: toId(row.interaction_id),
    type: toNum(row.interaction_type),
    userId: toId(row.user_id),
    userName: row.user_name ?? 'Deleted user',
    username: row.username ?? 'deleted-user',
    userAvatarUrl: row.user_avatar_url ?? null,
    commandName: row.command_name,
    loading: toBool(row.loading),
  };
}

/** The interactions of these messages, in one query (the channel view's page and live updates). */
export async function listMessageInteractions(db: Kysely<Database>, messageIds: readonly string[]): Promise<Map<string, MessageInteraction>> {
  if (messageIds.length === 0) return new Map();
  const rows = await withInvoker(db)
    .where('message_interactions.message_id', 'in', [...messageIds])
    .execute();
  return new Map(rows.map((row) => [toId(row.message_id), toMessageInteraction(row)]));
}

// An answer read back once posted, and a follow-up's message (docs/performance.md, Interactions).
const interactionOfMessage = prepareQuery<{ messageId: string }>()((db, v) => withInvoker(db).where('message_interactions.message_id', '=', v.messageId));

/** The interaction of one message; undefined when it records none. */
export async function findMessageInteraction(db: Kysely<Database>, messageId: string): Promise<MessageInteraction | undefined> {
  const row = await firstRow(interactionOfMessage(db, { messageId }));
  return row ? toMessageInteraction(row) : undefined;
}

/**
 * Sets what a bot's interaction message says. Discord: filling a deferred answer's placeholder
 * is not an edit (no "(edited)"), so `editedAt` is null then. False when the message is gone.
 */
export async function updateInteractionMessage(db: Kysely<Database>, channelId: string, messageId: string, authorId: string, changes: { content?: string; embeds?: unknown[]; editedAt: number | null }): Promise<boolean> {
  const set: { content?: string; embeds?: string; edited_at?: number } = {};
  if (changes.editedAt !== null) set.edited_at = changes.editedAt;
  if (changes.content !== undefined) set.content = changes.content;
  if (changes.embeds !== undefined) set.embeds = JSON.stringify(changes.embeds);
  if (Object.keys(set).length === 0) return (await db.selectFrom('messages').select('id').where('id', '=', messageId).where('channel_id', '=', channelId).where('author_id', '=', authorId).executeTakeFirst()) !== undefined;
  const result = await db.updateTable('messages').set(set).where('id', '=', messageId).where('channel_id', '=', channelId).where('author_id', '=', authorId).where('webhook_id', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

import type { Kysely } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toBool, toId, toNum, toNumOrNull } from '../../storage/types.js';
import type { MessageInteraction } from './message-interactions.repository.js';
import type { StoredMessage } from './messages.js';

/**
 * An app's ephemeral message (ephemeral-messages.table.ts) in the shapes of a stored message and
 * of what it records of its command, so the channel view and Discord's message object present it
 * as they present the app's other answers.
 */
export interface StoredEphemeral {
  message: StoredMessage;
  interaction: MessageInteraction;
  /** The person who used the command: the one reader. */
  recipientId: string;
  /** The interaction token's expiry: after it the message is shown to no one and purged. */
  expiresAt: number;
}

export interface NewEphemeral {
  id: string;
  interactionId: string;
  channelId: string;
  recipientId: string;
  authorId: string;
  content: string;
  embeds: unknown[];
  loading: boolean;
  createdAt: number;
}

export async function insertEphemeralMessage(db: Kysely<Database>, row: NewEphemeral): Promise<void> {
  await db
    .insertInto('ephemeral_messages')
    .values({
      id: row.id,
      interaction_id: row.interactionId,
      channel_id: row.channelId,
      recipient_id: row.recipientId,
      author_id: row.authorId,
      content: row.content,
      embeds: JSON.stringify(row.embeds),
      loading: row.loading ? 1 : 0,
      created_at: row.createdAt,
      edited_at: null,
    })
    .execute();
}

/** The message with its bot's account, and its interaction's invoker, command and expiry. */
function withInteraction(db: Kysely<Database>) {
  return db
    .selectFrom('ephemeral_messages as e')
    .innerJoin('interactions as i', 'i.id', 'e.interaction_id')
    .leftJoin('users as author', 'author.id', 'e.author_id')
    .leftJoin('users as invoker', 'invoker.id', 'i.user_id')
    .select([
      'e.id',
      'e.interaction_id',
      'e.channel_id',
      'e.recipient_id',
      'e.author_id',
      'e.content',
      'e.embeds',
      'e.loading',
      'e.created_at',
      'e.edited_at',
      'i.command_name',
      'i.expires_at',
      'author.name as author_name',
      'author.avatar_url as author_avatar_url',
      'invoker.name as invoker_name',
      'invoker.username as invoker_username',
      'invoker.avatar_url as invoker_avatar_url',
    ]);
}

type Row = Awaited<ReturnType<ReturnType<typeof withInteraction>['executeTakeFirstOrThrow']>>;

function fromRow(row: Row): StoredEphemeral {
  const id = toId(row.id);
  const recipientId = toId(row.recipient_id);
  return {
    message: {
      id,
      channelId: toId(row.channel_id),
      authorId: toId(row.author_id),
      webhookId: null,
      authorName: null,
      authorAvatarUrl: null,
      content: row.content,
      embeds: row.embeds,
      createdAt: toNum(row.created_at),
      editedAt: toNumOrNull(row.edited_at),
      user: row.author_name === null ? null : { name: row.author_name, avatarUrl: row.author_avatar_url, bot: true },
    },
    interaction: {
      messageId: id,
      interactionId: toId(row.interaction_id),
      // Discord: APPLICATION_COMMAND, the only interaction the composer sends.
      type: 2,
      userId: recipientId,
      userName: row.invoker_name ?? 'Deleted user',
      username: row.invoker_username ?? 'deleted-user',
      userAvatarUrl: row.invoker_avatar_url ?? null,
      commandName: row.command_name,
      loading: toBool(row.loading),
    },
    recipientId,
    expiresAt: toNum(row.expires_at),
  };
}

const ephemeralById = prepareQuery<{ id: string }>()((db, v) => withInteraction(db).where('e.id', '=', v.id));

/** One ephemeral message, expired or not (the caller decides); undefined when it is gone. */
export async function findEphemeralMessage(db: Kysely<Database>, id: string): Promise<StoredEphemeral | undefined> {
  const row = await firstRow(ephemeralById(db, { id }));
  return row ? fromRow(row) : undefined;
}

/** `recipientId`'s ephemeral messages in a channel whose interaction has not expired, oldest first. */
export async function listEphemeralMessages(db: Kysely<Database>, recipientId: string, channelId: string, now: number): Promise<StoredEphemeral[]> {
  const rows = await withInteraction(db).where('e.recipient_id', '=', recipientId).where('e.channel_id', '=', channelId).where('i.expires_at', '>', now).orderBy('e.id').execute();
  return rows.map(fromRow);
}

/** Content and/or embeds changed; filling a deferral clears LOADING and is not an edit (`editedAt` null). */
export async function updateEphemeralMessage(db: Kysely<Database>, id: string, changes: { content?: string; embeds?: unknown[]; editedAt: number | null }): Promise<boolean> {
  const result = await db
    .updateTable('ephemeral_messages')
    .set({
      ...(changes.content !== undefined ? { content: changes.content } : {}),
      ...(changes.embeds !== undefined ? { embeds: JSON.stringify(changes.embeds) } : {}),
      loading: 0,
      ...(changes.editedAt !== null ? { edited_at: changes.editedAt } : {}),
    })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteEphemeralMessage(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('ephemeral_messages').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

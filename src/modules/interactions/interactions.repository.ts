import type { Kysely } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toBool, toId, toIdOrNull, toNum } from '../../storage/types.js';

/** An interaction the app may still answer (interactions.table.ts). */
export interface StoredInteraction {
  id: string;
  tokenHash: string;
  applicationId: string;
  botUserId: string;
  channelId: string;
  userId: string;
  commandName: string;
  ephemeral: boolean;
  acknowledged: boolean;
  originalMessageId: string | null;
  expiresAt: number;
}

export interface NewInteraction {
  id: string;
  tokenHash: string;
  applicationId: string;
  botUserId: string;
  channelId: string;
  userId: string;
  commandName: string;
  createdAt: number;
  expiresAt: number;
}

export async function insertInteraction(db: Kysely<Database>, row: NewInteraction): Promise<void> {
  await db
    .insertInto('interactions')
    .values({
      id: row.id,
      token_hash: row.tokenHash,
      application_id: row.applicationId,
      bot_user_id: row.botUserId,
      channel_id: row.channelId,
      user_id: row.userId,
      command_name: row.commandName,
      ephemeral: 0,
      acknowledged: 0,
      original_message_id: null,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute();
}

function fromRow(row: {
  id: unknown;
  token_hash: string;
  application_id: unknown;
  bot_user_id: unknown;
  channel_id: unknown;
  user_id: unknown;
  command_name: string;
  ephemeral: unknown;
  acknowledged: unknown;
  original_message_id: unknown;
  expires_at: unknown;
}): StoredInteraction {
  return {
    id: toId(row.id as string),
    tokenHash: row.token_hash,
    applicationId: toId(row.application_id as string),
    botUserId: toId(row.bot_user_id as string),
    channelId: toId(row.channel_id as string),
    userId: toId(row.user_id as string),
    commandName: row.command_name,
    ephemeral: toBool(row.ephemeral as number),
    acknowledged: toBool(row.acknowledged as number),
    originalMessageId: toIdOrNull(row.original_message_id as string | null),
    expiresAt: toNum(row.expires_at as number),
  };
}

/** The interaction whose token hashes to `tokenHash` (unique index). */
export async function findInteractionByTokenHash(db: Kysely<Database>, tokenHash: string): Promise<StoredInteraction | undefined> {
  const row = await db.selectFrom('interactions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

export async function findInteraction(db: Kysely<Database>, id: string): Promise<StoredInteraction | undefined> {
  const row = await db.selectFrom('interactions').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * Marks the interaction answered, once: true for the one caller that did, false when it was
 * already (Discord's 40060), whichever instance answered first.
 */
export async function acknowledgeInteraction(db: Kysely<Database>, id: string, ephemeral: boolean): Promise<boolean> {
  const result = await db.updateTable('interactions').set({ acknowledged: 1, ephemeral: ephemeral ? 1 : 0 }).where('id', '=', id).where('acknowledged', '=', 0).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setOriginalMessage(db: Kysely<Database>, id: string, messageId: string | null): Promise<void> {
  await db.updateTable('interactions').set({ original_message_id: messageId }).where('id', '=', id).execute();
}

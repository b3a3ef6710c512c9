import type { Kysely } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
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

// Every invocation stores its interaction, reads it back when the app answers and marks it
// answered: compiled once (docs/performance.md, Interactions).
const insertInteractionRow = prepareQuery<NewInteraction>()((db, v) =>
  db.insertInto('interactions').values({
    id: v.id,
    token_hash: v.tokenHash,
    application_id: v.applicationId,
    bot_user_id: v.botUserId,
    channel_id: v.channelId,
    user_id: v.userId,
    command_name: v.commandName,
    ephemeral: 0,
    acknowledged: 0,
    original_message_id: null,
    created_at: v.createdAt,
    expires_at: v.expiresAt,
  }),
);

export async function insertInteraction(db: Kysely<Database>, row: NewInteraction): Promise<void> {
  await insertInteractionRow(db, row);
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

const interactionById = prepareQuery<{ id: string }>()((db, v) => db.selectFrom('interactions').selectAll().where('id', '=', v.id));

export async function findInteraction(db: Kysely<Database>, id: string): Promise<StoredInteraction | undefined> {
  const row = await firstRow(interactionById(db, { id }));
  return row ? fromRow(row) : undefined;
}

/**
 * Marks the interaction answered, once: true for the one caller that did, false when it was
 * already (Discord's 40060), whichever instance answered first.
 */
const acknowledgeOnce = prepareQuery<{ id: string; ephemeral: 0 | 1 }>()((db, v) => db.updateTable('interactions').set({ acknowledged: 1, ephemeral: v.ephemeral }).where('id', '=', v.id).where('acknowledged', '=', 0));

export async function acknowledgeInteraction(db: Kysely<Database>, id: string, ephemeral: boolean): Promise<boolean> {
  const result = await acknowledgeOnce(db, { id, ephemeral: ephemeral ? 1 : 0 });
  return Number(result.numAffectedRows ?? 0n) === 1;
}

const originalMessageOf = prepareQuery<{ id: string; messageId: string | null }>()((db, v) => db.updateTable('interactions').set({ original_message_id: v.messageId }).where('id', '=', v.id));

export async function setOriginalMessage(db: Kysely<Database>, id: string, messageId: string | null): Promise<void> {
  await originalMessageOf(db, { id, messageId });
}

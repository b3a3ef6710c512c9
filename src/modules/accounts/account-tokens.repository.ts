import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

export type AccountTokenPurpose = 'verify-email' | 'reset-password' | 'sign-up';

export interface AccountToken {
  tokenHash: string;
  purpose: AccountTokenPurpose;
  userId: string;
  email: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

function toToken(row: { token_hash: string; purpose: string; user_id: string | bigint; email: string | null; created_at: number | bigint | string; expires_at: number | bigint | string; used_at: number | bigint | string | null }): AccountToken {
  return {
    tokenHash: row.token_hash,
    purpose: row.purpose as AccountTokenPurpose,
    userId: toId(row.user_id),
    email: row.email,
    createdAt: toNum(row.created_at),
    expiresAt: toNum(row.expires_at),
    usedAt: row.used_at === null ? null : toNum(row.used_at),
  };
}

export async function insertAccountToken(db: Db, token: Omit<AccountToken, 'usedAt'>): Promise<void> {
  await db
    .insertInto('account_tokens')
    .values({
      token_hash: token.tokenHash,
      purpose: token.purpose,
      user_id: token.userId,
      email: token.email,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
    })
    .execute();
}

export async function findAccountToken(db: Db, tokenHash: string): Promise<AccountToken | undefined> {
  const row = await db.selectFrom('account_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return row ? toToken(row) : undefined;
}

/**
 * Marks a link used when it is still unused and unexpired; false when another request used it
 * first (the update is the single-use check, so two clicks at once cannot both pass).
 */
export async function useAccountToken(db: Db, tokenHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Ends a person's unused links of one purpose (a new address replaces the pending one). */
export async function deleteUnusedAccountTokens(db: Db, userId: string, purpose: AccountTokenPurpose): Promise<void> {
  await db.deleteFrom('account_tokens').where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).execute();
}

/** The newest unused, unexpired link of a purpose: the address waiting for verification. */
export async function findPendingAccountToken(db: Db, userId: string, purpose: AccountTokenPurpose, now: number): Promise<AccountToken | undefined> {
  const row = await db
    .selectFrom('account_tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return row ? toToken(row) : undefined;
}

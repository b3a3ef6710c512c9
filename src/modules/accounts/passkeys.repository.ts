import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum, toNumOrNull } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface PasskeyRecord {
  credentialId: string;
  userId: string;
  name: string;
  publicKey: string;
  signCount: number;
  transports: string[];
  createdAt: number;
  lastUsedAt: number | null;
}

const COLUMNS = ['credential_id', 'user_id', 'name', 'public_key', 'sign_count', 'transports', 'created_at', 'last_used_at'] as const;

function record(row: { credential_id: string; user_id: string | bigint; name: string; public_key: string; sign_count: number | bigint | string; transports: string; created_at: number | bigint | string; last_used_at: number | bigint | string | null }): PasskeyRecord {
  return {
    credentialId: row.credential_id,
    userId: toId(row.user_id),
    name: row.name,
    publicKey: row.public_key,
    signCount: toNum(row.sign_count),
    transports: row.transports === '' ? [] : row.transports.split(','),
    createdAt: toNum(row.created_at),
    lastUsedAt: toNumOrNull(row.last_used_at),
  };
}

export async function listPasskeys(db: Db, userId: string): Promise<PasskeyRecord[]> {
  const rows = await db.selectFrom('passkeys').select(COLUMNS).where('user_id', '=', userId).orderBy('created_at').execute();
  return rows.map(record);
}

export async function findPasskey(db: Db, credentialId: string): Promise<PasskeyRecord | undefined> {
  const row = await db.selectFrom('passkeys').select(COLUMNS).where('credential_id', '=', credentialId).executeTakeFirst();
  return row ? record(row) : undefined;
}

export async function insertPasskey(db: Db, passkey: Omit<PasskeyRecord, 'lastUsedAt'>): Promise<void> {
  await db
    .insertInto('passkeys')
    .values({
      credential_id: passkey.credentialId,
      user_id: passkey.userId,
      name: passkey.name,
      public_key: passkey.publicKey,
      sign_count: passkey.signCount,
      transports: passkey.transports.join(','),
      created_at: passkey.createdAt,
      last_used_at: null,
    })
    .execute();
}

/** Records a use; only when the counter is still the one read, so two racing uses of one assertion cannot both pass. */
export async function usePasskey(db: Db, credentialId: string, readCount: number, newCount: number, now: number): Promise<boolean> {
  const result = await db.updateTable('passkeys').set({ sign_count: newCount, last_used_at: now }).where('credential_id', '=', credentialId).where('sign_count', '=', readCount).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deletePasskey(db: Db, userId: string, credentialId: string): Promise<PasskeyRecord | undefined> {
  const found = await db.selectFrom('passkeys').select(COLUMNS).where('credential_id', '=', credentialId).where('user_id', '=', userId).executeTakeFirst();
  if (!found) return undefined;
  await db.deleteFrom('passkeys').where('credential_id', '=', credentialId).where('user_id', '=', userId).execute();
  return record(found);
}

export async function insertChallenge(db: Db, challengeHash: string, purpose: string, userId: string | null, expiresAt: number): Promise<void> {
  await db.insertInto('passkey_challenges').values({ challenge_hash: challengeHash, purpose, user_id: userId, expires_at: expiresAt }).execute();
}

/** Takes a challenge (deleting it: single use) and says whether it was live for this purpose and person. */
export async function takeChallenge(db: Db, challengeHash: string, purpose: string, userId: string | null, now: number): Promise<boolean> {
  const row = await db.selectFrom('passkey_challenges').select(['purpose', 'user_id', 'expires_at']).where('challenge_hash', '=', challengeHash).executeTakeFirst();
  if (!row) return false;
  const result = await db.deleteFrom('passkey_challenges').where('challenge_hash', '=', challengeHash).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) return false;
  const owner = row.user_id === null ? null : toId(row.user_id);
  return row.purpose === purpose && owner === userId && toNum(row.expires_at) > now;
}

export async function purgeChallenges(db: Db, now: number): Promise<void> {
  await db.deleteFrom('passkey_challenges').where('expires_at', '<=', now).execute();
}

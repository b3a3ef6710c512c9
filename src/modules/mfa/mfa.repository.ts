import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toBool, toId, toNum, toNumOrNull } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface TotpRecord {
  userId: string;
  sealedSecret: string;
  enabledAt: number | null;
  lastStep: number | null;
}

export async function findTotp(db: Db, userId: string): Promise<TotpRecord | undefined> {
  const row = await db.selectFrom('mfa_totp').select(['user_id', 'sealed_secret', 'enabled_at', 'last_step']).where('user_id', '=', userId).executeTakeFirst();
  return row ? { userId: toId(row.user_id), sealedSecret: row.sealed_secret, enabledAt: toNumOrNull(row.enabled_at), lastStep: toNumOrNull(row.last_step) } : undefined;
}

/** A new, not yet confirmed enrolment; replaces an earlier unconfirmed one, never an enabled one. */
export async function saveTotpEnrolment(db: Db, userId: string, sealedSecret: string, now: number): Promise<void> {
  await db.deleteFrom('mfa_totp').where('user_id', '=', userId).where('enabled_at', 'is', null).execute();
  await db.insertInto('mfa_totp').values({ user_id: userId, sealed_secret: sealedSecret, enabled_at: null, last_step: null, created_at: now }).execute();
}

export async function enableTotp(db: Db, userId: string, step: number, now: number): Promise<boolean> {
  const result = await db.updateTable('mfa_totp').set({ enabled_at: now, last_step: step }).where('user_id', '=', userId).where('enabled_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Records `step` as used, only if it is later than the last one used: false when another request
 * used this step (or a later one) first, so a code works once even under a race.
 */
export async function useTotpStep(db: Db, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('mfa_totp')
    .set({ last_step: step })
    .where('user_id', '=', userId)
    .where('enabled_at', 'is not', null)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteTotp(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('mfa_totp').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function replaceRecoveryCodes(db: Db, userId: string, hashes: readonly string[], now: number): Promise<void> {
  await db.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
  if (hashes.length > 0) await db.insertInto('mfa_recovery_codes').values(hashes.map((code_hash) => ({ code_hash, user_id: userId, created_at: now, used_at: null }))).execute();
}

export async function deleteRecoveryCodes(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Marks one unused code of the person used; false when it is not theirs or was used. */
export async function useRecoveryCode(db: Db, userId: string, hash: string, now: number): Promise<boolean> {
  const result = await db.updateTable('mfa_recovery_codes').set({ used_at: now }).where('code_hash', '=', hash).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function countUnusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('mfa_recovery_codes').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
  return row ? toNum(row.n) : 0;
}

export interface PendingRecord {
  userId: string;
  userAgent: string | null;
  expiresAt: number;
}

export async function insertPendingSignIn(db: Db, idHash: string, userId: string, userAgent: string | null, now: number, expiresAt: number): Promise<void> {
  await db.insertInto('mfa_pending_sign_ins').values({ id_hash: idHash, user_id: userId, user_agent: userAgent, created_at: now, expires_at: expiresAt }).execute();
}

export async function findPendingSignIn(db: Db, idHash: string): Promise<PendingRecord | undefined> {
  const row = await db.selectFrom('mfa_pending_sign_ins').select(['user_id', 'user_agent', 'expires_at']).where('id_hash', '=', idHash).executeTakeFirst();
  return row ? { userId: toId(row.user_id), userAgent: row.user_agent, expiresAt: toNum(row.expires_at) } : undefined;
}

/** Ends a pending sign-in; false when it was already ended (a second completion loses). */
export async function deletePendingSignIn(db: Db, idHash: string): Promise<boolean> {
  const result = await db.deleteFrom('mfa_pending_sign_ins').where('id_hash', '=', idHash).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function purgePendingSignIns(db: Db, now: number): Promise<void> {
  await db.deleteFrom('mfa_pending_sign_ins').where('expires_at', '<=', now).execute();
}

export async function insertSessionMethods(db: Db, sessionHash: string, userId: string, amr: readonly string[], now: number): Promise<void> {
  await db.insertInto('mfa_session_methods').values({ session_hash: sessionHash, user_id: userId, amr: amr.join(' '), created_at: now }).execute();
}

export async function findSessionMethods(db: Db, sessionHash: string): Promise<string[] | undefined> {
  const row = await db.selectFrom('mfa_session_methods').select('amr').where('session_hash', '=', sessionHash).executeTakeFirst();
  return row ? row.amr.split(' ').filter(Boolean) : undefined;
}

/** Forgets the person's records older than `before`: their sessions have ended by then (the maximum session age). */
export async function purgeSessionMethodsOfUser(db: Db, userId: string, before: number): Promise<void> {
  await db.deleteFrom('mfa_session_methods').where('user_id', '=', userId).where('created_at', '<', before).execute();
}

/**
 * Whether the person has a second factor (issue #38 §4): a confirmed TOTP authenticator or a
 * registered passkey. Reads the passkeys table directly, so mfa depends on no accounts service.
 */
async function anySecondFactor(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.exists(eb.selectFrom('mfa_totp').select('user_id').where('user_id', '=', userId).where('enabled_at', 'is not', null)).as('totp'),
      eb.exists(eb.selectFrom('passkeys').select('user_id').where('user_id', '=', userId)).as('passkey'),
    ])
    .executeTakeFirstOrThrow();
  return toBool(row.totp) || toBool(row.passkey);
}

export async function countPasskeys(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('passkeys').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).where('user_id', '=', userId).executeTakeFirst();
  return row ? toNum(row.n) : 0;
}

/**
 * Every passkey of a person: the operator's reset of their second factors, or their account being
 * deleted (the row stays as "Deleted account", and a passkey must not sign in to it). The passkeys
 * table is accounts/'s; mfa/ reads and clears it here because a passkey is a second factor.
 */
export async function deletePasskeysOf(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Sets the person's users.mfa_enabled from what they have now (a confirmed TOTP authenticator or a
 * passkey), in the caller's transaction, and returns it.
 */
export async function syncMfaEnabled(db: Db, userId: string): Promise<boolean> {
  const on = await anySecondFactor(db, userId);
  await db.updateTable('users').set({ mfa_enabled: on ? 1 : 0 }).where('id', '=', userId).execute();
  return on;
}

/** users.mfa_enabled of the person (false for an unknown id). */
export async function readMfaEnabled(db: Db, userId: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('mfa_enabled').where('id', '=', userId).executeTakeFirst();
  return row !== undefined && toBool(row.mfa_enabled);
}

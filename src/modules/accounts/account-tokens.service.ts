import type { Transaction } from 'kysely';
import { hashSecret, issueSecret } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { LinkRefusedError } from './account-links.js';
import { deleteUnusedAccountTokens, findAccountToken, insertAccountToken, useAccountToken, type AccountToken, type AccountTokenPurpose } from './account-tokens.repository.js';

/**
 * The single-use links of issue #38 §2–§3 (e-mail verification, password reset): a random
 * token in the link, only its SHA-256 hash at rest (core/secrets.ts), one use, a lifetime each.
 */

const KIND = { 'verify-email': 'emailVerification', 'reset-password': 'passwordReset', 'sign-up': 'signUpLink' } as const;

/** Issues a link's token in `trx`; returns the plain token (it goes into the mail or the CLI's output, never a log). */
export async function issueAccountToken(
  deps: Deps,
  trx: Transaction<Database>,
  input: { purpose: AccountTokenPurpose; userId: string; email: string | null; lifetimeMs: number; replacing: boolean },
): Promise<string> {
  // A new verification link ends the older ones: only the newest address waits for verification.
  if (input.replacing) await deleteUnusedAccountTokens(trx, input.userId, input.purpose);
  const secret = issueSecret(deps.random, KIND[input.purpose]);
  const now = deps.clock.now();
  await insertAccountToken(trx, { tokenHash: secret.hash, purpose: input.purpose, userId: input.userId, email: input.email, createdAt: now, expiresAt: now + input.lifetimeMs });
  return secret.plain;
}

/** The stored link of a presented token, or the refusal (a token of the other purpose is unknown here). */
export async function checkAccountToken(deps: Deps, plain: string, purpose: AccountTokenPurpose): Promise<AccountToken> {
  const token = plain.length > 0 && plain.length <= 200 ? await findAccountToken(deps.db, hashSecret(plain)) : undefined;
  if (!token || token.purpose !== purpose) throw new LinkRefusedError('unknown');
  if (token.usedAt !== null) throw new LinkRefusedError('used');
  if (token.expiresAt <= deps.clock.now()) throw new LinkRefusedError('expired');
  return token;
}

/** Uses the link in `trx`: refused when another request used it first or it expired meanwhile. */
export async function useCheckedToken(deps: Deps, trx: Transaction<Database>, token: AccountToken): Promise<void> {
  if (!(await useAccountToken(trx, token.tokenHash, deps.clock.now()))) throw new LinkRefusedError('used');
}

/** Ends a person's unused links of one purpose (a reset ends the other reset links). */
export function endUnusedTokens(trx: Transaction<Database>, userId: string, purpose: AccountTokenPurpose): Promise<void> {
  return deleteUnusedAccountTokens(trx, userId, purpose);
}

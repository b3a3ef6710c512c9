import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';

type Db = Kysely<Database> | Transaction<Database>;

/** An authorization code as stored: the code itself is never kept, only its SHA-256 (OAUTH-CHECKLIST C8). */
export interface NewAuthorizationCode {
  codeHash: string;
  grantId: string;
  applicationId: string;
  userId: string;
  /** The redirect URI the response went to (for a loopback URI, with the port used). */
  redirectUri: string;
  /** Whether the request named redirect_uri (RFC 6749 §4.1.3: then the token request must repeat it). */
  redirectUriSent: boolean;
  scopes: string[];
  /** BASE64URL(SHA256(verifier)), or null when the request had no PKCE (confidential clients only). */
  codeChallenge: string | null;
  createdAt: number;
  expiresAt: number;
}

export async function insertCode(db: Db, code: NewAuthorizationCode): Promise<void> {
  await db
    .insertInto('oauth_codes')
    .values({
      code_hash: code.codeHash,
      grant_id: code.grantId,
      application_id: code.applicationId,
      user_id: code.userId,
      redirect_uri: code.redirectUri,
      redirect_uri_sent: code.redirectUriSent ? 1 : 0,
      scopes: code.scopes.join(' '),
      code_challenge: code.codeChallenge,
      created_at: code.createdAt,
      expires_at: code.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Whether this person already had a code issued to this app for this PKCE challenge
 * (OAUTH-CHECKLIST B10, RFC 9700 §2.1.1: a client must use a fresh verifier for every
 * authorization request). Scoped to the person and the app (issue #21 §5): a challenge is public
 * (it travels in the browser's address bar), so comparing across people would let anyone who saw
 * one person's challenge make that person's sign-in fail by using it first.
 */
export async function challengeWasUsed(db: Db, applicationId: string, userId: string, codeChallenge: string): Promise<boolean> {
  const row = await db
    .selectFrom('oauth_codes')
    .select('code_hash')
    .where('application_id', '=', applicationId)
    .where('code_challenge', '=', codeChallenge)
    .where('user_id', '=', userId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Deletes up to `batch` codes that expired before `before` (issue #21 §2: codes were never
 * purged). Used codes are kept until then so that a replay is still recognised and ends its
 * grant (RFC 6749 §4.1.2); the caller picks `before` well after the 10-minute lifetime.
 * Returns how many were deleted.
 */
export async function purgeExpiredCodes(db: Db, before: number, batch: number): Promise<number> {
  const doomed = db.selectFrom('oauth_codes').select('code_hash').where('expires_at', '<', before).limit(batch);
  const result = await db.deleteFrom('oauth_codes').where('code_hash', 'in', doomed).executeTakeFirst();
  return Number(result.numDeletedRows);
}

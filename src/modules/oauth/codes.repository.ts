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
 * Whether this app already had a code issued for this PKCE challenge (OAUTH-CHECKLIST B10,
 * RFC 9700 §2.1.1: a client must use a fresh verifier for every authorization request).
 */
export async function challengeWasUsed(db: Db, applicationId: string, codeChallenge: string): Promise<boolean> {
  const row = await db
    .selectFrom('oauth_codes')
    .select('code_hash')
    .where('application_id', '=', applicationId)
    .where('code_challenge', '=', codeChallenge)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

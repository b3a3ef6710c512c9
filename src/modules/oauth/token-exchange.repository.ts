import type { Kysely } from 'kysely';
import type { Database } from '../../storage/database.js';
import { onPostgres } from '../../storage/dialect-of.js';
import { toBool, toId, toIdOrNull, toNum } from '../../storage/types.js';

/** An access token presented as an RFC 8693 subject token, with what its authorization allows. */
export interface SubjectToken {
  grantId: string;
  applicationId: string;
  userId: string;
  expiresAt: number;
  /** The token's audience; null for Gatehouse's own API. */
  resourceServerId: string | null;
  /** The application serving that audience. */
  audienceApplicationId: string | null;
  appOnly: boolean;
  /** The delegated scopes the person approved with the authorization (migration 2026-12-01-10). */
  delegatedScopes: string[];
}

/** The access token with this hash and its authorization, in force; undefined otherwise (one statement). */
export async function findSubjectToken(db: Kysely<Database>, tokenHash: string): Promise<SubjectToken | undefined> {
  const row = await db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
    .leftJoin('resource_servers as rs', 'rs.id', 't.resource_server_id')
    .select(['t.grant_id', 't.application_id', 't.user_id', 't.expires_at', 't.resource_server_id', 't.app_only', 'rs.application_id as rs_application_id', 'g.delegated_scopes'])
    .where('t.token_hash', '=', tokenHash)
    .where('g.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    grantId: toId(row.grant_id),
    applicationId: toId(row.application_id),
    userId: toId(row.user_id),
    expiresAt: toNum(row.expires_at),
    resourceServerId: toIdOrNull(row.resource_server_id ?? null),
    audienceApplicationId: toIdOrNull(row.rs_application_id ?? null),
    appOnly: toBool(row.app_only ?? 0),
    delegatedScopes: (row.delegated_scopes ?? '').split(' ').filter(Boolean),
  };
}

/** The token an exchange issues: for Gatehouse's own API, in the subject token's authorization. */
export interface ExchangedToken {
  subjectHash: string;
  tokenHash: string;
  scopes: readonly string[];
  now: number;
  expiresAt: number;
}

/**
 * Stores the issued access token in the subject token's grant, copied from the subject token's row
 * in one INSERT … SELECT, and only while that row and its grant are in force: a revocation that
 * deleted the subject token first leaves nothing to copy (on PostgreSQL the row is locked FOR
 * SHARE, so a revocation in flight is waited for). Returns false when nothing was written.
 */
export async function storeExchangedToken(db: Kysely<Database>, t: ExchangedToken): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    let subject = trx
      .selectFrom('oauth_access_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select(['t.grant_id', 't.application_id', 't.user_id'])
      .where('t.token_hash', '=', t.subjectHash)
      .where('g.revoked_at', 'is', null);
    if (onPostgres(trx)) subject = subject.forShare();
    const row = await subject.executeTakeFirst();
    if (!row) return false;
    await trx
      .insertInto('oauth_access_tokens')
      .values({
        token_hash: t.tokenHash,
        grant_id: toId(row.grant_id),
        application_id: toId(row.application_id),
        user_id: toId(row.user_id),
        scopes: t.scopes.join(' '),
        created_at: t.now,
        expires_at: t.expiresAt,
        resource_server_id: null,
        app_only: 0,
      })
      .execute();
    return true;
  });
}

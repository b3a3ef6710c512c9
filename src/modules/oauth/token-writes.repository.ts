/**
 * What: the token endpoint's writes on PostgreSQL as one statement each (issue #26 §1): a refresh
 * token's rotation (the UPDATE that marks it used and names its successor) or a code's redemption
 * (the UPDATE that consumes it), with the inserts of the new access and refresh tokens, as
 * data-modifying CTEs: one round trip instead of BEGIN, three statements and COMMIT.
 * Invariant: as the transactions they replace (token.service.ts): all rows or none, and only the
 * one caller whose UPDATE matched an unused, unexpired token or code writes tokens (SPEC §3,
 * OAUTH-CHECKLIST C4, F3, F5); the inserts read the UPDATE's row, so a lost race inserts nothing.
 * Tested: test/http/refresh.test.ts, test/http/token.test.ts (both databases), test/http/token-round-trips.test.ts.
 */
import { sql } from 'kysely';
import { prepareQuery } from '../../storage/prepared.js';

/** The two tokens a rotation or a redemption stores, for the grant of the row its UPDATE returned. */
interface NewTokens {
  accessHash: string;
  refreshHash: string;
  /** Space-separated, as stored. */
  accessScopes: string;
  refreshScopes: string;
  rotationKey: string;
  now: number;
  accessExpiresAt: number;
  refreshExpiresAt: number;
}

/**
 * The inserts of the new access and refresh tokens as CTEs reading `source` (a CTE returning
 * grant_id, application_id and user_id): one row each when the UPDATE matched, none otherwise.
 */
function insertNewTokens(source: string, v: NewTokens) {
  const from = sql.table(source);
  return sql`
      access as (
        insert into oauth_access_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at)
        select ${v.accessHash}, grant_id, application_id, user_id, ${v.accessScopes}, ${v.now}, ${v.accessExpiresAt} from ${from}
      ), refresh as (
        insert into oauth_refresh_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at, used_at, successor_hash, rotation_key)
        select ${v.refreshHash}, grant_id, application_id, user_id, ${v.refreshScopes}, ${v.now}, ${v.refreshExpiresAt}, null, null, ${v.rotationKey} from ${from}
      )`;
}

/** `refreshHash` is the successor the rotated token names. */
export const rotateInOneStatement = prepareQuery<NewTokens & { hash: string }>()((db, v) => ({
  compile: () =>
    sql<{ rotated: number }>`
      with rotated as (
        update oauth_refresh_tokens set used_at = ${v.now}, successor_hash = ${v.refreshHash}
        where token_hash = ${v.hash} and used_at is null and expires_at > ${v.now}
        returning grant_id, application_id, user_id
      ), ${insertNewTokens('rotated', v)}
      select count(*)::int as rotated from rotated`.compile(db),
}));

/** A code's redemption without a bot install or an incoming webhook to write beside it. */
export const redeemInOneStatement = prepareQuery<NewTokens & { codeHash: string }>()((db, v) => ({
  compile: () =>
    sql<{ consumed: number }>`
      with consumed as (
        update oauth_codes set used_at = ${v.now}
        where code_hash = ${v.codeHash} and used_at is null and expires_at > ${v.now}
        returning grant_id, application_id, user_id
      ), ${insertNewTokens('consumed', v)}
      select count(*)::int as consumed from consumed`.compile(db),
}));

/**
 * What: the token endpoint's writes, all or none (redeemCodeForTokens, rotateToSuccessors, storeAppOnlyToken), each
 * choosing its database's strategy (issue #37 §3). On PostgreSQL as one statement each (issue #26 §1): a refresh
 * token's rotation (the UPDATE that marks it used and names its successor) or a code's redemption
 * (the UPDATE that consumes it), with the inserts of the new access and refresh tokens, as
 * data-modifying CTEs: one round trip instead of BEGIN, three statements and COMMIT.
 * Invariant: as the transactions SQLite runs (below): all rows or none, and only the
 * one caller whose UPDATE matched an unused, unexpired token or code writes tokens (SPEC §3,
 * OAUTH-CHECKLIST C4, F3, F5); the inserts read the UPDATE's row, so a lost race inserts nothing.
 * Tested: test/http/refresh.test.ts, test/http/token.test.ts (both databases), test/http/token-round-trips.test.ts.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { onPostgres } from '../../storage/dialect-of.js';
import { atomically, prepareQuery, runsAtomically, type AtomicSteps } from '../../storage/prepared.js';
import { declareTables } from '../../storage/query-tables.js';
import {
  consumeCode,
  consumeCodeStep,
  insertAccessToken,
  insertAccessTokenStep,
  insertRefreshToken,
  insertRefreshTokenStep,
  rotateRefreshToken,
  rotateRefreshTokenStep,
} from './tokens.repository.js';

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
  /** RFC 8707 (issue #41): the grant's resource server, or null for Gatehouse's own API. */
  resourceServerId: string | null;
}

/**
 * The inserts of the new access and refresh tokens as CTEs reading `source` (a CTE returning
 * grant_id, application_id and user_id): one row each when the UPDATE matched, none otherwise.
 */
function insertNewTokens(source: string, v: NewTokens) {
  const from = sql.table(source);
  return sql`
      access as (
        insert into oauth_access_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at, resource_server_id)
        select ${v.accessHash}, grant_id, application_id, user_id, ${v.accessScopes}, ${v.now}, ${v.accessExpiresAt}, ${v.resourceServerId}::bigint from ${from}
      ), refresh as (
        insert into oauth_refresh_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at, used_at, successor_hash, rotation_key, resource_server_id)
        select ${v.refreshHash}, grant_id, application_id, user_id, ${v.refreshScopes}, ${v.now}, ${v.refreshExpiresAt}, null, null, ${v.rotationKey}, ${v.resourceServerId}::bigint from ${from}
      )`;
}

/** `refreshHash` is the successor the rotated token names. */
const rotateInOneStatement = prepareQuery<NewTokens & { hash: string }>()((db, v) => ({
  compile: () =>
    sql<{ rotated: number }>`
      with rotated as (
        update oauth_refresh_tokens set used_at = ${v.now}, successor_hash = ${v.refreshHash}
        where token_hash = ${v.hash} and used_at is null and expires_at > ${v.now}
        returning grant_id, application_id, user_id
      ), ${insertNewTokens('rotated', v)}
      select count(*)::int as rotated from rotated${declareTables({ changes: ['oauth_refresh_tokens'], inserts: ['oauth_access_tokens', 'oauth_refresh_tokens'] })}`.compile(db),
}));

/** A code's redemption without a bot install or an incoming webhook to write beside it. */
const redeemInOneStatement = prepareQuery<NewTokens & { codeHash: string }>()((db, v) => ({
  compile: () =>
    sql<{ consumed: number }>`
      with consumed as (
        update oauth_codes set used_at = ${v.now}
        where code_hash = ${v.codeHash} and used_at is null and expires_at > ${v.now}
        returning grant_id, application_id, user_id
      ), ${insertNewTokens('consumed', v)}
      select count(*)::int as consumed from consumed${declareTables({ changes: ['oauth_codes'], inserts: ['oauth_access_tokens', 'oauth_refresh_tokens'] })}`.compile(db),
}));

/** The access and refresh token a redemption or a rotation stores, for one grant. */
export interface TokenPair {
  grantId: string;
  applicationId: string;
  userId: string;
  accessHash: string;
  accessScopes: readonly string[];
  accessExpiresAt: number;
  refreshHash: string;
  refreshScopes: readonly string[];
  refreshExpiresAt: number;
  /** The new refresh token's rotation key (oauth.table.ts), drawn when its row is written. */
  rotationKey: () => string;
  now: number;
  /** RFC 8707 (issue #41): the grant's resource server, or null for Gatehouse's own API. */
  resourceServerId: string | null;
}

/** Writes of other modules that go with a redemption, in its transaction (issue #21 §5, issue #23). */
export interface AlongsideWrites {
  beforeTokens?: ((trx: Transaction<Database>) => Promise<void>) | undefined;
  afterTokens?: ((trx: Transaction<Database>) => Promise<void>) | undefined;
}

/** insertPair as steps of an all-or-none group (SQLite, storage/prepared.ts atomically). */
function insertPairSteps(tx: AtomicSteps, pair: TokenPair): void {
  const row = { grantId: pair.grantId, applicationId: pair.applicationId, userId: pair.userId, createdAt: pair.now, resourceServerId: pair.resourceServerId };
  insertAccessTokenStep(tx, { ...row, tokenHash: pair.accessHash, scopes: pair.accessScopes, expiresAt: pair.accessExpiresAt });
  insertRefreshTokenStep(tx, { ...row, tokenHash: pair.refreshHash, scopes: pair.refreshScopes, expiresAt: pair.refreshExpiresAt, rotationKey: pair.rotationKey() });
}

async function insertPair(trx: Transaction<Database>, pair: TokenPair): Promise<void> {
  const row = { grantId: pair.grantId, applicationId: pair.applicationId, userId: pair.userId, createdAt: pair.now, resourceServerId: pair.resourceServerId };
  await insertAccessToken(trx, { ...row, tokenHash: pair.accessHash, scopes: pair.accessScopes, expiresAt: pair.accessExpiresAt });
  await insertRefreshToken(trx, { ...row, tokenHash: pair.refreshHash, scopes: pair.refreshScopes, expiresAt: pair.refreshExpiresAt, rotationKey: pair.rotationKey() });
}

function newTokens(pair: TokenPair): NewTokens {
  return {
    accessHash: pair.accessHash,
    refreshHash: pair.refreshHash,
    accessScopes: pair.accessScopes.join(' '),
    refreshScopes: pair.refreshScopes.join(' '),
    rotationKey: pair.rotationKey(),
    now: pair.now,
    accessExpiresAt: pair.accessExpiresAt,
    refreshExpiresAt: pair.refreshExpiresAt,
    resourceServerId: pair.resourceServerId,
  };
}

/** An application's own access token (client credentials, RFC 6749 §4.4): no refresh token, no person. */
export interface AppOnlyToken {
  applicationId: string;
  /** The app's owner, who answers for it (the row's user_id). */
  ownerId: string;
  resourceServerId: string;
  accessHash: string;
  scopes: readonly string[];
  now: number;
  expiresAt: number;
  /** An id for the app's client-credentials grant on this resource server, should it have none yet. */
  newGrantId: () => string;
}

/**
 * An app-only token on PostgreSQL in one statement: the app's live client-credentials grant for the
 * resource server, or a new one when it has none (`where not exists`), and the token under it.
 */
const storeAppOnlyInOneStatement = prepareQuery<{ applicationId: string; ownerId: string; resourceServerId: string; grantId: string; accessHash: string; scopes: string; now: number; expiresAt: number }>()((db, v) => ({
  compile: () =>
    sql`
      with existing as (
        select id from oauth_grants
        where resource_server_id = ${v.resourceServerId} and application_id = ${v.applicationId} and app_only = 1 and revoked_at is null
        limit 1
      ), created as (
        insert into oauth_grants (id, application_id, user_id, scopes, created_at, revoked_at, server_id, permissions, resource_server_id, app_only)
        select ${v.grantId}::bigint, ${v.applicationId}::bigint, ${v.ownerId}::bigint, ${v.scopes}, ${v.now}, null, null, null, ${v.resourceServerId}::bigint, 1
        where not exists (select 1 from existing)
        returning id
      )
      insert into oauth_access_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at, resource_server_id, app_only)
      select ${v.accessHash}, coalesce((select id from existing), (select id from created)), ${v.applicationId}::bigint, ${v.ownerId}::bigint, ${v.scopes}, ${v.now}, ${v.expiresAt}, ${v.resourceServerId}::bigint, 1${declareTables({ reads: ['oauth_grants'], inserts: ['oauth_grants', 'oauth_access_tokens'] })}`.compile(db),
}));

/**
 * Stores an application's own access token under its one client-credentials grant for that
 * resource server (made on first use, and again after a revocation ended it), all or none: on
 * PostgreSQL one statement (storeAppOnlyInOneStatement), on SQLite one transaction. A grant per app
 * and resource server, not per token: the grants table does not grow with each call.
 */
export async function storeAppOnlyToken(db: Kysely<Database>, t: AppOnlyToken): Promise<void> {
  if (onPostgres(db)) {
    const { applicationId, ownerId, resourceServerId, accessHash, now, expiresAt } = t;
    await storeAppOnlyInOneStatement(db, { applicationId, ownerId, resourceServerId, grantId: t.newGrantId(), accessHash, scopes: t.scopes.join(' '), now, expiresAt });
    return;
  }
  await db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('oauth_grants')
      .select('id')
      .where('resource_server_id', '=', t.resourceServerId)
      .where('application_id', '=', t.applicationId)
      .where('app_only', '=', 1)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    let grantId = existing === undefined ? undefined : String(existing.id);
    if (grantId === undefined) {
      grantId = t.newGrantId();
      await trx
        .insertInto('oauth_grants')
        .values({
          id: grantId,
          application_id: t.applicationId,
          user_id: t.ownerId,
          scopes: t.scopes.join(' '),
          created_at: t.now,
          revoked_at: null,
          server_id: null,
          permissions: null,
          resource_server_id: t.resourceServerId,
          app_only: 1,
        })
        .execute();
    }
    await insertAccessToken(trx, {
      tokenHash: t.accessHash,
      grantId,
      applicationId: t.applicationId,
      userId: t.ownerId,
      scopes: t.scopes,
      createdAt: t.now,
      expiresAt: t.expiresAt,
      resourceServerId: t.resourceServerId,
      appOnly: true,
    });
  });
}

/**
 * Single use (SPEC §3, OAUTH-CHECKLIST C4): consumes the code and stores its tokens, all or none.
 * 'lost-race' when the code was already used or expired by the time its UPDATE ran. PostgreSQL
 * with nothing to write alongside: one statement, one round trip; otherwise one transaction
 * (SQLite's costs no network).
 */
export async function redeemCodeForTokens(db: Kysely<Database>, codeHash: string, pair: TokenPair, alongside?: AlongsideWrites): Promise<'redeemed' | 'lost-race'> {
  if (alongside === undefined && onPostgres(db)) {
    const { rows } = await redeemInOneStatement(db, { codeHash, ...newTokens(pair) });
    return rows[0]?.consumed === 1 ? 'redeemed' : 'lost-race';
  }
  if (alongside === undefined && runsAtomically(db)) {
    // SQLite: the UPDATE and both INSERTs in one savepoint, run in one synchronous step.
    return atomically(db, (tx) => {
      if (!consumeCodeStep(tx, codeHash, pair.now)) return 'lost-race';
      insertPairSteps(tx, pair);
      return 'redeemed';
    });
  }
  const consumed = await db.transaction().execute(async (trx) => {
    if (!(await consumeCode(trx, codeHash, pair.now))) return false;
    if (alongside?.beforeTokens) await alongside.beforeTokens(trx);
    await insertPair(trx, pair);
    if (alongside?.afterTokens) await alongside.afterTokens(trx);
    return true;
  });
  return consumed ? 'redeemed' : 'lost-race';
}

/**
 * Rotation (SPEC §3, OAUTH-CHECKLIST F3, F5): marks the refresh token `tokenHash` used, naming
 * `pair.refreshHash` its successor, and stores the pair, all or none. 'lost-race' when a
 * concurrent refresh rotated it first. PostgreSQL: one statement instead of five (BEGIN, three
 * statements, COMMIT); SQLite: one transaction, which costs no network.
 */
export async function rotateToSuccessors(db: Kysely<Database>, tokenHash: string, pair: TokenPair): Promise<'rotated' | 'lost-race'> {
  if (onPostgres(db)) {
    const { rows } = await rotateInOneStatement(db, { hash: tokenHash, ...newTokens(pair) });
    return rows[0]?.rotated === 1 ? 'rotated' : 'lost-race';
  }
  if (runsAtomically(db)) {
    // SQLite: the UPDATE and both INSERTs in one savepoint, run in one synchronous step.
    return atomically(db, (tx) => {
      if (!rotateRefreshTokenStep(tx, tokenHash, pair.refreshHash, pair.now)) return 'lost-race';
      insertPairSteps(tx, pair);
      return 'rotated';
    });
  }
  const rotated = await db.transaction().execute(async (trx) => {
    if (!(await rotateRefreshToken(trx, tokenHash, pair.refreshHash, pair.now))) return false;
    await insertPair(trx, pair);
    return true;
  });
  return rotated ? 'rotated' : 'lost-race';
}

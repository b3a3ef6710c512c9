import { sql, type InferResult, type Kysely, type Selectable, type Transaction } from 'kysely';
import { coherenceOf, declareCoherentCache, type Coherence } from '../../storage/coherence.js';
import type { Database } from '../../storage/database.js';
import { onPostgres } from '../../storage/dialect-of.js';
import { batched } from '../../storage/postgres-batch.js';
import { affectedRows, firstRow, hotLookup, prepareQuery, type AtomicSteps } from '../../storage/prepared.js';
import { toBool, toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import { toPerson } from '../directory/people.rows.js';
import type { Person } from '../directory/people.js';
import { toGrant, type Grant } from './grants.repository.js';
import type { OAuthAccessTokensTable, OAuthRefreshTokensTable } from './oauth.table.js';

type Db = Kysely<Database> | Transaction<Database>;

// DESIGN §5: the token endpoint and every bearer request run these; each is compiled once
// (storage/prepared.ts) and only its values change per call.
// The code and its grant in one statement (issue #26 §1): the exchange needs both, and on
// PostgreSQL each statement is a round trip. A code's grant is never missing while the code
// exists (revocation deletes the codes with it); the left join keeps a row for it anyway.
function codesWithGrants(db: Kysely<Database>) {
  return db
    .selectFrom('oauth_codes as c')
    .leftJoin('oauth_grants as g', 'g.id', 'c.grant_id')
    .selectAll('c')
    .select([
      'g.id as g_id',
      'g.application_id as g_application_id',
      'g.user_id as g_user_id',
      'g.scopes as g_scopes',
      'g.created_at as g_created_at',
      'g.revoked_at as g_revoked_at',
      'g.server_id as g_server_id',
      'g.permissions as g_permissions',
      'g.webhook_channel_id as g_webhook_channel_id',
      'g.resource_server_id as g_resource_server_id',
    ]);
}
type CodeRow = InferResult<ReturnType<typeof codesWithGrants>>[number];
const codeByHash = prepareQuery<{ hash: string }>()((db, v) => codesWithGrants(db).where('c.code_hash', '=', v.hash));
const codesByHashes = prepareQuery<{ hashes: string[] }>()((db, v) => codesWithGrants(db).where('c.code_hash', '=', sql<string>`any(${v.hashes}::text[])`));
const consumeCodeRow = prepareQuery<{ hash: string; now: number }>()((db, v) =>
  db.updateTable('oauth_codes').set({ used_at: v.now }).where('code_hash', '=', v.hash).where('used_at', 'is', null).where('expires_at', '>', v.now),
);
interface TokenValues {
  hash: string;
  grantId: string;
  applicationId: string;
  userId: string;
  scopes: string;
  createdAt: number;
  expiresAt: number;
  resourceServerId: string | null;
}
/** The columns access and refresh token rows share. */
function tokenColumns(v: TokenValues) {
  return {
    token_hash: v.hash,
    grant_id: v.grantId,
    application_id: v.applicationId,
    user_id: v.userId,
    scopes: v.scopes,
    created_at: v.createdAt,
    expires_at: v.expiresAt,
    resource_server_id: v.resourceServerId,
  };
}
const insertAccessTokenRow = prepareQuery<TokenValues & { appOnly: 0 | 1 }>()((db, v) => db.insertInto('oauth_access_tokens').values({ ...tokenColumns(v), app_only: v.appOnly }));
const insertRefreshTokenRow = prepareQuery<TokenValues & { rotationKey: string }>()((db, v) =>
  db.insertInto('oauth_refresh_tokens').values({ ...tokenColumns(v), used_at: null, successor_hash: null, rotation_key: v.rotationKey }),
);
const refreshTokenByHash = prepareQuery<{ hash: string }>()((db, v) => db.selectFrom('oauth_refresh_tokens').selectAll().where('token_hash', '=', v.hash));
const rotateRefreshTokenRow = prepareQuery<{ hash: string; successorHash: string; now: number }>()((db, v) =>
  db
    .updateTable('oauth_refresh_tokens')
    .set({ used_at: v.now, successor_hash: v.successorHash })
    .where('token_hash', '=', v.hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', v.now),
);

function splitScopes(scopes: string): string[] {
  return scopes.split(' ').filter(Boolean);
}

/** An authorization code row as the token endpoint needs it (the code itself is never stored). */
export interface StoredCode {
  grantId: string;
  applicationId: string;
  userId: string;
  redirectUri: string;
  redirectUriSent: boolean;
  scopes: string[];
  codeChallenge: string | null;
  expiresAt: number;
  usedAt: number | null;
  /** The grant the code was issued for (its server, its webhook channel), read with it. */
  grant: Grant | undefined;
}

async function findCode(db: Db, codeHash: string): Promise<StoredCode | undefined> {
  const row = await firstRow(codeByHash(db, { hash: codeHash }));
  return row && toStoredCode(row);
}

/**
 * PostgreSQL, outside a transaction: findCode, with the lookups of one event-loop turn sent as one
 * statement, as findRefreshTokenInTurn does for refresh tokens.
 */
export function findCodeInTurn(db: Kysely<Database>, codeHash: string): Promise<StoredCode | undefined> {
  return inTurn(codeReaders, db, selectCodes)(codeHash);
}
async function selectCodes(db: Kysely<Database>, hashes: string[]): Promise<[string, StoredCode][]> {
  const { rows } = await codesByHashes(db, { hashes });
  return rows.map((row) => [row.code_hash, toStoredCode(row)]);
}
const codeReaders: TurnReaders<StoredCode> = new WeakMap();

/**
 * The code the token endpoint redeems, with its grant: on PostgreSQL the lookups of one
 * event-loop turn share one select (one round trip, findCodeInTurn); SQLite reads it directly.
 */
export function findCodeToRedeem(db: Kysely<Database>, codeHash: string): Promise<StoredCode | undefined> {
  return onPostgres(db) ? findCodeInTurn(db, codeHash) : findCode(db, codeHash);
}

function toStoredCode(row: CodeRow): StoredCode {
  const grant =
    row.g_id === null
      ? undefined
      : toGrant({
          id: row.g_id,
          application_id: row.g_application_id as NonNullable<typeof row.g_application_id>,
          user_id: row.g_user_id as NonNullable<typeof row.g_user_id>,
          scopes: row.g_scopes as NonNullable<typeof row.g_scopes>,
          created_at: row.g_created_at as NonNullable<typeof row.g_created_at>,
          revoked_at: row.g_revoked_at,
          server_id: row.g_server_id,
          permissions: row.g_permissions,
          webhook_channel_id: row.g_webhook_channel_id,
          resource_server_id: row.g_resource_server_id,
        });
  return {
    grant,
    grantId: toId(row.grant_id),
    applicationId: toId(row.application_id),
    userId: toId(row.user_id),
    redirectUri: row.redirect_uri,
    redirectUriSent: toBool(row.redirect_uri_sent),
    scopes: splitScopes(row.scopes),
    codeChallenge: row.code_challenge,
    expiresAt: toNum(row.expires_at),
    usedAt: toNumOrNull(row.used_at),
  };
}

/**
 * Single use (SPEC §3, OAUTH-CHECKLIST C4): one atomic UPDATE that only an unused, unexpired
 * code matches. True for the one caller that consumed it.
 */
export async function consumeCode(db: Db, codeHash: string, now: number): Promise<boolean> {
  return (await affectedRows(consumeCodeRow(db, { hash: codeHash, now }))) === 1n;
}

/** consumeCode as one step of an all-or-none group (storage/prepared.ts atomically). */
export function consumeCodeStep(tx: AtomicSteps, codeHash: string, now: number): boolean {
  return tx.run(consumeCodeRow, { hash: codeHash, now }).numAffectedRows === 1n;
}

/** Fields common to access and refresh token rows. */
export interface NewTokenRow {
  tokenHash: string;
  grantId: string;
  applicationId: string;
  userId: string;
  scopes: readonly string[];
  createdAt: number;
  expiresAt: number;
  /** RFC 8707 (issue #41): the token's audience; null for Gatehouse's own API. */
  resourceServerId: string | null;
}

/** `appOnly`: the token speaks for its application alone (client credentials, RFC 6749 §4.4). */
export async function insertAccessToken(db: Db, token: NewTokenRow & { appOnly?: boolean }): Promise<void> {
  await insertAccessTokenRow(db, { ...tokenValues(token), appOnly: token.appOnly === true ? 1 : 0 });
}

export async function insertRefreshToken(db: Db, token: NewTokenRow & { rotationKey: string }): Promise<void> {
  await insertRefreshTokenRow(db, { ...tokenValues(token), rotationKey: token.rotationKey });
}

/** insertAccessToken and insertRefreshToken as steps of an all-or-none group (storage/prepared.ts atomically). */
export function insertAccessTokenStep(tx: AtomicSteps, token: NewTokenRow): void {
  tx.run(insertAccessTokenRow, { ...tokenValues(token), appOnly: 0 });
}

export function insertRefreshTokenStep(tx: AtomicSteps, token: NewTokenRow & { rotationKey: string }): void {
  tx.run(insertRefreshTokenRow, { ...tokenValues(token), rotationKey: token.rotationKey });
}

function tokenValues(token: NewTokenRow): TokenValues {
  return {
    hash: token.tokenHash,
    grantId: token.grantId,
    applicationId: token.applicationId,
    userId: token.userId,
    scopes: token.scopes.join(' '),
    createdAt: token.createdAt,
    expiresAt: token.expiresAt,
    resourceServerId: token.resourceServerId,
  };
}

/** An access token row: what a bearer request is allowed to do, and until when. */
export interface StoredAccessToken {
  grantId: string;
  applicationId: string;
  userId: string;
  scopes: string[];
  expiresAt: number;
  /** RFC 8707 (issue #41): the token's audience; Gatehouse's own API accepts only null. */
  resourceServerId: string | null;
}

/** The bearer hot path (DESIGN §5): one lookup on the primary key. */
export function findAccessToken(db: Db, tokenHash: string): Promise<StoredAccessToken | undefined> {
  return accessTokenByHash(db, tokenHash);
}

const accessTokenByHash = hotLookup({
  table: 'oauth_access_tokens',
  key: 'token_hash',
  columns: ['grant_id', 'application_id', 'user_id', 'scopes', 'expires_at', 'resource_server_id'],
  convert: (row: Pick<Selectable<OAuthAccessTokensTable>, 'grant_id' | 'application_id' | 'user_id' | 'scopes' | 'expires_at' | 'resource_server_id'>): StoredAccessToken => ({
    grantId: toId(row.grant_id),
    applicationId: toId(row.application_id),
    userId: toId(row.user_id),
    scopes: splitScopes(row.scopes),
    expiresAt: toNum(row.expires_at),
    resourceServerId: toIdOrNull(row.resource_server_id ?? null),
  }),
});

const accessTokenWithPersonByHash = prepareQuery<{ hash: string }>()((db, v) =>
  db
    .selectFrom('oauth_access_tokens')
    .innerJoin('users', 'users.id', 'oauth_access_tokens.user_id')
    .selectAll('users')
    .select(['oauth_access_tokens.grant_id', 'oauth_access_tokens.application_id', 'oauth_access_tokens.scopes', 'oauth_access_tokens.expires_at', 'oauth_access_tokens.resource_server_id'])
    .where('oauth_access_tokens.token_hash', '=', v.hash),
);

/**
 * The access token and the person it speaks for in one statement (GET /users/@me on PostgreSQL,
 * issue #26 §1: one round trip, not two), the way accounts' session lookup joins its person
 * (people.rows.ts). A token whose person is gone is no token.
 */
async function findAccessTokenWithPerson(db: Db, tokenHash: string): Promise<{ token: StoredAccessToken; person: Person } | undefined> {
  const row = await firstRow(accessTokenWithPersonByHash(db, { hash: tokenHash }));
  if (!row) return undefined;
  const person = toPerson(row);
  return {
    person,
    token: {
      grantId: toId(row.grant_id),
      applicationId: toId(row.application_id),
      userId: person.id,
      scopes: splitScopes(row.scopes),
      expiresAt: toNum(row.expires_at),
      resourceServerId: toIdOrNull(row.resource_server_id ?? null),
    },
  };
}

/** An access token as a bearer check answers it: with its person when the lookup read it too. */
export type StoredBearer = StoredAccessToken & { person?: Person };

/**
 * Remembered bearer checks per instance, ~1 KB each with the person (docs/performance.md §Memory):
 * forgotten on any change to the rows its query reads, the token and its person, or to the rows
 * whose deletes cascade into them (a grant, an application; storage/coherence.ts).
 */
const rememberedBearers = declareCoherentCache<StoredBearer>('bearer', [accessTokenWithPersonByHash], 20_000);

/**
 * The access token behind a bearer credential's hash (DESIGN §5: one primary-key lookup). On
 * PostgreSQL with Redis the token and its person are remembered by the instance and forgotten by
 * every instance before a revocation or a change to the person is acknowledged
 * (storage/coherence.ts): then a bearer check costs no round trip (issue #26 §1).
 */
export function findBearer(db: Kysely<Database>, tokenHash: string): Promise<StoredBearer | undefined> {
  const coherence = coherenceOf(db);
  if (coherence) return rememberedBearer(db, coherence, tokenHash);
  return findAccessToken(db, tokenHash);
}

/**
 * findBearer for an answer that needs the person (GET /users/@me). On PostgreSQL the token and the
 * person come in one statement (issue #26 §1: each statement is a network round trip), or from
 * the instance's memory with Redis; SQLite answers the two primary-key lookups from its row
 * cache, cheaper than a join it would run every time.
 */
export function findBearerWithPerson(db: Kysely<Database>, tokenHash: string): Promise<StoredBearer | undefined> {
  const coherence = coherenceOf(db);
  if (coherence) return rememberedBearer(db, coherence, tokenHash);
  return onPostgres(db) ? tokenWithPerson(db, tokenHash) : findAccessToken(db, tokenHash);
}

async function tokenWithPerson(db: Kysely<Database>, tokenHash: string): Promise<StoredBearer | undefined> {
  const found = await findAccessTokenWithPerson(db, tokenHash);
  return found && { ...found.token, person: found.person };
}

function rememberedBearer(db: Kysely<Database>, coherence: Coherence, tokenHash: string): Promise<StoredBearer | undefined> {
  return coherence.cache(rememberedBearers).read(tokenHash, () => tokenWithPerson(db, tokenHash));
}

export interface StoredRefreshToken {
  grantId: string;
  applicationId: string;
  userId: string;
  scopes: string[];
  expiresAt: number;
  usedAt: number | null;
  successorHash: string | null;
  rotationKey: string | null;
  /** The grant's resource server (RFC 8707), carried to the successors. */
  resourceServerId: string | null;
}

export async function findRefreshToken(db: Db, tokenHash: string): Promise<StoredRefreshToken | undefined> {
  const row = await firstRow(refreshTokenByHash(db, { hash: tokenHash }));
  return row && toRefreshToken(row);
}

/**
 * PostgreSQL, outside a transaction: findRefreshToken, with the lookups of one event-loop turn sent
 * as one statement (`token_hash = any($1)`, storage/postgres-batch.ts): the refresh grant's read
 * costs one round trip per turn rather than per request (issue #26 §1). Each caller gets the row
 * as that statement saw it, as its own select would have.
 */
export function findRefreshTokenInTurn(db: Kysely<Database>, tokenHash: string): Promise<StoredRefreshToken | undefined> {
  return inTurn(refreshReaders, db, selectRefreshTokens)(tokenHash);
}
async function selectRefreshTokens(db: Kysely<Database>, hashes: string[]): Promise<[string, StoredRefreshToken][]> {
  const { rows } = await refreshTokensByHashes(db, { hashes });
  return rows.map((row) => [row.token_hash, toRefreshToken(row)]);
}
const refreshTokensByHashes = prepareQuery<{ hashes: string[] }>()((db, v) => db.selectFrom('oauth_refresh_tokens').selectAll().where('token_hash', '=', sql<string>`any(${v.hashes}::text[])`));
const refreshReaders: TurnReaders<StoredRefreshToken> = new WeakMap();

/**
 * The refresh token the token endpoint rotates: on PostgreSQL the lookups of one event-loop turn
 * share one select (findRefreshTokenInTurn); SQLite reads it directly.
 */
export function findRefreshTokenToRotate(db: Kysely<Database>, tokenHash: string): Promise<StoredRefreshToken | undefined> {
  return onPostgres(db) ? findRefreshTokenInTurn(db, tokenHash) : findRefreshToken(db, tokenHash);
}

type TurnReaders<R> = WeakMap<Kysely<Database>, (hash: string) => Promise<R | undefined>>;

/**
 * The reader of `db` in `readers`, made on first use: the hashes asked for in one event-loop turn
 * go to `select` together, once each (storage/postgres-batch.ts), and each caller gets its row.
 */
function inTurn<R>(readers: TurnReaders<R>, db: Kysely<Database>, select: (db: Kysely<Database>, hashes: string[]) => Promise<[string, R][]>): (hash: string) => Promise<R | undefined> {
  let reader = readers.get(db);
  if (reader === undefined) {
    reader = batched<string, R>(async (hashes) => {
      const byHash = new Map(await select(db, [...new Set(hashes)]));
      return hashes.map((hash) => byHash.get(hash));
    });
    readers.set(db, reader);
  }
  return reader;
}

function toRefreshToken(row: Selectable<OAuthRefreshTokensTable>): StoredRefreshToken {
  return {
    grantId: toId(row.grant_id),
    applicationId: toId(row.application_id),
    userId: toId(row.user_id),
    scopes: splitScopes(row.scopes),
    expiresAt: toNum(row.expires_at),
    usedAt: toNumOrNull(row.used_at),
    successorHash: row.successor_hash,
    rotationKey: row.rotation_key,
    resourceServerId: toIdOrNull(row.resource_server_id ?? null),
  };
}

/**
 * Rotation (SPEC §3, OAUTH-CHECKLIST F3, F5): marks the refresh token used and names its
 * successor in one atomic UPDATE that only an unused, unexpired token matches. True for the one
 * caller that rotated it.
 */
export async function rotateRefreshToken(db: Db, tokenHash: string, successorHash: string, now: number): Promise<boolean> {
  return (await affectedRows(rotateRefreshTokenRow(db, { hash: tokenHash, successorHash, now }))) === 1n;
}

/** rotateRefreshToken as one step of an all-or-none group (storage/prepared.ts atomically). */
export function rotateRefreshTokenStep(tx: AtomicSteps, tokenHash: string, successorHash: string, now: number): boolean {
  return tx.run(rotateRefreshTokenRow, { hash: tokenHash, successorHash, now }).numAffectedRows === 1n;
}

/** Forgets the remembered consent of a person for an app (issue #3: revocation forgets it). */
export async function forgetConsent(db: Db, userId: string, applicationId: string): Promise<void> {
  await db.deleteFrom('oauth_consents').where('user_id', '=', userId).where('application_id', '=', applicationId).execute();
}

import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum, toNumOrNull } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A signing key row as stored (the private part possibly encrypted; oidc-keys.service.ts opens it). */
export interface StoredSigningKey {
  kid: string;
  alg: string;
  generation: number;
  publicJwk: string;
  privateJwk: string;
  createdAt: number;
  retiredAt: number | null;
}

/** Every key not retired, and retired ones retired after `publishedSince`. */
export async function listSigningKeys(db: Db, publishedSince: number): Promise<StoredSigningKey[]> {
  const rows = await db
    .selectFrom('oidc_signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', publishedSince)]))
    .orderBy('generation', 'desc')
    .execute();
  return rows.map((r) => ({
    kid: r.kid,
    alg: r.alg,
    generation: toNum(r.generation),
    publicJwk: r.public_jwk,
    privateJwk: r.private_jwk,
    createdAt: toNum(r.created_at),
    retiredAt: toNumOrNull(r.retired_at),
  }));
}

/**
 * The newest generation stored for an algorithm (0 when none) and whether it is still active, in
 * one read, so a decision to create the next generation and its number come from the same state.
 */
export async function newestGeneration(db: Db, alg: string): Promise<{ generation: number; active: boolean }> {
  const row = await db.selectFrom('oidc_signing_keys').select(['generation', 'retired_at']).where('alg', '=', alg).orderBy('generation', 'desc').limit(1).executeTakeFirst();
  return row === undefined ? { generation: 0, active: false } : { generation: toNum(row.generation), active: row.retired_at === null };
}

/** Inserts a key; a concurrent insert of the same (alg, generation) fails on the unique constraint. */
export async function insertSigningKey(db: Db, key: Omit<StoredSigningKey, 'retiredAt'>): Promise<void> {
  await db
    .insertInto('oidc_signing_keys')
    .values({
      kid: key.kid,
      alg: key.alg,
      generation: key.generation,
      public_jwk: key.publicJwk,
      private_jwk: key.privateJwk,
      created_at: key.createdAt,
      retired_at: null,
    })
    .execute();
}

/** Retires, at `at` (possibly ahead: issue #36 §6), every key of an algorithm below `generation` not yet given a retirement time. */
export async function retireKeysBelow(db: Db, alg: string, generation: number, at: number): Promise<void> {
  await db.updateTable('oidc_signing_keys').set({ retired_at: at }).where('alg', '=', alg).where('generation', '<', generation).where('retired_at', 'is', null).execute();
}

export interface OidcGrant {
  grantId: string;
  authTime: number;
  nonce: string | null;
  amr: string[];
  acr: string | null;
}

export async function insertOidcGrant(db: Db, grant: OidcGrant): Promise<void> {
  await db.insertInto('oidc_grants').values({ grant_id: grant.grantId, auth_time: grant.authTime, nonce: grant.nonce, amr: grant.amr.join(' '), acr: grant.acr }).execute();
}

export async function findOidcGrant(db: Db, grantId: string): Promise<OidcGrant | undefined> {
  const row = await db.selectFrom('oidc_grants').selectAll().where('grant_id', '=', grantId).executeTakeFirst();
  return row ? { grantId: toId(row.grant_id), authTime: toNum(row.auth_time), nonce: row.nonce, amr: row.amr === null ? [] : row.amr.split(' ').filter(Boolean), acr: row.acr } : undefined;
}

export interface OidcClientSettings {
  idTokenAlg: string;
  postLogoutRedirectUris: string[];
}

export async function findOidcClient(db: Db, applicationId: string): Promise<OidcClientSettings | undefined> {
  const row = await db.selectFrom('oidc_clients').select(['id_token_alg', 'post_logout_redirect_uris']).where('application_id', '=', applicationId).executeTakeFirst();
  if (!row) return undefined;
  return { idTokenAlg: row.id_token_alg, postLogoutRedirectUris: row.post_logout_redirect_uris.split('\n').filter(Boolean) };
}

/** Insert or replace an app's settings (one row per app). */
export async function saveOidcClient(db: Db, applicationId: string, settings: OidcClientSettings, now: number): Promise<void> {
  const values = { id_token_alg: settings.idTokenAlg, post_logout_redirect_uris: settings.postLogoutRedirectUris.join('\n'), updated_at: now };
  await db
    .insertInto('oidc_clients')
    .values({ application_id: applicationId, ...values })
    .onConflict((oc) => oc.column('application_id').doUpdateSet(values))
    .execute();
}

import type { Kysely } from 'kysely';

/**
 * OpenID Connect (issue #22): signing keys, the per-grant facts an ID token repeats on refresh
 * (auth_time, nonce), and per-app OpenID settings (ID token algorithm, post-logout redirect URIs).
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oidc_signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    // Several instances starting at once on one database each try generation 1 of an
    // algorithm: the unique constraint lets exactly one insert win, and the others load it.
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    /** The private JWK as JSON, or `enc:v1:` + AES-256-GCM ciphertext under GATEHOUSE_OIDC_KEY_SECRET. */
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** Set when a newer generation replaced it: no longer signs, published until its tokens expire. */
    .addColumn('retired_at', 'bigint')
    .addUniqueConstraint('oidc_signing_keys_alg_generation_uq', ['alg', 'generation'])
    .execute();

  await db.schema
    .createTable('oidc_grants')
    .addColumn('grant_id', 'bigint', (c) => c.primaryKey().references('oauth_grants.id').onDelete('cascade'))
    /** When the person signed in (OpenID Connect Core §2 auth_time), in ms. */
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('nonce', 'text')
    .execute();

  await db.schema
    .createTable('oidc_clients')
    .addColumn('application_id', 'bigint', (c) => c.primaryKey().references('applications.id').onDelete('cascade'))
    .addColumn('id_token_alg', 'text', (c) => c.notNull())
    /** Newline-separated post_logout_redirect_uris (RP-Initiated Logout 1.0 §3.1). */
    .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['oidc_clients', 'oidc_grants', 'oidc_signing_keys']) await db.schema.dropTable(table).execute();
}

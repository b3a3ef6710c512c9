import type { Kysely } from 'kysely';

/** OAuth grants, codes, access and refresh tokens, remembered consent. Frozen once released. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_grants')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('server_id', 'bigint')
    .addColumn('permissions', 'text')
    .execute();
  await db.schema.createIndex('oauth_grants_user_app_idx').on('oauth_grants').columns(['user_id', 'application_id']).execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'bigint', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('application_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('redirect_uri_sent', 'integer', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  // OAUTH-CHECKLIST B10: a challenge an app already used is refused at the authorization endpoint.
  await db.schema.createIndex('oauth_codes_challenge_idx').on('oauth_codes').columns(['application_id', 'code_challenge']).execute();

  await db.schema
    .createTable('oauth_access_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'bigint', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('application_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_access_tokens_grant_idx').on('oauth_access_tokens').column('grant_id').execute();

  await db.schema
    .createTable('oauth_refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('grant_id', 'bigint', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('application_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('successor_hash', 'text')
    // A random key per token mixed into the derivation of its successors (oauth/token.service.ts):
    // a retry within the grace window re-derives the same pair, yet an old refresh token alone
    // does not yield its successors.
    .addColumn('rotation_key', 'text')
    .execute();
  await db.schema.createIndex('oauth_refresh_tokens_grant_idx').on('oauth_refresh_tokens').column('grant_id').execute();

  await db.schema
    .createTable('oauth_consents')
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'application_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['oauth_consents', 'oauth_refresh_tokens', 'oauth_access_tokens', 'oauth_codes', 'oauth_grants']) {
    await db.schema.dropTable(table).execute();
  }
}

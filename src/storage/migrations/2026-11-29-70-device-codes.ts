import type { Kysely } from 'kysely';

/**
 * Issue #41 §2: the device authorization grant (RFC 8628). One row per device authorization
 * request: the device code's SHA-256 hash (the key the device polls with), the user code's hash
 * (what the person types on /activate), what was asked, and how the person answered. Frozen once
 * released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_device_codes')
    .addColumn('device_code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('application_id', 'bigint', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('resource_server_id', 'bigint')
    .addColumn('resource', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', 'bigint')
    .addColumn('grant_id', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_device_codes_expires').on('oauth_device_codes').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_device_codes').execute();
}

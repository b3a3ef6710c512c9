import type { Kysely } from 'kysely';

/**
 * Issue #36 §4: the check value of the server secret this database is used with (one row, id 1):
 * HMAC-SHA-256(secret, a fixed label), never the secret (core/sealed.ts secretCheck). Written by
 * the first instance that starts; an instance whose secrets do not produce it refuses to start
 * (storage/server-secret-check.ts). Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('server_secret_check')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('check_value', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('server_secret_check').execute();
}

import type { Kysely } from 'kysely';

/**
 * Issue #38 §4: passkeys (WebAuthn credentials, their public keys and signature counters) and the
 * challenges of their ceremonies (hashed, single use, short-lived). Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('credential_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('sign_count', 'bigint', (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_user').on('passkeys').column('user_id').execute();
  await db.schema
    .createTable('passkey_challenges')
    .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('passkey_challenges_expiry').on('passkey_challenges').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('passkey_challenges').execute();
  await db.schema.dropTable('passkeys').execute();
}

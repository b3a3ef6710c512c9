import type { Kysely } from 'kysely';

/**
 * Issue #38 §4: second factors. mfa_totp (one sealed seed per person, and the last time step used),
 * mfa_recovery_codes (hashed, single use), mfa_pending_sign_ins (a password accepted, waiting for
 * the second factor: hashed, short-lived), mfa_session_methods (a session's amr), and
 * oidc_grants.amr and .acr (what the grant's ID tokens carry). Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mfa_totp')
    .addColumn('user_id', 'bigint', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('sealed_secret', 'text', (c) => c.notNull())
    .addColumn('enabled_at', 'bigint')
    .addColumn('last_step', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('mfa_recovery_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('mfa_recovery_codes_user').on('mfa_recovery_codes').column('user_id').execute();
  await db.schema
    .createTable('mfa_pending_sign_ins')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_pending_sign_ins_expiry').on('mfa_pending_sign_ins').column('expires_at').execute();
  await db.schema
    .createTable('mfa_session_methods')
    .addColumn('session_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('amr', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_session_methods_user').on('mfa_session_methods').column('user_id').execute();
  await db.schema.alterTable('oidc_grants').addColumn('amr', 'text').execute();
  await db.schema.alterTable('oidc_grants').addColumn('acr', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oidc_grants').dropColumn('acr').execute();
  await db.schema.alterTable('oidc_grants').dropColumn('amr').execute();
  await db.schema.dropTable('mfa_session_methods').execute();
  await db.schema.dropTable('mfa_pending_sign_ins').execute();
  await db.schema.dropTable('mfa_recovery_codes').execute();
  await db.schema.dropTable('mfa_totp').execute();
}

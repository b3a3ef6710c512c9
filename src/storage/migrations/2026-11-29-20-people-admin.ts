import type { Kysely } from 'kysely';

/**
 * Issue #39 (operators): instance administrators (`users.is_admin`, 0 or 1), disabled people
 * (`users.disabled_at`, null while the account works, and the operator's `disabled_reason`), and
 * where and when an account was signed up (`users.signup_address`: the client address of the
 * sign-up page, null for accounts the operator created and for those older than this migration;
 * the time is `created_at`). Indexed for the operator's list, newest first. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('users').addColumn('disabled_at', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('disabled_reason', 'text').execute();
  await db.schema.alterTable('users').addColumn('signup_address', 'varchar(64)').execute();
  await db.schema.createIndex('users_created_idx').on('users').columns(['created_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('users_created_idx').execute();
  await db.schema.alterTable('users').dropColumn('signup_address').execute();
  await db.schema.alterTable('users').dropColumn('disabled_reason').execute();
  await db.schema.alterTable('users').dropColumn('disabled_at').execute();
  await db.schema.alterTable('users').dropColumn('is_admin').execute();
}

import type { Kysely } from 'kysely';

/**
 * Issue #39 (operators): an application the operator disabled (`applications.disabled_at`, null
 * while it works, and the operator's `disabled_reason`). Its tokens were revoked when it was
 * disabled; its bot token, consent screen and token endpoint refuse while this is set. Frozen once
 * released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('applications').addColumn('disabled_at', 'bigint').execute();
  await db.schema.alterTable('applications').addColumn('disabled_reason', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('applications').dropColumn('disabled_reason').execute();
  await db.schema.alterTable('applications').dropColumn('disabled_at').execute();
}

import type { Kysely } from 'kysely';

/**
 * One-time reveals (issue #24, "Managing"): a secret made by a create form (webhook URL, client
 * secret, bot token, invite link) waits here for the one GET the form redirects to, then is
 * deleted. Rows live a few minutes; the value is sealed under a key derived from the session
 * cookie, which the database never holds (modules/reveals/reveals.service.ts). Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('one_time_reveals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    /** SHA-256 of the session cookie: whose reveal it is. */
    .addColumn('session_hash', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('one_time_reveals_session_idx').on('one_time_reveals').column('session_hash').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('one_time_reveals').execute();
}

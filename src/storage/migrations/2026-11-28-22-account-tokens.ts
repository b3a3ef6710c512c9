import { sql, type Kysely } from 'kysely';

/**
 * Issue #38 §2–§3: account_tokens, the hashed single-use links of e-mail verification (24 h) and
 * password reset (30 min). Indexed by person and purpose (the pending address, a new link ending
 * the older ones), and users by lower(email) for "Forgot password?", which looks an address up
 * ignoring case. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('account_tokens_user').on('account_tokens').columns(['user_id', 'purpose']).execute();
  await sql`create index users_email_lower on users (lower(email))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index users_email_lower`.execute(db);
  await db.schema.dropTable('account_tokens').execute();
}

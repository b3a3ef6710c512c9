import { sql, type Kysely } from 'kysely';

/**
 * Issue #41 §3: dynamic client registration (RFC 7591, RFC 7592).
 * - `registered_clients`: one row per application that registered itself, with the SHA-256 of its
 *   registration access token (RFC 7592 §1), the metadata it registered that has no column in
 *   `applications` (JSON), and the address it registered from. Goes with its application
 *   (ON DELETE CASCADE).
 * - `registration_tokens`: the operator's initial access tokens (RFC 7591 §3,
 *   GATEHOUSE_CLIENT_REGISTRATION=token), SHA-256 only, each with an optional expiry.
 * - The system owner of registered applications (`applications.owner_id` is required and refers
 *   to `users`): a bot-flagged account row with id 4194303 (2^22 − 1: a snowflake of time 0, which the generator never
 *   issues, and clear of the small ids hand-written test seeds use), no
 *   password and disabled, so nobody signs in as it, no person list shows it, and no portal
 *   treats its applications as anyone's. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('registered_clients')
    .addColumn('application_id', 'bigint', (c) => c.primaryKey().references('applications.id').onDelete('cascade'))
    .addColumn('registration_token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('registered_address', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('registration_tokens')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO users (id, username, username_key, name, email_verified, bot, created_at, disabled_at, disabled_reason)
    VALUES (4194303, 'registered-clients~', 'registered-clients~', 'Registered clients', 0, 1, 0, 0, 'Owns dynamically registered applications; never signs in.')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM applications WHERE owner_id = 4194303`.execute(db);
  await sql`DELETE FROM users WHERE id = 4194303`.execute(db);
  await db.schema.dropTable('registration_tokens').execute();
  await db.schema.dropTable('registered_clients').execute();
}

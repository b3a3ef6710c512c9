import { sql, type Kysely } from 'kysely';

/**
 * Issue #38 §4: Discord's `mfa_enabled` on the person's row (1 while they have a confirmed TOTP
 * authenticator or a passkey), so /users/@me and the MFA-level checks read it with the row they
 * already read instead of a statement of their own. Kept by every change to a second factor in
 * its transaction (mfa.service.ts); existing people get theirs from what they have now.
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('mfa_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update users set mfa_enabled = 1
    where exists (select 1 from mfa_totp t where t.user_id = users.id and t.enabled_at is not null)
       or exists (select 1 from passkeys p where p.user_id = users.id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('mfa_enabled').execute();
}

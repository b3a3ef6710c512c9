import type { Kysely } from 'kysely';

/**
 * Issue #38 §5: Settings → Sessions shows the address each session signed in from
 * (`sessions.address`, recorded at sign-in; null for sessions older than this migration and for
 * the CLI). Issue #38 §4: a server may require a second factor of its moderators, Discord's
 * `mfa_level` on the guild (0 none, 1 elevated); every existing server starts at 0, as on Discord.
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('address', 'varchar(64)').execute();
  await db.schema
    .alterTable('servers')
    .addColumn('mfa_level', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('servers').dropColumn('mfa_level').execute();
  await db.schema.alterTable('sessions').dropColumn('address').execute();
}

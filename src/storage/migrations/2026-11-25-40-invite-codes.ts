import type { Kysely } from 'kysely';

/**
 * Invite codes listed again (issue #24, "Managing"): besides its hash (the only lookup), an invite
 * keeps its code sealed under the server secret (core/sealed.ts), so people with Manage server can
 * copy an active link again, as on Discord. Null for invites created before this column existed:
 * their code was never kept. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('invites').addColumn('code_sealed', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('invites').dropColumn('code_sealed').execute();
}

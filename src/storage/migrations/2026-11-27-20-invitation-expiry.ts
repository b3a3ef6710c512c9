import { sql, type Kysely } from 'kysely';

/**
 * Invitations expire (issue #36 §3): `member_invitations.expires_at`, epoch ms, after which the
 * invitation can no longer be accepted and a new one may be sent to the same person. Pending
 * invitations older than this migration get the default lifetime from when they were sent (7
 * days), so one sent long ago stops working at once instead of outliving its sender forever.
 * The column is nullable only because SQLite cannot add a NOT NULL column without a default;
 * every row has a value after this migration and every insert gives one. Frozen once released.
 */
const DEFAULT_LIFETIME_MS = 7 * 86_400_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('member_invitations').addColumn('expires_at', 'bigint').execute();
  await sql`UPDATE member_invitations SET expires_at = created_at + ${sql.lit(DEFAULT_LIFETIME_MS)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('member_invitations').dropColumn('expires_at').execute();
}

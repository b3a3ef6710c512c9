import { sql, type Kysely } from 'kysely';

/**
 * Membership by consent (issue #21 §3):
 *  - `member_invitations`: adding a person by username is an invitation they accept or decline;
 *    it is not a membership until accepted. One pending invitation per (server, person); the roles
 *    offered are a comma-separated list of role ids applied on acceptance (roles deleted meanwhile
 *    are skipped).
 *  - `members.joined_via`: how a membership came about. Only the person's own act ('created' the
 *    server, joined by 'invite_link', accepted an 'invitation') counts as consent to direct
 *    messages from the bots they share the server with; 'operator' (CLI), 'bot_install' and
 *    'added' (every membership older than this migration whose origin is unknown) do not.
 *    Owners' rows are marked 'created', since creating the server is their own act.
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('member_invitations')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('inviter_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role_ids', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('member_invitations_server_user_uq', ['server_id', 'user_id'])
    .execute();
  await db.schema.createIndex('member_invitations_user_idx').on('member_invitations').column('user_id').execute();

  await db.schema.alterTable('members').addColumn('joined_via', 'text', (c) => c.notNull().defaultTo('added')).execute();
  await sql`UPDATE members SET joined_via = 'created' WHERE EXISTS (SELECT 1 FROM servers WHERE servers.id = members.server_id AND servers.owner_id = members.user_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('members').dropColumn('joined_via').execute();
  await db.schema.dropTable('member_invitations').execute();
}

import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Issue #40 §2: Discord's guild commands, an app's commands registered for one server
 * (`/applications/{id}/guilds/{guild_id}/commands`). `guild_id` null: a global command. A name is
 * unique per app among its global commands, and per app and server among that server's: two
 * partial unique indexes replace the one constraint on (application_id, name). PostgreSQL drops
 * that constraint; SQLite cannot drop a table constraint, so its table is rebuilt (nothing
 * references application_commands, so no foreign key action runs).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema.alterTable('application_commands').addColumn('guild_id', 'bigint', (c) => c.references('servers.id').onDelete('cascade')).execute();
    await db.schema.alterTable('application_commands').dropConstraint('application_commands_name_unique').execute();
  } else {
    await rebuildOnSqlite(db, true);
  }
  await db.schema.createIndex('application_commands_global_name_unique').on('application_commands').columns(['application_id', 'name']).unique().where(sql.ref('guild_id'), 'is', null).execute();
  await db.schema.createIndex('application_commands_guild_name_unique').on('application_commands').columns(['guild_id', 'application_id', 'name']).unique().where(sql.ref('guild_id'), 'is not', null).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from application_commands where guild_id is not null`.execute(db);
  await db.schema.dropIndex('application_commands_guild_name_unique').execute();
  await db.schema.dropIndex('application_commands_global_name_unique').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema.alterTable('application_commands').dropColumn('guild_id').execute();
    await db.schema.alterTable('application_commands').addUniqueConstraint('application_commands_name_unique', ['application_id', 'name']).execute();
  } else {
    await rebuildOnSqlite(db, false);
  }
}

/** application_commands anew, with `guild_id` (and no unique constraint) or without it (and the old one), its rows copied. */
async function rebuildOnSqlite(db: Kysely<unknown>, withGuild: boolean): Promise<void> {
  let table = db.schema
    .createTable('application_commands_rebuilt')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('type', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('default_member_permissions', 'text')
    .addColumn('integration_types', 'integer')
    .addColumn('contexts', 'integer');
  table = withGuild
    ? table.addColumn('guild_id', 'bigint', (c) => c.references('servers.id').onDelete('cascade'))
    : table.addUniqueConstraint('application_commands_name_unique', ['application_id', 'name']);
  await table.execute();
  await sql`insert into application_commands_rebuilt (id, application_id, name, description, options, type, created_at, default_member_permissions, integration_types, contexts)
    select id, application_id, name, description, options, type, created_at, default_member_permissions, integration_types, contexts from application_commands`.execute(db);
  await db.schema.dropTable('application_commands').execute();
  await db.schema.alterTable('application_commands_rebuilt').renameTo('application_commands').execute();
}

import type { Kysely } from 'kysely';

/** Application commands, server and user installs, direct-message channels. Frozen once released. */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Bot requests authenticate by token hash: one indexed lookup (DESIGN §5 hot path).
  await db.schema.createIndex('applications_bot_token_idx').on('applications').column('bot_token_hash').execute();
  await db.schema
    .createTable('application_commands')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('type', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('application_commands_name_unique', ['application_id', 'name'])
    .execute();

  await db.schema
    .createTable('server_installs')
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('installer_id', 'bigint', (c) => c.notNull().references('users.id'))
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('commands', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('server_installs_pk', ['application_id', 'server_id'])
    .execute();
  await db.schema.createIndex('server_installs_server_idx').on('server_installs').column('server_id').execute();

  await db.schema
    .createTable('user_installs')
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_installs_pk', ['application_id', 'user_id'])
    .execute();
  await db.schema.createIndex('user_installs_user_idx').on('user_installs').column('user_id').execute();

  await db.schema
    .createTable('dm_channels')
    .addColumn('channel_id', 'bigint', (c) => c.primaryKey().references('channels.id').onDelete('cascade'))
    .addColumn('user_low', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('user_high', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addUniqueConstraint('dm_channels_pair_unique', ['user_low', 'user_high'])
    .execute();
  await db.schema.createIndex('dm_channels_high_idx').on('dm_channels').column('user_high').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['dm_channels', 'user_installs', 'server_installs', 'application_commands']) await db.schema.dropTable(table).execute();
  await db.schema.dropIndex('applications_bot_token_idx').execute();
}

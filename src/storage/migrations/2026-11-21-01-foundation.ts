import type { Kysely } from 'kysely';

/**
 * People, sessions, servers, roles, members, channels, invites, messages and worker leases.
 * Frozen once released: later changes go in a new, later-dated migration (DESIGN §9.4).
 * Portable types only: bigint (SQLite: INTEGER affinity), text, integer 0/1 for booleans.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('username_key', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('avatar_url', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('bot', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('application_id', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('servers')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('icon_url', 'text')
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('roles')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('color', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('managed_application_id', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('roles_server_idx').on('roles').column('server_id').execute();

  await db.schema
    .createTable('members')
    .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('nickname', 'text')
    .addColumn('joined_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('members_pk', ['server_id', 'user_id'])
    .execute();
  await db.schema.createIndex('members_user_idx').on('members').column('user_id').execute();

  await db.schema
    .createTable('member_roles')
    .addColumn('server_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('role_id', 'bigint', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('member_roles_pk', ['server_id', 'user_id', 'role_id'])
    .addForeignKeyConstraint('member_roles_member_fk', ['server_id', 'user_id'], 'members', ['server_id', 'user_id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .execute();
  await db.schema.createIndex('member_roles_role_idx').on('member_roles').column('role_id').execute();

  await db.schema
    .createTable('channels')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('server_id', 'bigint', (c) => c.references('servers.id').onDelete('cascade'))
    .addColumn('type', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('topic', 'text')
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('channels_server_idx').on('channels').column('server_id').execute();

  await db.schema
    .createTable('invites')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('creator_id', 'bigint', (c) => c.notNull().references('users.id'))
    .addColumn('max_uses', 'integer')
    .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('author_id', 'bigint', (c) => c.notNull())
    .addColumn('webhook_id', 'bigint')
    .addColumn('application_id', 'bigint')
    .addColumn('author_name', 'text')
    .addColumn('author_avatar_url', 'text')
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('embeds', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('edited_at', 'bigint')
    .execute();
  // The channel view reads the newest messages of one channel: (channel_id, id) serves it.
  await db.schema.createIndex('messages_channel_idx').on('messages').columns(['channel_id', 'id']).execute();

  await db.schema
    .createTable('worker_leases')
    .addColumn('worker_id', 'integer', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['worker_leases', 'messages', 'invites', 'channels', 'member_roles', 'members', 'roles', 'servers', 'sessions', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}

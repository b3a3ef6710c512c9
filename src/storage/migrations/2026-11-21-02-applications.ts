import type { Kysely } from 'kysely';

/** OAuth2 applications (developer portal). Frozen once released. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('applications')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('icon_url', 'text')
    .addColumn('confidential', 'integer', (c) => c.notNull())
    .addColumn('client_secret_hash', 'text')
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('bot_public', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('bot_require_code_grant', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bot_user_id', 'bigint')
    .addColumn('bot_token_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('applications_owner_idx').on('applications').column('owner_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('applications').execute();
}

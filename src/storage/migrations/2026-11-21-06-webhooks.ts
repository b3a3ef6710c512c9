import type { Kysely } from 'kysely';

/**
 * Incoming webhooks, and a per-channel webhook counter: SPEC §8's 10 webhooks per channel is
 * enforced by one conditional UPDATE on the channel row (… WHERE webhook_count < 10), which is
 * atomic on SQLite and PostgreSQL alike. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('avatar_url', 'text')
    .addColumn('application_id', 'bigint')
    .addColumn('creator_id', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_channel_idx').on('webhooks').column('channel_id').execute();
  await db.schema.createIndex('webhooks_server_idx').on('webhooks').column('server_id').execute();
  await db.schema.alterTable('channels').addColumn('webhook_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // Message routes of a webhook look up "this message, created by this webhook".
  await db.schema.createIndex('messages_webhook_idx').on('messages').columns(['webhook_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('messages_webhook_idx').execute();
  await db.schema.alterTable('channels').dropColumn('webhook_count').execute();
  await db.schema.dropTable('webhooks').execute();
}

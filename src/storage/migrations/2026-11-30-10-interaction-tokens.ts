import type { Kysely } from 'kysely';

/**
 * Issue #40 §2: interactions an app may answer later. One row per command invoked from the chat:
 * the token's SHA-256 hash (the token authorizes the callback and follow-ups for 15 minutes, on any
 * instance), who invoked what where, whether it was acknowledged, and the answer's message.
 * `message_interactions` is what a message shows of the command it answers (Discord's
 * `interaction_metadata`): kept beside `messages` rather than in it, so the hot path's insert and
 * reads stay as they are; `loading` is Discord's flag LOADING (128) of a deferred answer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('interactions')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('bot_user_id', 'bigint', (c) => c.notNull())
    .addColumn('channel_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('command_name', 'text', (c) => c.notNull())
    .addColumn('ephemeral', 'integer', (c) => c.notNull())
    .addColumn('acknowledged', 'integer', (c) => c.notNull())
    .addColumn('original_message_id', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('interactions_expires').on('interactions').column('expires_at').execute();
  await db.schema
    .createTable('message_interactions')
    .addColumn('message_id', 'bigint', (c) => c.primaryKey())
    .addColumn('interaction_id', 'bigint', (c) => c.notNull())
    .addColumn('interaction_type', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('command_name', 'text', (c) => c.notNull())
    .addColumn('loading', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('message_interactions_interaction').on('message_interactions').column('interaction_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('message_interactions').execute();
  await db.schema.dropTable('interactions').execute();
}

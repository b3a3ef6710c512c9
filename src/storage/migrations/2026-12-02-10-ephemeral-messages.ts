import type { Kysely } from 'kysely';

/**
 * Issue #40 §2: an app's ephemeral messages (Discord's flag 64), seen by the person who used the
 * command alone. Kept beside `messages`, never in it, so no read of a channel's messages (pages,
 * bots' REST reads, search, retention) can show one to anyone else. A row lives as long as its
 * interaction's token (15 minutes), which is what edits it: the interaction's purge removes it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ephemeral_messages')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('interaction_id', 'bigint', (c) => c.notNull().references('interactions.id').onDelete('cascade'))
    .addColumn('channel_id', 'bigint', (c) => c.notNull())
    .addColumn('recipient_id', 'bigint', (c) => c.notNull())
    .addColumn('author_id', 'bigint', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('embeds', 'text', (c) => c.notNull())
    .addColumn('loading', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('edited_at', 'bigint')
    .execute();
  await db.schema.createIndex('ephemeral_messages_recipient').on('ephemeral_messages').columns(['recipient_id', 'channel_id']).execute();
  await db.schema.createIndex('ephemeral_messages_interaction').on('ephemeral_messages').column('interaction_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ephemeral_messages').execute();
}

import type { Kysely } from 'kysely';

/**
 * Unread state (issue #24 "Reading"): per person and channel, the newest message id they have
 * read. The primary key (user_id, channel_id) is the one lookup the channel view and the channel
 * list make; rows go with the person or the channel. No foreign key to messages: a deleted
 * message leaves the mark where it was, and ids only grow. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('channel_reads')
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('last_read_id', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('channel_reads_pk', ['user_id', 'channel_id'])
    .execute();
  // Deleting a channel cascades here: without an index on channel_id that is a full scan.
  await db.schema.createIndex('channel_reads_channel_idx').on('channel_reads').column('channel_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('channel_reads').execute();
}

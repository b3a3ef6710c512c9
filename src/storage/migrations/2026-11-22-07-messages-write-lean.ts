import type { Kysely } from 'kysely';

/**
 * Drops messages_webhook_idx (webhook_id, id). Every query of a webhook's messages names the
 * message's id as well (messages.repository.ts: get, edit, delete), so the primary key finds the
 * row and the index only cost writes: every stored message added an entry at a random place in
 * it, and on SQLite every commit wrote that page to the WAL again. Measured on SQLite, ten
 * messages per commit: 27–30 → 19 µs of database work per message (docs/performance.md §Indexes on messages).
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('messages_webhook_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('messages_webhook_idx').on('messages').columns(['webhook_id', 'id']).execute();
}

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';

/**
 * Issue #6 (docs/performance.md §Seventh round): every stored message adds an entry to each index
 * of `messages`, and on SQLite each commit writes every page it touched to the WAL again. The
 * table keeps the indexes its reads need (the primary key, and (channel_id, id) for a channel's
 * newest messages) and no other. Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function messageIndexes(): Promise<string[]> {
  if (testDialect === 'sqlite') {
    const { rows } = await sql<{ name: string; origin: string }>`select name, origin from pragma_index_list('messages')`.execute(t.services.db);
    // origin 'pk' is the primary key's own index (a bigint key is not SQLite's rowid).
    return rows.map((r) => (r.origin === 'pk' ? 'primary key' : r.name)).sort();
  }
  const { rows } = await sql<{ name: string; primary: boolean }>`
    select c.relname as name, i.indisprimary as primary from pg_index i
    join pg_class c on c.oid = i.indexrelid join pg_class tbl on tbl.oid = i.indrelid
    where tbl.relname = 'messages' and tbl.relnamespace = current_schema()::regnamespace`.execute(t.services.db);
  return rows.map((r) => (r.primary ? 'primary key' : r.name)).sort();
}

describe(`the messages table (${testDialect})`, () => {
  it('has only the primary key and the channel index: no index is maintained on every write for a read that has none', async () => {
    expect(await messageIndexes()).toEqual(['messages_channel_idx', 'primary key']);
  });

  it.skipIf(testDialect !== 'sqlite')('finds a webhook’s message by its primary key (SQLite’s plan; PostgreSQL plans by table statistics)', async () => {
    const { rows } = await sql<{ detail: string }>`explain query plan select id from messages where id = ${'1'} and webhook_id = ${'2'}`.execute(t.services.db);
    expect(rows.map((r) => r.detail).join(' | ')).toMatch(/USING INDEX sqlite_autoindex_messages_1 \(id=\?\)/);
  });
});

import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';

/**
 * Issue #6 (docs/performance.md §Indexes on messages): every stored message adds an entry to each index
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

  it('finds a webhook’s message by its primary key', async () => {
    const lookup = t.services.db.selectFrom('messages').select('id').where('id', '=', '1').where('webhook_id', '=', '2').compile();
    const explain = (prefix: string) => CompiledQuery.raw(`${prefix} ${lookup.sql}`, [...lookup.parameters]);
    if (testDialect === 'sqlite') {
      const { rows } = await t.services.db.executeQuery<{ detail: string }>(explain('explain query plan'));
      expect(rows.map((r) => r.detail).join(' | ')).toMatch(/USING INDEX sqlite_autoindex_messages_1 \(id=\?\)/);
      return;
    }
    // PostgreSQL plans by table statistics and scans a small table whole: ask what it would use
    // once the table is large enough for an index to win.
    const plan = await t.services.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(explain('explain'));
      return rows.map((r) => r['QUERY PLAN']).join(' | ');
    });
    // Messages are partitioned by id on PostgreSQL (storage/message-partitions.ts): the lookup is
    // pruned to the one partition that can hold the id and uses that partition's primary key.
    expect(plan).toMatch(/Index (Only )?Scan using messages_\w*pkey on messages_\w+/);
    expect(plan).not.toMatch(/Append/);
  });
});

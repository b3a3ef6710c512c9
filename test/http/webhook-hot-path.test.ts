import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { call, createTestWebhook, type TestWebhook } from './webhook-url.fixtures.js';

/**
 * Issue #25 item 1: the hot-path cache contract checked by behaviour, not by comments. The row
 * cache (src/storage/sqlite/row-cache.ts) must never answer a message that was deleted, and the execute
 * path must keep it useful: a write added there that ends the cache's generation on every request
 * would make every lookup a miss, and fails here instead of only in bench/.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function execute(w: TestWebhook, content: string): Promise<{ id: string; content: string }> {
  // Past the per-webhook rate limit's window, so each execute is accepted.
  t.clock.advance(2000);
  const res = await call(t, 'POST', `${w.path}?wait=true`, { content });
  expect(res.statusCode).toBe(200);
  return res.json();
}

const rowCacheNote = testDialect === 'postgres' ? 'skipped: PostgreSQL has no row cache (several instances may share the database)' : '';
if (rowCacheNote) console.log(`webhook-hot-path: "100 executes cost at most one row-cache miss" ${rowCacheNote}`);

describe(`webhook hot path (${testDialect})`, () => {
  it('execute with wait, GET the message, DELETE it, GET again: 404 10008, never the deleted message', async () => {
    const w = await createTestWebhook(t);
    const posted = await execute(w, 'short-lived');
    const url = `${w.path}/messages/${posted.id}`;
    const before = await call(t, 'GET', url);
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual(posted);
    expect((await call(t, 'DELETE', url)).statusCode).toBe(204);
    const after = await call(t, 'GET', url);
    expect(after.statusCode).toBe(404);
    expect(after.json()).toEqual({ code: 10008, message: 'Unknown Message' });
  });

  it.skipIf(testDialect === 'postgres')('100 executes on one webhook cost at most one row-cache miss', async () => {
    const counters = t.database.handle.rowCache;
    expect(counters, 'the SQLite handle exposes its row cache counters').toBeDefined();
    const w = await createTestWebhook(t);
    const misses = counters?.misses ?? 0;
    const hits = counters?.hits ?? 0;
    for (let i = 0; i < 100; i += 1) await execute(w, `message ${i}`);
    expect((counters?.misses ?? 0) - misses).toBeLessThanOrEqual(1);
    expect((counters?.hits ?? 0) - hits).toBeGreaterThanOrEqual(99);
  });
});

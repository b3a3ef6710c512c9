import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryTiming } from '../../src/storage/connect.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { call, createTestWebhook, type TestWebhook } from './webhook-url.fixtures.js';

/**
 * Issue #26 §1 on PostgreSQL: an execute costs one statement (the token check and the insert
 * together), executes of one event-loop turn share it, and a webhook deleted or regenerated after
 * this instance saw it is refused by that same statement.
 */
const onPostgres = testDialect === 'postgres';
if (!onPostgres) console.log('webhook-execute-round-trips: skipped on SQLite (its row cache and group commit are tested in webhook-hot-path and test/storage)');

describe.skipIf(!onPostgres)('webhook execute round trips on PostgreSQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  /** The statements `run` sends, by operation. */
  async function statementsOf(run: () => Promise<unknown>): Promise<QueryTiming[]> {
    const seen: QueryTiming[] = [];
    const stop = t.database.handle.observeQueries((timing) => seen.push(timing));
    try {
      await run();
    } finally {
      stop();
    }
    return seen;
  }

  const execute = (w: TestWebhook, content: string) => call(t, 'POST', `${w.path}?wait=true`, { content });

  it('an execute on a webhook this instance has seen is one statement: no select before the insert', async () => {
    const w = await createTestWebhook(t, { name: 'Deployer' });
    t.clock.advance(2000);
    expect((await execute(w, 'first')).statusCode).toBe(200);
    for (let i = 0; i < 5; i += 1) {
      t.clock.advance(2000);
      let res: Awaited<ReturnType<typeof execute>> | undefined;
      const statements = await statementsOf(async () => {
        res = await execute(w, `again ${i}`);
      });
      expect(res?.statusCode).toBe(200);
      expect(res?.json()).toMatchObject({ content: `again ${i}`, channel_id: w.channel.id, author: { username: 'Deployer' } });
      expect(statements.map((s) => s.operation)).toEqual(['insert']);
    }
  });

  it('executes arriving in one turn share one multi-row statement, each acknowledged with its own message', async () => {
    const hooks: TestWebhook[] = [];
    for (let i = 0; i < 8; i += 1) hooks.push(await createTestWebhook(t));
    t.clock.advance(2000);
    for (const w of hooks) expect((await execute(w, 'warm')).statusCode).toBe(200);
    t.clock.advance(2000);
    let answers: Awaited<ReturnType<typeof execute>>[] = [];
    const statements = await statementsOf(async () => {
      answers = await Promise.all(hooks.map((w, i) => execute(w, `together ${i}`)));
    });
    expect(answers.map((a) => a.statusCode)).toEqual(hooks.map(() => 200));
    expect(answers.map((a) => (a.json() as { content: string }).content)).toEqual(hooks.map((_, i) => `together ${i}`));
    expect(statements.length).toBeLessThan(hooks.length);
  });

  it('a webhook deleted after this instance saw it is refused by the insert (404 10015), and nothing is stored', async () => {
    const w = await createTestWebhook(t);
    t.clock.advance(2000);
    expect((await execute(w, 'before')).statusCode).toBe(200);
    // Deleted behind this instance's back, as another instance would.
    await t.database.handle.db.deleteFrom('webhooks').where('id', '=', w.webhook.id).execute();
    t.clock.advance(2000);
    const res = await execute(w, 'after delete');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 10015 });
    const stored = await t.database.handle.db.selectFrom('messages').select('id').where('content', '=', 'after delete').execute();
    expect(stored).toEqual([]);
  });

  it('a token regenerated elsewhere refuses the old URL at once (401 50027) and accepts the new one', async () => {
    const w = await createTestWebhook(t);
    t.clock.advance(2000);
    expect((await execute(w, 'before')).statusCode).toBe(200);
    const fresh = await createTestWebhook(t);
    // Another instance regenerated the token: the row now holds another hash.
    await t.database.handle.db.updateTable('webhooks').set({ token_hash: fresh.webhook.tokenHash }).where('id', '=', w.webhook.id).execute();
    t.clock.advance(2000);
    const old = await execute(w, 'old token');
    expect(old.statusCode).toBe(401);
    expect(old.json()).toMatchObject({ code: 50027 });
    t.clock.advance(2000);
    const renewed = await call(t, 'POST', `/api/v1/webhooks/${w.webhook.id}/${fresh.token}?wait=true`, { content: 'new token' });
    expect(renewed.statusCode).toBe(200);
  });
});

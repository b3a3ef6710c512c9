import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { statementsDuring, TEST_REDIS_URL, testDialect } from '../support/database.js';
import { given, type TestClient } from '../support/given.js';
import type { Insertable } from 'kysely';
import { findApplicationByClientId } from '../../src/modules/applications/applications.service.js';
import type { ApplicationsTable } from '../../src/modules/applications/applications.table.js';

/**
 * Issue #37 §4: an INSERT … ON CONFLICT DO UPDATE of a remembered row is a change like an update,
 * for both caches: SQLite's row cache, and on PostgreSQL with Redis the instances' coherent cache
 * (storage/coherence.ts), which learns its writes from Kysely's operation tree
 * (storage/committed-changes.ts). The client lookup of the OAuth endpoints is remembered by both.
 */
const remembers = testDialect === 'sqlite' || TEST_REDIS_URL !== undefined;
if (!remembers) console.log('cache-upsert: skipped on PostgreSQL without TEST_REDIS_URL (nothing is remembered)');

describe.skipIf(!remembers)('a cached row rewritten by an upsert', () => {
  let t: TestApp;
  let client: TestClient;
  beforeAll(async () => {
    t = await createTestApp({ env: TEST_REDIS_URL && testDialect === 'postgres' ? { REDIS_URL: TEST_REDIS_URL } : {} });
    client = await given.publicApp(t, { name: 'Before' });
  });
  afterAll(async () => t?.close());

  async function rememberedName(): Promise<string | undefined> {
    // The coherent cache answers from memory once its lease has started (a heartbeat came back).
    for (let i = 0; i < 100; i++) {
      const { result, statements } = await statementsDuring(t.database.handle, () => findApplicationByClientId(t.services, client.clientId));
      if (statements.length === 0) return result?.name;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the client lookup was never answered from memory');
  }

  it('is read afresh by the next lookup; an upsert that does nothing leaves it remembered', async () => {
    expect(await rememberedName()).toBe('Before');
    // The row as stored, inserted again: the conflict is on its id.
    const row = (await t.services.db.selectFrom('applications').selectAll().where('id', '=', client.clientId).executeTakeFirstOrThrow()) as Insertable<ApplicationsTable>;
    await t.services.db.insertInto('applications').values(row).onConflict((oc) => oc.column('id').doNothing()).execute();
    const untouched = await statementsDuring(t.database.handle, () => findApplicationByClientId(t.services, client.clientId));
    expect(untouched.result?.name).toBe('Before');
    await t.services.db
      .insertInto('applications')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ name: 'After' }))
      .execute();
    expect((await findApplicationByClientId(t.services, client.clientId))?.name).toBe('After');
  });
});

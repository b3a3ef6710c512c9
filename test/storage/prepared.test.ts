import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { declareCoherentCache } from '../../src/storage/coherence.js';
import { affectedRows, firstRow, hotLookup, prepareQuery } from '../../src/storage/prepared.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { createPerson } from '../support/oauth-factory.js';

/**
 * DESIGN §5: hot-path queries are written with Kysely once, compiled once per dialect and run
 * with each call's values (src/storage/prepared.ts). Runs on SQLite, and on PostgreSQL when
 * TEST_DATABASE_URL is set.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe(`prepared hot-path queries (${testDialect})`, () => {
  it('are built once and then run with the values of each call', async () => {
    let builds = 0;
    const personById = prepareQuery<{ id: string }>()((db, v) => {
      builds += 1;
      return db.selectFrom('users').select(['id', 'username']).where('id', '=', v.id);
    });
    const a = await createPerson(t);
    const b = await createPerson(t);
    const rowA = await firstRow(personById(t.services.db, { id: a.id }));
    const rowB = await firstRow(personById(t.services.db, { id: b.id }));
    expect(rowA?.username).toBe(a.username);
    expect(rowB?.username).toBe(b.username);
    expect(await firstRow(personById(t.services.db, { id: '1' }))).toBeUndefined();
    expect(builds).toBe(1);
  });

  it('replace only their placeholders: constants written into the query stay', async () => {
    const rename = prepareQuery<{ id: string; name: string }>()((db, v) => db.updateTable('users').set({ name: v.name }).where('id', '=', v.id).where('bot', '=', 0));
    const renameBot = prepareQuery<{ id: string; name: string }>()((db, v) => db.updateTable('users').set({ name: v.name }).where('id', '=', v.id).where('bot', '=', 1));
    const person = await createPerson(t);
    // The constant `bot = 1` is part of the statement: a person is not a bot, nothing changes.
    expect(await affectedRows(renameBot(t.services.db, { id: person.id, name: 'Not Applied' }))).toBe(0n);
    expect(await affectedRows(rename(t.services.db, { id: person.id, name: 'Renamed Once' }))).toBe(1n);
    const row = await t.services.db.selectFrom('users').select('name').where('id', '=', person.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('Renamed Once');
    // The same statement with other values touches another row only.
    const other = await createPerson(t);
    expect(await affectedRows(rename(t.services.db, { id: other.id, name: 'Renamed Twice' }))).toBe(1n);
    expect((await t.services.db.selectFrom('users').select('name').where('id', '=', person.id).executeTakeFirstOrThrow()).name).toBe('Renamed Once');
  });

  it('run inside the caller\'s transaction when given one: a rollback undoes them', async () => {
    const rename = prepareQuery<{ id: string; name: string }>()((db, v) => db.updateTable('users').set({ name: v.name }).where('id', '=', v.id));
    const person = await createPerson(t, { name: 'Before' });
    await expect(
      t.services.db.transaction().execute(async (trx) => {
        expect(await affectedRows(rename(trx, { id: person.id, name: 'Inside' }))).toBe(1n);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await t.services.db.selectFrom('users').select('name').where('id', '=', person.id).executeTakeFirstOrThrow()).name).toBe('Before');
  });

  it('refuse a placeholder that does not become a parameter, when first run', async () => {
    // Turned into text while the query is built, the placeholder would be bound as the constant
    // "[object Object]" and every call's value dropped.
    const misused = prepareQuery<{ name: string }>()((db, v) => db.selectFrom('users').select('id').where('username', '=', `${v.name}`));
    expect(() => misused(t.services.db, { name: 'someone' })).toThrow(/placeholder "name" is not a parameter/);
  });

  it('are timed like every other statement (db_query_duration_seconds by operation)', async () => {
    const seen: string[] = [];
    const stop = t.database.handle.observeQueries((timing) => seen.push(`${timing.operation}:${timing.failed ? 'error' : 'ok'}`));
    try {
      const count = prepareQuery<{ id: string }>()((db, v) => db.selectFrom('users').select('id').where('id', '=', v.id));
      await count(t.services.db, { id: '1' });
      expect(seen).toContain('select:ok');
    } finally {
      stop();
    }
  });
});

// Issue #37 §4: both caches are declared by the lookup itself, and PostgreSQL's learns its tables
// from the compiled query (with the tables whose deletes cascade into them), not from a list.
describe('what a declared cache watches', () => {
  it('a prepared query knows the tables its operation tree names; raw sql is not known', () => {
    const joined = prepareQuery<{ id: string }>()((db, v) => db.selectFrom('oauth_access_tokens').innerJoin('users', 'users.id', 'oauth_access_tokens.user_id').selectAll('users').where('oauth_access_tokens.token_hash', '=', v.id));
    expect([...(joined.tables ?? [])].sort()).toEqual(['oauth_access_tokens', 'users']);
    const raw = prepareQuery<{ id: string }>()((db, v) => ({ compile: () => sql`select * from users where id = ${v.id}`.compile(db) }));
    expect(raw.tables).toBeUndefined();
  });

  it('a lookup remembered across instances declares a coherent cache over its query’s tables and those that cascade into them', () => {
    const lookup = hotLookup({ table: 'applications', key: 'id', convert: (row) => ({ id: String(row.id) }), acrossInstances: { name: 'test-applications', maxEntries: 10 } });
    expect([...(lookup.tables ?? [])]).toEqual(['applications']);
    const declared = declareCoherentCache('test-bearer-like', [prepareQuery<{ id: string }>()((db, v) => db.selectFrom('oauth_access_tokens').innerJoin('users', 'users.id', 'oauth_access_tokens.user_id').selectAll().where('token_hash', '=', v.id))], 10);
    expect(declared.tables).toEqual(['applications', 'oauth_access_tokens', 'oauth_grants', 'resource_servers', 'users']);
    expect(() => declareCoherentCache('test-raw', [{ tables: undefined }], 10)).toThrow(/raw sql must declare/);
  });
});

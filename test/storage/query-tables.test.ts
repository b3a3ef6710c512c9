import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { tablesChanged, tablesNamed } from '../../src/storage/query-tables.js';

/**
 * storage/query-tables.ts: what a query reads and changes comes from Kysely's operation tree
 * (issue #37 §4), so the caches learn their tables from the queries themselves.
 */
const db = new Kysely<Record<string, Record<string, unknown>>>({
  dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new PostgresIntrospector(k), createQueryCompiler: () => new PostgresQueryCompiler() },
});
const sorted = (tables: ReadonlySet<string> | undefined) => (tables === undefined ? undefined : [...tables].sort());

describe('the tables a query names', () => {
  it('a select with joins and aliases names every table it reads, not its aliases', () => {
    const query = db.selectFrom('oauth_access_tokens as t').innerJoin('users as u', 'u.id', 't.user_id').leftJoin('applications', 'applications.id', 't.application_id').selectAll().compile();
    expect(sorted(tablesNamed(query.query))).toEqual(['applications', 'oauth_access_tokens', 'users']);
  });

  it('a CTE name is not a table; the tables inside it are', () => {
    const query = db.with('recent', (w) => w.selectFrom('messages').select('id')).selectFrom('recent').selectAll().compile();
    expect(sorted(tablesNamed(query.query))).toEqual(['messages']);
  });

  it('raw SQL is not known', () => {
    expect(tablesNamed(sql`select * from users`.compile(db).query)).toBeUndefined();
    expect(tablesNamed(db.selectFrom('users').select(sql<number>`count(*)`.as('n')).compile().query)).toBeUndefined();
  });
});

describe('the tables a query changes', () => {
  it.each([
    ['an update', db.updateTable('users').set({ name: 'x' }).where('id', '=', '1'), ['users']],
    ['a delete', db.deleteFrom('webhooks').where('id', '=', '1'), ['webhooks']],
    ['an upsert', db.insertInto('applications').values({ id: '1' }).onConflict((oc) => oc.column('id').doUpdateSet({ name: 'x' })), ['applications']],
    ['an insert or replace', db.replaceInto('users').values({ id: '1' }), ['users']],
    ['an update in a CTE', db.with('u', (w) => w.updateTable('oauth_grants').set({ scopes: 'x' }).returning('id')).selectFrom('u').selectAll(), ['oauth_grants']],
    ['a plain insert', db.insertInto('users').values({ id: '1' }), []],
    ['an insert … on conflict do nothing', db.insertInto('users').values({ id: '1' }).onConflict((oc) => oc.column('id').doNothing()), []],
    ['a select', db.selectFrom('users').selectAll(), []],
  ])('%s', (_name, builder, tables) => {
    expect(sorted(tablesChanged(builder.compile().query))).toEqual(tables);
  });
});

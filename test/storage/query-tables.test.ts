import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { declareTables, tablesChanged, tablesNamed } from '../../src/storage/query-tables.js';

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

describe('raw statements declare their tables (issue #37 §4)', () => {
  it('a raw statement that declares its tables is read by its declaration: what it changes, and everything it names', () => {
    const query = sql`with c as (update oauth_codes set used_at = 1 returning *) insert into oauth_access_tokens select * from c${declareTables({ changes: ['oauth_codes'], inserts: ['oauth_access_tokens'], reads: ['users'] })}`.compile(db);
    expect(sorted(tablesChanged(query.query))).toEqual(['oauth_codes']);
    expect(sorted(tablesNamed(query.query))).toEqual(['oauth_access_tokens', 'oauth_codes', 'users']);
    expect(query.sql.endsWith(' /* tables: reads=users inserts=oauth_access_tokens changes=oauth_codes */')).toBe(true);
  });

  it('a declaration names tables only', () => {
    expect(() => declareTables({ changes: ['users; drop table users'] })).toThrow(/not a table name/);
  });

  it('every raw statement of a repository declares its tables', () => {
    const root = fileURLToPath(new URL('../../src/modules/', import.meta.url));
    const undeclared: string[] = [];
    for (const module of readdirSync(root)) {
      for (const file of readdirSync(`${root}${module}`).filter((name) => name.endsWith('.repository.ts'))) {
        const source = readFileSync(`${root}${module}/${file}`, 'utf8');
        // A template literal tagged `sql` or `sql<…>` whose text opens with a statement's verb.
        for (const match of source.matchAll(/\bsql(?:<[^`]*?>)?`([^`]*)`/g)) {
          const body = match[1] ?? '';
          if (/^\s*(with|insert|update|delete|select|merge)\b/i.test(body) && !body.includes('declareTables(')) undeclared.push(`${module}/${file}: ${body.trim().slice(0, 60)}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
  });
});

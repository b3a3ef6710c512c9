import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import { prepareQuery } from '../../src/storage/prepared.js';
import { LITERAL_MAX, SqliteLiteralLimitCompiler } from '../../src/storage/sqlite/query-compiler.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { createPerson } from '../support/oauth-factory.js';

/**
 * docs/performance.md §Bound LIMIT: SQLite runs a statement with a bound LIMIT or OFFSET slower
 * than the same statement with the number written in, so SQLite's compiler writes whole numbers
 * up to LITERAL_MAX into the SQL and binds everything else.
 */
const compiling = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteLiteralLimitCompiler(),
  },
});

describe('SQLite LIMIT and OFFSET', () => {
  it('a whole number up to LITERAL_MAX is written into the SQL, not bound', () => {
    const query = compiling.selectFrom('users').select('id').where('username', '=', 'ada').limit(1).offset(LITERAL_MAX).compile();
    expect(query.sql).toBe(`select "id" from "users" where "username" = ? limit 1 offset ${LITERAL_MAX}`);
    expect(query.parameters).toEqual(['ada']);
    expect(compiling.selectFrom('users').select('id').limit(5n as unknown as number).compile().sql).toBe('select "id" from "users" limit 5');
  });

  it('a larger number, a fraction, a negative number, a string or an expression stays a bound parameter', () => {
    for (const value of [LITERAL_MAX + 1, 1.5, -1, '3'] as const) {
      const query = compiling.selectFrom('users').select('id').limit(value as number).compile();
      expect(query.sql).toBe('select "id" from "users" limit ?');
      expect(query.parameters).toEqual([value]);
    }
    const expression = compiling.selectFrom('users').select('id').limit(sql<number>`1 + 1`).compile();
    expect(expression.sql).toBe('select "id" from "users" limit 1 + 1');
    expect(expression.parameters).toEqual([]);
  });
});

describe(`LIMIT and OFFSET as the database runs them (${testDialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('the service’s SQLite database writes them in; PostgreSQL binds them as before', () => {
    const compiled = t.services.db.selectFrom('users').select('id').limit(1).compile();
    expect(compiled.sql).toBe(testDialect === 'sqlite' ? 'select "id" from "users" limit 1' : 'select "id" from "users" limit $1');
  });

  it('written in or bound, they select the same rows; a prepared query’s placeholder stays bound to each call’s value', async () => {
    const people = [await createPerson(t), await createPerson(t), await createPerson(t)];
    const ids = people.map((p) => p.id);
    const page = (limit: number, offset: number) => t.services.db.selectFrom('users').select('id').where('id', 'in', ids).orderBy('id').limit(limit).offset(offset).execute();
    expect((await page(1, 1)).map((r) => String(r.id))).toEqual([ids[1]]);
    expect((await page(LITERAL_MAX + 1, 0)).map((r) => String(r.id))).toEqual(ids);
    const firstN = prepareQuery<{ n: number }>()((db, v) => db.selectFrom('users').select('id').where('id', 'in', ids).orderBy('id').limit(v.n));
    expect((await firstN(t.services.db, { n: 2 })).rows.map((r) => String(r.id))).toEqual(ids.slice(0, 2));
    expect((await firstN(t.services.db, { n: 3 })).rows.map((r) => String(r.id))).toEqual(ids);
  });
});

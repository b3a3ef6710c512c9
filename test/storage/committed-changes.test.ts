import { CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { describe, expect, it } from 'vitest';
import { changePattern, committedChanges, watchingDriver } from '../../src/storage/committed-changes.js';

/**
 * storage/committed-changes.ts: a change to a watched table is told after it committed and before
 * its caller goes on; inserts, other tables and rolled-back transactions are not changes.
 */
const TABLES = ['users', 'oauth_access_tokens'];

describe('which statements change a watched table', () => {
  const pattern = changePattern(TABLES);
  it.each([
    'update "users" set "name" = $1 where "id" = $2',
    'delete from "oauth_access_tokens" where "grant_id" = $1',
    'DELETE FROM oauth_access_tokens WHERE expires_at < $1',
    'update "gh_test"."users" set "password_hash" = $1',
    'with used as (update oauth_refresh_tokens set used_at = $1 returning 1) delete from oauth_access_tokens where grant_id = $2',
    'truncate table users',
    'insert into "users" ("id", "name") values ($1, $2) on conflict ("id") do update set "name" = excluded."name"',
    'insert into users(id, name) values ($1, $2) on conflict (id) do update set name = $2',
  ])('changes: %s', (sql) => expect(pattern.test(sql)).toBe(true));
  it.each([
    'insert into "users" ("id", "username") values ($1, $2)',
    'select * from "users" where "id" = $1',
    'update "oauth_refresh_tokens" set "used_at" = $1',
    'insert into "oauth_grants" ("id") values ($1) on conflict ("id") do update set "scopes" = excluded.scopes',
    'insert into "users" ("id") values ($1) on conflict ("id") do nothing',
    'update "users_archive" set "x" = 1',
    'delete from "sessions" where "user_id" = $1',
  ])('does not change: %s', (sql) => expect(pattern.test(sql)).toBe(false));
});

/** A driver whose connection records what ran, for the wrapper to be watched around. */
function fakeDriver(log: string[]): Driver {
  const connection: DatabaseConnection = {
    executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      log.push(query.sql);
      return Promise.resolve({ rows: [] });
    },
    streamQuery: async function* () {
      throw new Error('not streamed');
    },
  };
  return {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: async () => void log.push('begin'),
    commitTransaction: async () => void log.push('commit'),
    rollbackTransaction: async () => void log.push('rollback'),
    releaseConnection: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
}

function watched() {
  const log: string[] = [];
  const changes = committedChanges();
  changes.listen(TABLES, async () => {
    log.push('told');
  });
  return { log, driver: watchingDriver(fakeDriver(log), changes) };
}

describe('when a change is told', () => {
  it('an autocommit change is told after the statement and before its caller hears the result', async () => {
    const { log, driver } = watched();
    const connection = await driver.acquireConnection();
    await connection.executeQuery(CompiledQuery.raw('update "users" set "name" = $1', ['x']));
    log.push('caller');
    expect(log).toEqual(['update "users" set "name" = $1', 'told', 'caller']);
  });

  it('a change inside a transaction is told after its COMMIT, once', async () => {
    const { log, driver } = watched();
    const connection = await driver.acquireConnection();
    await driver.beginTransaction(connection, {});
    await connection.executeQuery(CompiledQuery.raw('delete from "oauth_access_tokens" where "grant_id" = $1', ['1']));
    await connection.executeQuery(CompiledQuery.raw('update "users" set "name" = $1', ['x']));
    expect(log).not.toContain('told');
    await driver.commitTransaction(connection);
    expect(log.slice(-2)).toEqual(['commit', 'told']);
    expect(log.filter((entry) => entry === 'told')).toHaveLength(1);
  });

  it('a rolled-back transaction tells nothing, and the next transaction on the connection starts clean', async () => {
    const { log, driver } = watched();
    const connection = await driver.acquireConnection();
    await driver.beginTransaction(connection, {});
    await connection.executeQuery(CompiledQuery.raw('update "users" set "name" = $1', ['x']));
    await driver.rollbackTransaction(connection);
    await driver.beginTransaction(connection, {});
    await connection.executeQuery(CompiledQuery.raw('select 1', []));
    await driver.commitTransaction(connection);
    expect(log).not.toContain('told');
  });

  it('inserts and statements on other tables are not told', async () => {
    const { log, driver } = watched();
    const connection = await driver.acquireConnection();
    await connection.executeQuery(CompiledQuery.raw('insert into "users" ("id") values ($1)', ['1']));
    await connection.executeQuery(CompiledQuery.raw('update "sessions" set "seen_at" = $1', ['1']));
    expect(log).not.toContain('told');
  });

  // Issue #37 §4: writes are classified from Kysely's operation tree, so an upsert that rewrites a
  // remembered row is a change like an update.
  it('an INSERT … ON CONFLICT DO UPDATE on a watched table, built with Kysely, is told; DO NOTHING and plain inserts are not', async () => {
    const db = new Kysely<Record<string, Record<string, unknown>>>({
      dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new PostgresIntrospector(k), createQueryCompiler: () => new PostgresQueryCompiler() },
    });
    const { log, driver } = watched();
    const connection = await driver.acquireConnection();
    const upsert = db.insertInto('users').values({ id: '1', name: 'x' }).onConflict((oc) => oc.column('id').doUpdateSet({ name: 'x' })).compile();
    await connection.executeQuery(db.insertInto('users').values({ id: '1' }).onConflict((oc) => oc.column('id').doNothing()).compile());
    await connection.executeQuery(db.insertInto('oauth_grants').values({ id: '1' }).onConflict((oc) => oc.column('id').doUpdateSet({ scopes: 'x' })).compile());
    expect(log).not.toContain('told');
    await connection.executeQuery(upsert);
    expect(log.slice(-2)).toEqual([upsert.sql, 'told']);
    // A data-modifying CTE whose update is the change, the outer statement a select.
    const cte = db
      .with('changed', (w) => w.updateTable('oauth_access_tokens').set({ revoked: true }).returning('id'))
      .selectFrom('changed')
      .selectAll()
      .compile();
    await connection.executeQuery(cte);
    expect(log.slice(-2)).toEqual([cte.sql, 'told']);
    // Raw SQL has no tree: it is read from its text, upserts included.
    const raw = sql`insert into users (id) values (${'1'}) on conflict (id) do update set id = excluded.id`.compile(db);
    await connection.executeQuery(raw);
    expect(log.slice(-2)).toEqual([raw.sql, 'told']);
  });

  it('nothing is told once the listener is removed', async () => {
    const log: string[] = [];
    const changes = committedChanges();
    const stop = changes.listen(TABLES, async () => void log.push('told'));
    stop();
    const connection = await watchingDriver(fakeDriver(log), changes).acquireConnection();
    await connection.executeQuery(CompiledQuery.raw('update "users" set "name" = $1', ['x']));
    expect(log).toEqual(['update "users" set "name" = $1']);
  });
});

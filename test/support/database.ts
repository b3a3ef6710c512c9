import { randomBytes } from 'node:crypto';
import { Migrator, PostgresAdapter, sql } from 'kysely';
import pg from 'pg';
import { connectDatabase, type DatabaseHandle, type QueryTiming } from '../../src/storage/connect.js';
import { migrations } from '../../src/storage/migrations/index.js';

/**
 * Every storage and HTTP test runs on SQLite, and also on PostgreSQL when TEST_DATABASE_URL is
 * set (DESIGN §6). Each call gets its own database: an in-memory SQLite, or a fresh PostgreSQL
 * schema that `drop()` removes.
 */
export const TEST_DATABASE_URL = process.env['TEST_DATABASE_URL'] || undefined;
export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] || undefined;
export const testDialect = TEST_DATABASE_URL ? 'postgres' : 'sqlite';
/**
 * CI (.ci/run) runs the suite on SQLite, then again with TEST_DATABASE_URL set. A test that is
 * the same whatever TEST_DATABASE_URL says (it starts its own SQLite server, or checks no storage)
 * skips itself in that second step: it has run in the first.
 */
export const IN_CI_POSTGRES_STEP = process.env['CI'] === 'true' && Boolean(TEST_DATABASE_URL);
export const RAN_IN_CI_SQLITE_STEP = 'in CI it runs once, in the SQLite step: it does not depend on TEST_DATABASE_URL';

export interface TestDatabase {
  handle: DatabaseHandle;
  /** The URL another process can use to reach this same database (PostgreSQL: with its schema). */
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(options: { sqliteFile?: string } = {}): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const url = options.sqliteFile ?? ':memory:';
    const handle = connectDatabase(url);
    return { handle, url, drop: () => handle.close() };
  }
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const handle = connectDatabase(TEST_DATABASE_URL, { schema, poolSize: 5 });
  return {
    handle,
    url: TEST_DATABASE_URL,
    schema,
    async drop() {
      await handle.close();
      const cleanup = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await cleanup.connect();
      await cleanup.query(`drop schema if exists ${schema} cascade`);
      await cleanup.end();
    },
  };
}

/** The statements `handle` ran while `run` ran (round-trip tests, issue #26 §1). */
export async function statementsDuring<T>(handle: DatabaseHandle, run: () => Promise<T>): Promise<{ result: T; statements: QueryTiming[] }> {
  const statements: QueryTiming[] = [];
  const stop = handle.observeQueries((timing) => statements.push(timing));
  try {
    return { result: await run(), statements };
  } finally {
    stop();
  }
}

/**
 * Migrates `handle`'s database up to and including the migration `name` and no further, so a
 * migration test can write rows in the shape that came before the migration it tests. Names the
 * current schema on PostgreSQL, as src/storage/migrate.ts does, so Kysely's bookkeeping tables are
 * this test's own.
 */
export async function migrateUpTo(handle: DatabaseHandle, name: string): Promise<void> {
  const db = handle.db;
  const schema = db.getExecutor().adapter instanceof PostgresAdapter ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s : undefined;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  const result = await migrator.migrateTo(name);
  if (result.error) throw result.error;
}

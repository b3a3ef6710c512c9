/**
 * What: the one way in to storage: a database URL becomes a DatabaseHandle, on SQLite
 * (storage/sqlite/connect.ts) or PostgreSQL (storage/postgres.ts); the types callers need come with it.
 * Tested: test/storage/group-commit.test.ts, test/storage/postgres-pool.test.ts.
 */
import type { ConnectOptions, DatabaseHandle } from './handle.js';
import { connectPostgres } from './postgres.js';
import { connectSqlite } from './sqlite/connect.js';

export type { DatabaseHandle, Dialect, Durability } from './handle.js';
export type { QueryTiming } from './query-observers.js';

/** `sqlite:./x.db`, `sqlite:///abs/x.db`, `sqlite::memory:`, a plain path, or `:memory:`. */
export function sqlitePath(url: string): string {
  let path = url;
  if (path.startsWith('sqlite://')) path = path.slice('sqlite://'.length);
  else if (path.startsWith('sqlite:')) path = path.slice('sqlite:'.length);
  return path === ':memory:' || path === '' ? ':memory:' : path;
}

/** The files a SQLite database lives in (none in memory or on PostgreSQL): the database, its WAL and its shared-memory index. */
export function sqliteFiles(url: string): string[] {
  if (isPostgresUrl(url)) return [];
  const path = sqlitePath(url);
  return path === ':memory:' ? [] : [path, `${path}-wal`, `${path}-shm`];
}

export function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

export function connectDatabase(url: string, options: ConnectOptions = {}): DatabaseHandle {
  return isPostgresUrl(url) ? connectPostgres(url, options) : connectSqlite(sqlitePath(url), options.durability ?? 'normal', options.backgroundCheckpoints);
}

/**
 * What: opens a SQLite database: WAL mode, the chosen durability, and the group-commit dialect
 * (sqlite/dialect.ts) whose core runs the hot-path statements bound by storage/prepared.ts.
 * Invariant: integers come back as bigint (ids exceed 2^53); a write is acknowledged after its
 * group's COMMIT (synchronous=NORMAL, or FULL under strict durability).
 * Tested: test/storage/group-commit.test.ts, test/storage/wal-checkpoint.test.ts.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import type { ConnectOptions, DatabaseHandle, Durability } from '../handle.js';
import { registerAtomicRunner, registerDirectRunner } from '../prepared.js';
import { queryObservers } from '../query-observers.js';
import { GroupCommitSqliteDialect } from './dialect.js';
import { startCheckpointer } from './wal-checkpoint.js';

/**
 * Issue #36 §4: the folder is created 0700 and the database file 0600 before SQLite opens it;
 * SQLite gives its -wal and -shm files the database file's mode, so they are 0600 too. Existing
 * files keep their mode (main.ts warns when it is wider, config/file-modes.ts).
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
  // 'a' creates the file if it is missing and leaves an existing one as it is; SQLite reads an
  // empty file as a new database.
  closeSync(openSync(path, 'a', 0o600));
}

/** The size a grown WAL file is truncated back to once it restarts (SQLite's journal_size_limit). */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

export function connectSqlite(path: string, durability: Durability, backgroundCheckpoints: ConnectOptions['backgroundCheckpoints']): DatabaseHandle {
  if (path !== ':memory:') createPrivately(path);
  const native = new SQLite(path);
  // Ids exceed 2^53: return every integer as bigint and convert at the repository boundary.
  native.defaultSafeIntegers(true);
  // WAL: readers never block the writer. synchronous=NORMAL: a committed transaction survives a
  // process crash (kill -9); on power loss the last transactions may be lost. FULL (strict):
  // every COMMIT waits for the fsync of the WAL (docs/performance.md §Durability).
  native.pragma('journal_mode = WAL');
  native.pragma(durability === 'strict' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  native.pragma('foreign_keys = ON');
  native.pragma('busy_timeout = 5000');
  // A WAL that a burst let grow past its usual ~4 MB (1,000 pages; sqlite/wal-checkpoint.ts) is
  // cut back to this size at the first commit after it starts over, so the file does not keep
  // its high-water mark on disk for the life of the process.
  native.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  // Statements prepared once and writes of one event-loop turn sharing one commit (DESIGN §5);
  // each write is acknowledged only after its group's COMMIT (sqlite/write-groups.ts).
  const dialect = new GroupCommitSqliteDialect(native);
  const observers = queryObservers((timer) => {
    dialect.core.timer = timer;
  });
  const db = new Kysely<Database>({ dialect, log: observers.log });
  // Prepared hot-path statements are bound once to the SQLite core, which runs and times them
  // itself; cacheable point lookups may be answered from its row cache (storage/prepared.ts,
  // sqlite/core.ts, sqlite/row-cache.ts).
  registerDirectRunner(db, (statement) => dialect.core.bind(statement.sql, statement));
  // All-or-none groups of prepared statements without a Kysely transaction (storage/prepared.ts atomically).
  registerAtomicRunner(db, (steps) => dialect.core.groups.atomically(steps));
  // An in-memory database has no WAL to checkpoint.
  const checkpointer =
    backgroundCheckpoints && path !== ':memory:'
      ? startCheckpointer(path, { synchronous: durability === 'strict' ? 'FULL' : 'NORMAL', onError: backgroundCheckpoints.onError, intervalMs: backgroundCheckpoints.intervalMs })
      : undefined;
  // An idle worker sleeps until the next commit (sqlite/wal-checkpoint.ts).
  if (checkpointer) dialect.core.groups.onCommitted = () => checkpointer.noteCommit();
  return {
    db,
    dialect: 'sqlite',
    observeQueries: observers.observe,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
    rowCache: dialect.core.rows,
    ...(checkpointer ? { checkpointer } : {}),
  };
}

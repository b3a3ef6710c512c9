/**
 * What: what a connected database offers the rest of the application (DatabaseHandle) and how it
 * is asked for (ConnectOptions), whichever the dialect (storage/sqlite/connect.ts, storage/postgres.ts).
 * Tested: test/storage/group-commit.test.ts, test/storage/postgres-pool.test.ts.
 */
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import type { QueryObserver } from './query-observers.js';
import type { Checkpointer } from './sqlite/wal-checkpoint.js';

export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Calls `observer` after every query (metrics); returns a function that stops it. */
  observeQueries(observer: QueryObserver): () => void;
  /**
   * PostgreSQL only: `listener` is awaited after every committed update or delete of `tables`,
   * before the statement's caller hears its result (storage/committed-changes.ts). One listener;
   * returns a function that removes it.
   */
  onCommittedChange?(tables: readonly string[], listener: () => Promise<void>): () => void;
  /** PostgreSQL only: settings of the server it depends on that are off, as advice (storage/postgres-settings.ts). */
  settingsAdvice?(): Promise<string[]>;
  /** PostgreSQL only: names this database the same way for every instance, whatever URL it was reached by. */
  identity?(): Promise<string>;
  /** SQLite with background checkpoints only (ConnectOptions.backgroundCheckpoints). */
  checkpointer?: Checkpointer;
  /**
   * SQLite only: lookups the row cache answered from memory and lookups that went to the database
   * (storage/sqlite/row-cache.ts), for tests and diagnostics. PostgreSQL has no row cache.
   */
  rowCache?: RowCacheCounters;
}

export interface RowCacheCounters {
  readonly hits: number;
  readonly misses: number;
}

export interface ConnectOptions {
  /** PostgreSQL only: run every statement in this schema (tests use one schema per run). */
  schema?: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /**
   * SQLite only (GATEHOUSE_DURABILITY): `normal` acknowledges a write once it is in the WAL
   * (survives kill -9); `strict` once it is on disk (survives power loss). PostgreSQL's own
   * default already waits for the fsync.
   */
  durability?: Durability;
  /**
   * SQLite files only: copy the WAL back into the database from a worker thread instead of inside
   * the event loop's COMMITs (storage/sqlite/wal-checkpoint.ts). The server turns it on; the CLI, whose
   * commands are short, does not. `onError` hears about a checkpoint that failed (it is retried);
   * `intervalMs` (tests) overrides how often the worker checkpoints.
   */
  backgroundCheckpoints?: { onError?: (message: string) => void; intervalMs?: number };
}

/** GATEHOUSE_DURABILITY (docs/performance.md §Durability). */
export type Durability = 'normal' | 'strict';

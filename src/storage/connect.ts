import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import type { Database } from './database.js';
import { GroupCommitSqliteDialect, type StatementTimer } from './group-commit.js';
import { registerDirectRunner, statementOperation } from './prepared.js';
import { startCheckpointer, type Checkpointer } from './wal-checkpoint.js';

export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Calls `observer` after every query (metrics); returns a function that stops it. */
  observeQueries(observer: QueryObserver): () => void;
  /** SQLite with background checkpoints only (ConnectOptions.backgroundCheckpoints). */
  checkpointer?: Checkpointer;
  /**
   * SQLite only: lookups the row cache answered from memory and lookups that went to the database
   * (storage/row-cache.ts), for tests and diagnostics. PostgreSQL has no row cache.
   */
  rowCache?: RowCacheCounters;
}

export interface RowCacheCounters {
  readonly hits: number;
  readonly misses: number;
}

/** One executed statement, as metrics need it: never the SQL text or its parameters. */
export interface QueryTiming {
  /**
   * 'select', 'insert', 'update', 'delete', 'raw' for sql`` and migrations, or 'commit' for the
   * COMMIT of a SQLite write group (storage/group-commit.ts).
   */
  operation: string;
  durationMs: number;
  failed: boolean;
}

export type QueryObserver = (timing: QueryTiming) => void;

/**
 * Kysely's `log` hook, fanned out to observers added later (the test support opens the database
 * before the services that measure it exist). Without observers it costs one size check.
 * `onActive` hears the fan-out function while there are observers and undefined when the last one
 * leaves: the SQLite core times its own statements in line with it (storage/group-commit.ts).
 */
function queryObservers(onActive?: (timer: StatementTimer | undefined) => void): {
  log: (event: LogEvent) => void;
  observe: (observer: QueryObserver) => () => void;
  /** Fans one timing out to every observer. */
  emit: StatementTimer;
} {
  const observers = new Set<QueryObserver>();
  const emit: StatementTimer = (operation, durationMs, failed) => {
    if (observers.size === 0) return;
    const timing = { operation, durationMs, failed };
    for (const observer of observers) observer(timing);
  };
  return {
    log(event) {
      emit(statementOperation(event.query.query.kind), event.queryDurationMillis, event.level === 'error');
    },
    observe(observer) {
      observers.add(observer);
      onActive?.(emit);
      return () => {
        observers.delete(observer);
        if (observers.size === 0) onActive?.(undefined);
      };
    },
    emit,
  };
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
   * the event loop's COMMITs (storage/wal-checkpoint.ts). The server turns it on; the CLI, whose
   * commands are short, does not. `onError` hears about a checkpoint that failed (it is retried);
   * `intervalMs` (tests) overrides how often the worker checkpoints.
   */
  backgroundCheckpoints?: { onError?: (message: string) => void; intervalMs?: number };
}

/** The size a grown WAL file is truncated back to once it restarts (SQLite's journal_size_limit). */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

/** GATEHOUSE_DURABILITY (docs/performance.md §Durability). */
export type Durability = 'normal' | 'strict';

/** `sqlite:./x.db`, `sqlite:///abs/x.db`, `sqlite::memory:`, a plain path, or `:memory:`. */
export function sqlitePath(url: string): string {
  let path = url;
  if (path.startsWith('sqlite://')) path = path.slice('sqlite://'.length);
  else if (path.startsWith('sqlite:')) path = path.slice('sqlite:'.length);
  return path === ':memory:' || path === '' ? ':memory:' : path;
}

export function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

export function connectDatabase(url: string, options: ConnectOptions = {}): DatabaseHandle {
  return isPostgresUrl(url) ? connectPostgres(url, options) : connectSqlite(sqlitePath(url), options.durability ?? 'normal', options.backgroundCheckpoints);
}

function connectSqlite(path: string, durability: Durability, backgroundCheckpoints: ConnectOptions['backgroundCheckpoints']): DatabaseHandle {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
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
  // A WAL that a burst let grow past its usual ~4 MB (1,000 pages; storage/wal-checkpoint.ts) is
  // cut back to this size at the first commit after it starts over, so the file does not keep
  // its high-water mark on disk for the life of the process.
  native.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  // Statements prepared once and writes of one event-loop turn sharing one commit (DESIGN §5);
  // each write is acknowledged only after its group's COMMIT (src/storage/group-commit.ts).
  const dialect = new GroupCommitSqliteDialect(native);
  const observers = queryObservers((timer) => {
    dialect.core.timer = timer;
  });
  const db = new Kysely<Database>({ dialect, log: observers.log });
  // Prepared hot-path statements are bound once to the group-commit core, which runs and times
  // them itself; cacheable point lookups may be answered from its row cache (storage/prepared.ts,
  // storage/row-cache.ts).
  registerDirectRunner(db, (statement) => dialect.core.bind(statement.sql, statement));
  // An in-memory database has no WAL to checkpoint.
  const checkpointer =
    backgroundCheckpoints && path !== ':memory:'
      ? startCheckpointer(path, { synchronous: durability === 'strict' ? 'FULL' : 'NORMAL', onError: backgroundCheckpoints.onError, intervalMs: backgroundCheckpoints.intervalMs })
      : undefined;
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

function connectPostgres(url: string, options: ConnectOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Fail fast when the database is down instead of queueing requests (issue #7 §4: no hang past 5 s).
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // A dropped connection while idle must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor while checked out: pg-pool listens only to idle clients, so a connection cut inside a
  // transaction (PostgreSQL stopped: 57P01) would be an unhandled 'error' event and kill the
  // process. The failure reaches the caller through its next query instead, and pg-pool drops the
  // broken client on release (issue #7 §4).
  pool.on('connect', (client) => client.on('error', () => undefined));
  const observers = queryObservers();
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: observers.log });
  // Prepared hot-path statements go straight to the pool: one checkout, one round trip, one
  // release, as Kysely's driver does, without its executor (storage/prepared.ts).
  registerDirectRunner(db, (statement) => {
    const { sql: text, queryId: name, operation } = statement;
    return async (parameters) => {
      const started = performance.now();
      try {
        // A named statement: each pooled connection parses and plans it once, then only binds
        // values (the extended protocol's Parse is skipped), DESIGN §5.
        const result = await pool.query({ name, text, values: parameters as unknown[] });
        observers.emit(operation, performance.now() - started, false);
        const changed = result.command === 'INSERT' || result.command === 'UPDATE' || result.command === 'DELETE' || result.command === 'MERGE';
        return changed ? { numAffectedRows: BigInt(result.rowCount ?? 0), rows: result.rows } : { rows: result.rows };
      } catch (error) {
        observers.emit(operation, performance.now() - started, true);
        throw error;
      }
    };
  });
  return {
    db,
    dialect: 'postgres',
    observeQueries: observers.observe,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/**
 * What: the one SQLite connection's parts wired together (write groups announcing to the row
 * cache) and the hot-path statements bound to them once (storage/prepared.ts DirectRunner).
 * Invariant: a bound statement is answered as `execute` would answer it; a cacheable lookup comes
 * from the row cache only when no write, lost group, rollback or other connection's commit has
 * ended its generation since it was read, and bind() refuses one the cache could answer wrongly.
 * Tested: test/storage/group-commit.test.ts (bound statements), test/storage/row-cache.test.ts.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { QueryResult } from 'kysely';
import type { StatementTimer } from '../query-observers.js';
import { assertCacheable, lookupKey, RowCache } from './row-cache.js';
import { isControlStatement, type CachedStatement } from './statements.js';
import { WriteGroups } from './write-groups.js';

type Native = BetterSqlite3.Database;

/** A statement bound once by storage/prepared.ts: its values are all that change between calls. */
export interface BoundStatementOptions {
  /** 'select', 'insert', 'update' or 'delete': the label its timings carry. */
  operation: string;
  /** A point lookup the row cache may answer (sqlite/row-cache.ts). */
  cacheable: boolean;
}

/** Runs a bound statement with one call's values. */
export type BoundStatement = (parameters: readonly unknown[]) => Promise<QueryResult<unknown>>;

/** The write groups of one connection, the row cache that listens to them, and statements bound to both. */
export class SqliteCore {
  /** Hot point lookups kept in memory between the writes that could change them (sqlite/row-cache.ts). */
  readonly rows = new RowCache();
  readonly groups: WriteGroups;
  #dataVersion: BetterSqlite3.Statement<unknown[], unknown> | undefined;
  #lastDataVersion: unknown;
  #otherConnectionsChecked = false;
  readonly #endTurn = (): void => {
    this.#otherConnectionsChecked = false;
  };

  constructor(native: Native) {
    this.groups = new WriteGroups(native, this.rows);
  }

  /** Groups committed (tests and diagnostics). */
  get commits(): number {
    return this.groups.commits;
  }

  /** Statement timings: storage/sqlite/connect.ts sets it while anything observes queries (metrics). */
  get timer(): StatementTimer | undefined {
    return this.groups.timer;
  }

  set timer(timer: StatementTimer | undefined) {
    this.groups.timer = timer;
  }

  /**
   * A prepared hot-path statement (storage/prepared.ts), bound once: each call runs the same
   * better-sqlite3 statement with its values, timed in line, and is answered as `execute` answers
   * (a write after its group's COMMIT; a read at once unless a write group is open). A cacheable
   * point lookup is answered from the row cache while no write since it was read could have
   * changed it, and a lookup it misses is kept. While a db.transaction() holds the connection,
   * the call waits for it, as every plain query does.
   *
   * Binding skips per call what `execute` does for any SQL it is given: a statement-cache lookup
   * and refresh, the test for control statements, and the CompiledQuery object around the values
   * (docs/performance.md, prepared statements).
   */
  bind(sql: string, options: BoundStatementOptions): BoundStatement {
    // Prepared queries are single SELECT/INSERT/UPDATE/DELETE statements: a control statement
    // (PRAGMA, SAVEPOINT…) has no place in a group, and only `execute` knows how to run one.
    if (isControlStatement(sql)) throw new Error(`a bound statement must be a plain SELECT, INSERT, UPDATE or DELETE: ${sql}`);
    const { operation, cacheable } = options;
    // Once per statement, never per call: the row cache answers only what it can keep correct.
    if (cacheable) assertCacheable(sql);
    const groups = this.groups;
    let statement: CachedStatement | undefined;
    const bound: BoundStatement = (parameters) => {
      if (groups.transactionOpen) return groups.waitForTransaction().then(() => bound(parameters));
      try {
        // Prepared on first use (the schema exists by then); kept for the life of the connection.
        statement ??= groups.statements.prepare(sql);
      } catch (error) {
        return Promise.reject(error);
      }
      return cacheable ? this.#cachedRun(sql, statement, parameters, operation) : groups.run(statement, parameters, operation);
    };
    return bound;
  }

  /** A cacheable lookup: from the row cache, or run and kept (sqlite/row-cache.ts). */
  #cachedRun(sql: string, statement: CachedStatement, parameters: readonly unknown[], operation: string): Promise<QueryResult<unknown>> {
    const key = lookupKey(parameters);
    if (key === undefined) return this.groups.run(statement, parameters, operation);
    try {
      this.#noticeOtherConnections();
    } catch (error) {
      return Promise.reject(error);
    }
    const rows = this.rows;
    const hit = rows.get(sql, key);
    if (hit !== undefined) return Promise.resolve(hit);
    // A write between here and the answer ends this generation, and the result is not kept. A read
    // that joined a write group is kept after its COMMIT (it is rejected with it), so what is kept
    // was committed.
    const generation = rows.generation;
    return this.groups.run(statement, parameters, operation, (result) => rows.set(sql, key, generation, result));
  }

  /**
   * Commits by other connections (another process on the same file) are announced to the row
   * cache. Checked once per event-loop turn: the same freshness as the turn's shared read transaction.
   */
  #noticeOtherConnections(): void {
    if (this.#otherConnectionsChecked) return;
    this.#otherConnectionsChecked = true;
    setImmediate(this.#endTurn);
    // SQLite: PRAGMA data_version changes when another connection has committed since the last call.
    this.#dataVersion ??= this.groups.native.prepare('PRAGMA data_version').pluck();
    const version: unknown = this.#dataVersion.get();
    if (version !== this.#lastDataVersion) {
      this.#lastDataVersion = version;
      this.rows.onForeignCommit();
    }
  }
}

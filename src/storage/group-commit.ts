/**
 * What: the SQLite Kysely driver: statements prepared once, the writes of one event-loop turn
 * sharing one COMMIT, db.transaction() as savepoints, and bound hot-path statements with the row cache.
 * Invariant: nothing is acknowledged before its group's COMMIT returned, and every path that may
 * change a row the row cache holds (a write, a failed COMMIT, ROLLBACK TO, another connection's
 * commit) ends its generation; bind() refuses a cacheable statement the cache could answer wrongly.
 * Tested: test/storage/group-commit.test.ts, test/storage/row-cache.test.ts.
 */
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import { assertCacheable, lookupKey, RowCache, writeInvalidatesRows } from './row-cache.js';

/**
 * SQLite with prepared statements reused and commits shared (DESIGN §5, docs/performance.md
 * §Durability).
 *
 * Kysely's own SqliteDriver parses every statement again (`prepare` per query) and runs each
 * write as its own transaction, i.e. one WAL commit (and under synchronous=FULL one fsync) per
 * request. This driver keeps the one better-sqlite3 connection and:
 *
 * - caches prepared statements by SQL text (bounded, least recently used out first);
 * - runs every write that arrives while no transaction is open inside a *group*: the first one
 *   opens it with BEGIN IMMEDIATE and schedules its COMMIT with setImmediate, so every write of
 *   the same event-loop turn shares one commit. Each statement runs at once, but its promise
 *   settles only after the group's COMMIT has returned: nothing is acknowledged before it is in
 *   the WAL (and, under synchronous=FULL, on disk). Reads arriving while a write group is open join
 *   it and wait too, so no answer shows data that might still be rolled back; reads with no write
 *   pending share a read transaction per turn and answer at once;
 * - isolates errors: a failing statement (a constraint violation) is undone by SQLite alone
 *   (statement-level ABORT) and rejects only its own promise. Only an error that ends the whole
 *   transaction (I/O error, disk full, a failed COMMIT) rejects every waiter of the group;
 * - runs `db.transaction()` as a SAVEPOINT inside the group: all or nothing on its own (ROLLBACK TO),
 *   committed with the group and acknowledged after that COMMIT; it holds the connection until it
 *   ends, and plain queries arriving meanwhile wait for it.
 */

type Native = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement<unknown[], unknown>;

/** Statements kept prepared; the application has a few hundred distinct ones at most. */
const STATEMENT_CACHE_SIZE = 1000;

/** Statements that cannot run inside a transaction or must not be grouped. */
const UNGROUPED = /^\s*(pragma|vacuum|begin|commit|end|rollback|savepoint|release|attach|detach)\b/i;

/** The savepoint a db.transaction() runs in, inside the group's transaction. */
const TRANSACTION_SAVEPOINT = 'gatehouse_transaction';
const EMPTY_RESULT: QueryResult<unknown> = { rows: [] };

/**
 * Hears how long each statement run through `bind` took, and each COMMIT of a write group
 * (storage/connect.ts: the metrics' query observers). Called in line, with no promise of its own.
 */
export type StatementTimer = (operation: string, durationMs: number, failed: boolean) => void;

/** A statement bound once by storage/prepared.ts: its values are all that change between calls. */
export interface BoundStatementOptions {
  /** 'select', 'insert', 'update' or 'delete': the label its timings carry. */
  operation: string;
  /** A point lookup the row cache may answer (storage/row-cache.ts). */
  cacheable: boolean;
}

/** Runs a bound statement with one call's values. */
export type BoundStatement = (parameters: readonly unknown[]) => Promise<QueryResult<unknown>>;

interface Waiter {
  result: QueryResult<unknown>;
  resolve: (result: QueryResult<unknown>) => void;
  reject: (error: unknown) => void;
}

/**
 * A prepared statement and how it runs. Readers run in raw mode (rows as arrays of values) and
 * their objects are built here: better-sqlite3 builds each row object in C++, internalizing every
 * column name and setting every property through the V8 API, which for the one-row lookups of the
 * hot paths cost more than running the statement (~10 % of the server's CPU on a bearer request;
 * docs/performance.md). The objects are the same: one property per column, in column
 * order, a later duplicate name overwriting an earlier one.
 */
export class CachedStatement {
  readonly #statement: Statement;
  /** A write that may change a row the row cache holds (storage/row-cache.ts), decided once per SQL. */
  readonly invalidatesRows: boolean;
  readonly #columns: readonly string[] | undefined;

  constructor(statement: Statement) {
    this.#statement = statement;
    this.invalidatesRows = !statement.readonly && writeInvalidatesRows(statement.source);
    let columns: string[] | undefined;
    if (statement.reader) {
      columns = statement.columns().map((column) => column.name);
      // A column named __proto__ would set the prototype through a plain assignment, as it does
      // in better-sqlite3's own objects: such a statement keeps better-sqlite3's objects.
      if (columns.includes('__proto__')) columns = undefined;
      else statement.raw(true);
    }
    this.#columns = columns;
  }

  get readonly(): boolean {
    return this.#statement.readonly;
  }

  run(parameters: readonly unknown[]): QueryResult<unknown> {
    const statement = this.#statement;
    if (!statement.reader) {
      const { changes, lastInsertRowid } = statement.run(parameters);
      // 0n and 1n shared: a write of one row (every message) allocates no BigInt for its count.
      return { numAffectedRows: changes === 1 ? 1n : changes === 0 ? 0n : BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    }
    const columns = this.#columns;
    if (columns === undefined) return { rows: statement.all(parameters) };
    const raw = statement.all(parameters) as unknown[][];
    const rows: Record<string, unknown>[] = new Array<Record<string, unknown>>(raw.length);
    for (let r = 0; r < raw.length; r += 1) {
      const values = raw[r] as unknown[];
      const row: Record<string, unknown> = {};
      for (let c = 0; c < columns.length; c += 1) row[columns[c] as string] = values[c];
      rows[r] = row;
    }
    return { rows };
  }
}

/** The statement cache: a Map in insertion order, refreshed on use, oldest evicted. */
export class StatementCache {
  readonly #native: Native;
  readonly #limit: number;
  readonly #statements = new Map<string, CachedStatement>();

  constructor(native: Native, limit = STATEMENT_CACHE_SIZE) {
    this.#native = native;
    this.#limit = limit;
  }

  get size(): number {
    return this.#statements.size;
  }

  /** A prepared statement for this SQL, reused across calls (better-sqlite3 statements are reusable). */
  prepare(sql: string): CachedStatement {
    const cached = this.#statements.get(sql);
    if (cached !== undefined) {
      this.#statements.delete(sql);
      this.#statements.set(sql, cached);
      return cached;
    }
    const statement = new CachedStatement(this.#native.prepare(sql));
    if (this.#statements.size >= this.#limit) {
      const oldest = this.#statements.keys().next();
      if (!oldest.done) this.#statements.delete(oldest.value);
    }
    this.#statements.set(sql, statement);
    return statement;
  }
}

/** The shared state of the one connection: statement cache, open group, transaction owner. */
export class GroupCommitCore {
  readonly native: Native;
  readonly statements: StatementCache;
  #group: Waiter[] | undefined;
  /** Whether the open group has written (BEGIN IMMEDIATE) or only read (BEGIN). */
  #groupWrites = false;
  /** The connection inside a `db.transaction()`, and the promise that settles when it ends. */
  #owner: GroupConnection | undefined;
  #ownerDone: Promise<void> | undefined;
  #endOwner: (() => void) | undefined;
  #flushAfterTransaction = false;
  readonly #controls = new Map<string, Statement>();
  readonly #flush = (): void => this.commitGroup();
  /** Groups committed (tests and diagnostics). */
  commits = 0;
  /** Hot point lookups kept in memory between the writes that could change them (storage/row-cache.ts). */
  readonly rows = new RowCache();
  #dataVersion: Statement | undefined;
  #lastDataVersion: unknown;
  #otherConnectionsChecked = false;
  readonly #endTurn = (): void => {
    this.#otherConnectionsChecked = false;
  };

  constructor(native: Native) {
    this.native = native;
    this.statements = new StatementCache(native);
  }

  /** Statement timings: storage/connect.ts sets it while anything observes queries (metrics). */
  timer: StatementTimer | undefined;

  /**
   * A prepared hot-path statement (storage/prepared.ts), bound once: each call runs the same
   * better-sqlite3 statement with its values, timed in line, and is answered as `execute` answers
   * (a write after its group's COMMIT; a read at once unless a write group is open). A cacheable
   * point lookup is answered from the row cache while no write since it was read could have
   * changed it, and a lookup it misses is kept. While another connection's db.transaction() holds
   * the connection, the call waits for it, as every plain query does.
   *
   * Binding skips per call what `execute` does for any SQL it is given: a statement-cache lookup
   * and refresh, the test for control statements, and the CompiledQuery object around the values
   * (docs/performance.md, prepared statements).
   */
  bind(sql: string, options: BoundStatementOptions): BoundStatement {
    // Prepared queries are single SELECT/INSERT/UPDATE/DELETE statements: a control statement
    // (PRAGMA, SAVEPOINT…) has no place in a group, and only `execute` knows how to run one.
    if (UNGROUPED.test(sql)) throw new Error(`a bound statement must be a plain SELECT, INSERT, UPDATE or DELETE: ${sql}`);
    const { operation, cacheable } = options;
    // Once per statement, never per call: the row cache answers only what it can keep correct.
    if (cacheable) assertCacheable(sql);
    let statement: CachedStatement | undefined;
    const bound: BoundStatement = (parameters) => {
      if (this.#owner !== undefined) return this.#waitForTransaction().then(() => bound(parameters));
      try {
        // Prepared on first use (the schema exists by then); kept for the life of the connection.
        statement ??= this.statements.prepare(sql);
      } catch (error) {
        return Promise.reject(error);
      }
      return cacheable ? this.#cachedRun(sql, statement, parameters, operation) : this.#run(statement, parameters, operation);
    };
    return bound;
  }

  /** A cacheable lookup: from the row cache, or run and kept (storage/row-cache.ts). */
  #cachedRun(sql: string, statement: CachedStatement, parameters: readonly unknown[], operation: string): Promise<QueryResult<unknown>> {
    const key = lookupKey(parameters);
    if (key === undefined) return this.#run(statement, parameters, operation);
    try {
      this.#noticeOtherConnections();
    } catch (error) {
      return Promise.reject(error);
    }
    const hit = this.rows.get(sql, key);
    if (hit !== undefined) return Promise.resolve(hit);
    // A write between here and the answer ends this generation, and the result is not kept. A read
    // that joined a write group is kept after its COMMIT (it is rejected with it), so what is kept
    // was committed.
    const generation = this.rows.generation;
    return this.#run(statement, parameters, operation, (result) => this.rows.set(sql, key, generation, result));
  }

  /**
   * Commits by other connections (another process on the same file) end the cache's generation.
   * Checked once per event-loop turn: the same freshness as the turn's shared read transaction.
   */
  #noticeOtherConnections(): void {
    if (this.#otherConnectionsChecked) return;
    this.#otherConnectionsChecked = true;
    setImmediate(this.#endTurn);
    // SQLite: PRAGMA data_version changes when another connection has committed since the last call.
    this.#dataVersion ??= this.native.prepare('PRAGMA data_version').pluck();
    const version: unknown = this.#dataVersion.get();
    if (version !== this.#lastDataVersion) {
      this.#lastDataVersion = version;
      this.rows.invalidate();
    }
  }

  execute(connection: GroupConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    if (this.#owner !== undefined && this.#owner !== connection) {
      return this.#waitForTransaction().then(() => this.execute(connection, query));
    }
    const { sql, parameters } = query;
    if (this.#owner === connection) return this.#executeInTransaction(sql, parameters);
    if (UNGROUPED.test(sql)) {
      this.commitGroup();
      // PRAGMA, ROLLBACK TO, ATTACH…: nothing says what they change.
      this.rows.invalidate();
      return settle(() => new CachedStatement(this.native.prepare(sql)).run(parameters));
    }
    let statement: CachedStatement;
    try {
      statement = this.statements.prepare(sql);
    } catch (error) {
      return Promise.reject(error);
    }
    // Kysely times what it runs itself (its log hook, storage/connect.ts): no timing here.
    return this.#run(statement, parameters, undefined);
  }

  /**
   * Runs a statement in this turn's group, opening one if needed. A write (or a read joining a
   * write group) answers after the group's COMMIT; a read with no write pending answers at once.
   * `keep` receives the result once it may be shown (the row cache).
   */
  #run(statement: CachedStatement, parameters: readonly unknown[], operation: string | undefined, keep?: (result: QueryResult<unknown>) => void): Promise<QueryResult<unknown>> {
    if (statement.invalidatesRows) this.rows.invalidate();
    let group: Waiter[];
    try {
      if (statement.readonly) {
        // Reads share one read transaction per turn too: SQLite takes and drops its WAL read lock
        // once instead of around every statement (a tenth of the cost per lookup). With no write
        // in the group there is nothing uncommitted to hide, so the read answers at once.
        group = this.#group ?? this.#openReadGroup();
        if (!this.#groupWrites) {
          const result = this.#timedRun(statement, parameters, operation);
          keep?.(result);
          return Promise.resolve(result);
        }
      } else {
        group = this.#openGroup();
      }
    } catch (error) {
      return Promise.reject(error);
    }
    let result: QueryResult<unknown>;
    try {
      result = this.#timedRun(statement, parameters, operation);
    } catch (error) {
      // SQLite undid this statement alone, unless the error ended the transaction (I/O error,
      // disk full): then the group's earlier statements are gone too and their callers must know.
      if (!this.native.inTransaction) this.#failGroup(error);
      return Promise.reject(error);
    }
    const answer = new Promise<QueryResult<unknown>>((resolve, reject) => group.push({ result, resolve, reject }));
    return keep === undefined
      ? answer
      : answer.then((committed) => {
          keep(committed);
          return committed;
        });
  }

  /** Runs the statement now, timed when it has an operation and something listens: a plain call, no promise. */
  #timedRun(statement: CachedStatement, parameters: readonly unknown[], operation: string | undefined): QueryResult<unknown> {
    const timer = this.timer;
    if (operation === undefined || timer === undefined) return statement.run(parameters);
    const started = performance.now();
    let result: QueryResult<unknown>;
    try {
      result = statement.run(parameters);
    } catch (error) {
      timer(operation, performance.now() - started, true);
      throw error;
    }
    timer(operation, performance.now() - started, false);
    return result;
  }

  /** Commits the open group, if any, and settles its waiters (after the COMMIT has returned). */
  commitGroup(): void {
    const group = this.#group;
    if (group === undefined) return;
    if (this.#owner !== undefined) {
      // A db.transaction() is between its SAVEPOINT and RELEASE: commit once it has ended.
      this.#flushAfterTransaction = true;
      return;
    }
    this.#group = undefined;
    // A write group's COMMIT is timed as its own operation: it is where synchronous=FULL waits
    // for the fsync, and what every write of the group waited for before its answer.
    const timer = this.#groupWrites ? this.timer : undefined;
    const started = timer === undefined ? 0 : performance.now();
    try {
      this.#control('COMMIT');
    } catch (error) {
      timer?.('commit', performance.now() - started, true);
      // Whatever the group wrote is gone: the row cache starts over rather than reason about it.
      this.rows.invalidate();
      if (this.native.inTransaction) {
        try {
          this.#control('ROLLBACK');
        } catch {
          // The connection reports the original error below; a failed rollback adds nothing.
        }
      }
      for (const waiter of group) waiter.reject(error);
      return;
    }
    if (this.#groupWrites) this.commits += 1;
    timer?.('commit', performance.now() - started, false);
    for (const waiter of group) waiter.resolve(waiter.result);
  }

  #failGroup(error: unknown): void {
    this.rows.invalidate();
    const group = this.#group;
    this.#group = undefined;
    if (group) for (const waiter of group) waiter.reject(error);
  }

  /** BEGIN, COMMIT, SAVEPOINT…: prepared once like every other statement, instead of parsed by exec(). */
  #control(sql: string): void {
    let statement = this.#controls.get(sql);
    if (statement === undefined) {
      statement = this.native.prepare(sql);
      this.#controls.set(sql, statement);
    }
    statement.run();
  }

  /** The open group, or a new one: BEGIN IMMEDIATE now, COMMIT at the end of this event-loop turn. */
  #openGroup(): Waiter[] {
    if (this.#group !== undefined && this.#groupWrites) return this.#group;
    // A read group's snapshot may be older than another process's last commit: end it rather
    // than upgrade it (which could fail with SQLITE_BUSY_SNAPSHOT), and take the write lock anew.
    if (this.#group !== undefined) this.commitGroup();
    this.#control('BEGIN IMMEDIATE');
    this.#group = [];
    this.#groupWrites = true;
    setImmediate(this.#flush);
    return this.#group;
  }

  /** A read transaction for the rest of this turn: BEGIN (deferred) now, ended by the same flush. */
  #openReadGroup(): Waiter[] {
    this.#control('BEGIN');
    this.#group = [];
    this.#groupWrites = false;
    setImmediate(this.#flush);
    return this.#group;
  }

  #executeInTransaction(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    // An earlier error ended the group's transaction (and this savepoint with it): nothing more may run.
    if (!this.native.inTransaction) return Promise.reject(new Error('the transaction was aborted by an earlier error'));
    try {
      const statement = this.statements.prepare(sql);
      if (statement.invalidatesRows) this.rows.invalidate();
      return Promise.resolve(statement.run(parameters));
    } catch (error) {
      if (!this.native.inTransaction) this.#failGroup(error);
      return Promise.reject(error);
    }
  }

  async #waitForTransaction(): Promise<void> {
    while (this.#ownerDone !== undefined) await this.#ownerDone;
  }

  /**
   * db.transaction() joins the group as a savepoint: its writes stay all-or-nothing (ROLLBACK TO
   * undoes them alone) and share the group's COMMIT. It holds the connection until it ends;
   * plain queries arriving meanwhile wait.
   */
  async begin(connection: GroupConnection): Promise<void> {
    // Checked again right before opening, in the same synchronous step: several waiters wake at once.
    while (this.#ownerDone !== undefined) await this.#ownerDone;
    this.#openGroup();
    this.#control(`SAVEPOINT ${TRANSACTION_SAVEPOINT}`);
    this.#owner = connection;
    this.#ownerDone = new Promise((resolve) => {
      this.#endOwner = resolve;
    });
  }

  /** RELEASE (resolving after the group's COMMIT) or ROLLBACK TO the transaction's savepoint. */
  end(connection: GroupConnection, command: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.#owner !== connection) return Promise.resolve();
    let outcome: Promise<void>;
    try {
      if (!this.native.inTransaction) throw new Error('the transaction was aborted by an earlier error');
      if (command === 'COMMIT') {
        this.#control(`RELEASE ${TRANSACTION_SAVEPOINT}`);
        const group = this.#group as Waiter[];
        outcome = new Promise((resolve, reject) => group.push({ result: EMPTY_RESULT, resolve: () => resolve(), reject }));
      } else {
        this.rows.invalidate();
        this.#control(`ROLLBACK TO ${TRANSACTION_SAVEPOINT}`);
        this.#control(`RELEASE ${TRANSACTION_SAVEPOINT}`);
        outcome = Promise.resolve();
      }
    } catch (error) {
      outcome = Promise.reject(error);
    }
    const endOwner = this.#endOwner;
    this.#owner = undefined;
    this.#ownerDone = undefined;
    this.#endOwner = undefined;
    endOwner?.();
    if (this.#flushAfterTransaction) {
      this.#flushAfterTransaction = false;
      setImmediate(this.#flush);
    }
    return outcome;
  }

  close(): void {
    this.commitGroup();
    this.native.close();
  }
}

function settle(run: () => QueryResult<unknown>): Promise<QueryResult<unknown>> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A handle Kysely holds for one query or one transaction; all share the core's connection. */
export class GroupConnection implements DatabaseConnection {
  readonly #core: GroupCommitCore;

  constructor(core: GroupCommitCore) {
    this.#core = core;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#core.execute(this, query) as Promise<QueryResult<R>>;
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Not grouped and not cached: an iterating statement cannot be used by another query meanwhile.
    const result = await this.#core.execute(this, query);
    for (const row of result.rows) yield { rows: [row as R] };
  }
}

class GroupCommitDriver implements Driver {
  readonly #core: GroupCommitCore;

  constructor(core: GroupCommitCore) {
    this.#core = core;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new GroupConnection(this.#core);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#core.begin(connection as GroupConnection);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#core.end(connection as GroupConnection, 'COMMIT');
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#core.end(connection as GroupConnection, 'ROLLBACK');
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint "${name.replaceAll('"', '""')}"`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to "${name.replaceAll('"', '""')}"`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release "${name.replaceAll('"', '""')}"`));
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.#core.close();
  }
}

/** Kysely's SQLite dialect with the group-commit driver above. */
export class GroupCommitSqliteDialect implements Dialect {
  readonly core: GroupCommitCore;

  constructor(native: Native) {
    this.core = new GroupCommitCore(native);
  }

  createDriver(): Driver {
    return new GroupCommitDriver(this.core);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

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

interface Waiter {
  result: QueryResult<unknown>;
  resolve: (result: QueryResult<unknown>) => void;
  reject: (error: unknown) => void;
}

/** The statement cache: a Map in insertion order, refreshed on use, oldest evicted. */
export class StatementCache {
  readonly #native: Native;
  readonly #limit: number;
  readonly #statements = new Map<string, Statement>();

  constructor(native: Native, limit = STATEMENT_CACHE_SIZE) {
    this.#native = native;
    this.#limit = limit;
  }

  get size(): number {
    return this.#statements.size;
  }

  /** A prepared statement for this SQL, reused across calls (better-sqlite3 statements are reusable). */
  prepare(sql: string): Statement {
    const cached = this.#statements.get(sql);
    if (cached !== undefined) {
      this.#statements.delete(sql);
      this.#statements.set(sql, cached);
      return cached;
    }
    const statement = this.#native.prepare(sql);
    if (this.#statements.size >= this.#limit) {
      const oldest = this.#statements.keys().next();
      if (!oldest.done) this.#statements.delete(oldest.value);
    }
    this.#statements.set(sql, statement);
    return statement;
  }
}

function runStatement(statement: Statement, parameters: readonly unknown[]): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
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

  constructor(native: Native) {
    this.native = native;
    this.statements = new StatementCache(native);
  }

  execute(connection: GroupConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    if (this.#owner !== undefined && this.#owner !== connection) {
      return this.#waitForTransaction().then(() => this.execute(connection, query));
    }
    const { sql, parameters } = query;
    if (this.#owner === connection) return this.#executeInTransaction(sql, parameters);
    if (UNGROUPED.test(sql)) {
      this.commitGroup();
      return settle(() => runStatement(this.native.prepare(sql), parameters));
    }
    let statement: Statement;
    try {
      statement = this.statements.prepare(sql);
    } catch (error) {
      return Promise.reject(error);
    }
    let group: Waiter[];
    try {
      if (statement.readonly) {
        // Reads share one read transaction per turn too: SQLite takes and drops its WAL read lock
        // once instead of around every statement (a tenth of the cost per lookup). With no write
        // in the group there is nothing uncommitted to hide, so the read answers at once.
        group = this.#group ?? this.#openReadGroup();
        if (!this.#groupWrites) return settle(() => runStatement(statement, parameters));
      } else {
        group = this.#openGroup();
      }
    } catch (error) {
      return Promise.reject(error);
    }
    let result: QueryResult<unknown>;
    try {
      result = runStatement(statement, parameters);
    } catch (error) {
      // SQLite undid this statement alone, unless the error ended the transaction (I/O error,
      // disk full): then the group's earlier statements are gone too and their callers must know.
      if (!this.native.inTransaction) this.#failGroup(error);
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => group.push({ result, resolve, reject }));
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
    try {
      this.#control('COMMIT');
    } catch (error) {
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
    for (const waiter of group) waiter.resolve(waiter.result);
  }

  #failGroup(error: unknown): void {
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
      return Promise.resolve(runStatement(this.statements.prepare(sql), parameters));
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

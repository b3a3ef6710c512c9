/**
 * What: the one connection's transactions: every write of an event-loop turn runs in one group and
 * shares one COMMIT, reads share a read transaction per turn, db.transaction() is a SAVEPOINT.
 * Invariant: nothing is acknowledged before its group's COMMIT returned; a failing statement
 * rejects only its own promise unless the error ended the transaction. Every change of what the
 * database holds is announced to WriteEvents (writes, a lost group, ROLLBACK TO) before anything
 * can read past it.
 * Tested: test/storage/group-commit.test.ts, test/storage/write-events.test.ts (the announcements).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery, QueryResult } from 'kysely';
import type { StatementTimer } from '../query-observers.js';
import type { WriteEvents } from './events.js';
import { CachedStatement, isControlStatement, StatementCache } from './statements.js';

/**
 * Why (DESIGN §5, docs/performance.md §Durability): Kysely's own SqliteDriver runs each write as
 * its own transaction, one WAL commit (under synchronous=FULL one fsync) per request. Here the
 * first write opens a group with BEGIN IMMEDIATE and schedules its COMMIT with setImmediate; each
 * statement runs at once but settles after that COMMIT. A failing statement (a constraint
 * violation) is undone by SQLite alone (statement-level ABORT).
 */

type Native = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement<unknown[], unknown>;

/** The savepoint a db.transaction() runs in, inside the group's transaction. */
const TRANSACTION_SAVEPOINT = 'gatehouse_transaction';
const EMPTY_RESULT: QueryResult<unknown> = { rows: [] };

interface Waiter {
  result: QueryResult<unknown>;
  resolve: (result: QueryResult<unknown>) => void;
  reject: (error: unknown) => void;
}

/** The shared state of the one connection: statement cache, open group, transaction owner. */
export class WriteGroups {
  readonly native: Native;
  readonly statements: StatementCache;
  readonly #events: WriteEvents;
  #group: Waiter[] | undefined;
  /** Whether the open group has written (BEGIN IMMEDIATE) or only read (BEGIN). */
  #groupWrites = false;
  /** The connection inside a `db.transaction()`, and the promise that settles when it ends. */
  #owner: object | undefined;
  #ownerDone: Promise<void> | undefined;
  #endOwner: (() => void) | undefined;
  #flushAfterTransaction = false;
  readonly #controls = new Map<string, Statement>();
  readonly #flush = (): void => this.commitGroup();
  /** Groups committed (tests and diagnostics). */
  commits = 0;
  /** Hears each write group's COMMIT (sqlite/connect.ts: wakes the checkpoint worker). */
  onCommitted: (() => void) | undefined;
  /** Statement timings: storage/sqlite/connect.ts sets it (through sqlite/core.ts) while anything observes queries (metrics). */
  timer: StatementTimer | undefined;

  constructor(native: Native, events: WriteEvents) {
    this.native = native;
    this.statements = new StatementCache(native);
    this.#events = events;
  }

  /** Whether a db.transaction() holds the connection: every other query waits for waitForTransaction(). */
  get transactionOpen(): boolean {
    return this.#owner !== undefined;
  }

  async waitForTransaction(): Promise<void> {
    while (this.#ownerDone !== undefined) await this.#ownerDone;
  }

  /** A query Kysely runs for `connection` (a sqlite/dialect.ts GroupConnection). */
  execute(connection: object, query: CompiledQuery): Promise<QueryResult<unknown>> {
    if (this.#owner !== undefined && this.#owner !== connection) {
      return this.waitForTransaction().then(() => this.execute(connection, query));
    }
    const { sql, parameters } = query;
    if (this.#owner === connection) return this.#executeInTransaction(sql, parameters);
    if (isControlStatement(sql)) {
      this.commitGroup();
      // PRAGMA, ROLLBACK TO, ATTACH…: nothing says what they change.
      this.#events.onWrite(undefined);
      try {
        return Promise.resolve(new CachedStatement(this.native.prepare(sql)).run(parameters));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    let statement: CachedStatement;
    try {
      statement = this.statements.prepare(sql);
    } catch (error) {
      return Promise.reject(error);
    }
    // Kysely times what it runs itself (its log hook, storage/query-observers.ts): no timing here.
    return this.run(statement, parameters, undefined);
  }

  /**
   * Runs a statement in this turn's group, opening one if needed. A write (or a read joining a
   * write group) answers after the group's COMMIT; a read with no write pending answers at once.
   * `keep` receives the result once it may be shown (the row cache, sqlite/core.ts).
   */
  run(statement: CachedStatement, parameters: readonly unknown[], operation: string | undefined, keep?: (result: QueryResult<unknown>) => void): Promise<QueryResult<unknown>> {
    let group: Waiter[];
    try {
      if (statement.readonly) {
        // Reads share one read transaction per turn too: SQLite takes and drops its WAL read lock
        // once instead of around every statement (a tenth of the cost per lookup). With no write
        // in the group there is nothing uncommitted to hide, so the read answers at once.
        group = this.#group ?? this.#openReadGroup();
        if (!this.#groupWrites) {
          const result = statement.timedRun(parameters, operation, this.timer);
          keep?.(result);
          return Promise.resolve(result);
        }
      } else {
        this.#events.onWrite(statement.table, statement.addsRowsOnly);
        group = this.#openGroup();
      }
    } catch (error) {
      return Promise.reject(error);
    }
    let result: QueryResult<unknown>;
    try {
      result = statement.timedRun(parameters, operation, this.timer);
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
      this.#events.onCommitFailed();
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
    if (this.#groupWrites) {
      this.commits += 1;
      this.onCommitted?.();
    }
    timer?.('commit', performance.now() - started, false);
    for (const waiter of group) waiter.resolve(waiter.result);
  }

  #failGroup(error: unknown): void {
    this.#events.onCommitFailed();
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
      if (!statement.readonly) this.#events.onWrite(statement.table, statement.addsRowsOnly);
      return Promise.resolve(statement.run(parameters));
    } catch (error) {
      if (!this.native.inTransaction) this.#failGroup(error);
      return Promise.reject(error);
    }
  }

  /**
   * db.transaction() joins the group as a savepoint: its writes stay all-or-nothing (ROLLBACK TO
   * undoes them alone) and share the group's COMMIT. It holds the connection until it ends;
   * plain queries arriving meanwhile wait.
   */
  async begin(connection: object): Promise<void> {
    // Checked again right before opening, in the same synchronous step: several waiters wake at once.
    while (this.#ownerDone !== undefined) await this.#ownerDone;
    this.#openGroup();
    this.#control(`SAVEPOINT ${TRANSACTION_SAVEPOINT}`);
    this.#owner = connection;
    this.#ownerDone = new Promise((resolve) => {
      this.#endOwner = resolve;
    });
  }

  /**
   * storage/prepared.ts `atomically`: `steps` run inside the savepoint of a db.transaction(), in
   * one synchronous step (SAVEPOINT, the statements, RELEASE), so the connection is never held
   * across a promise and no other query can come between them. A throw undoes them all (ROLLBACK
   * TO) and rejects with it; otherwise it settles with their value after the group's COMMIT.
   */
  atomically<T>(steps: (run: (sql: string, parameters: readonly unknown[], operation: string) => QueryResult<unknown>) => T): Promise<T> {
    if (this.#owner !== undefined) return this.waitForTransaction().then(() => this.atomically(steps));
    let group: Waiter[];
    try {
      group = this.#openGroup();
      this.#control(`SAVEPOINT ${TRANSACTION_SAVEPOINT}`);
    } catch (error) {
      if (!this.native.inTransaction) this.#failGroup(error);
      return Promise.reject(error);
    }
    let value: T;
    try {
      value = steps(this.#step);
      this.#control(`RELEASE ${TRANSACTION_SAVEPOINT}`);
    } catch (error) {
      if (this.native.inTransaction) {
        this.#events.onRollback();
        try {
          this.#control(`ROLLBACK TO ${TRANSACTION_SAVEPOINT}`);
          this.#control(`RELEASE ${TRANSACTION_SAVEPOINT}`);
        } catch {
          // As end('ROLLBACK'): the caller hears the original error; a failed undo adds nothing.
        }
      } else {
        // The error ended the group's transaction: every earlier write of the group is gone too.
        this.#failGroup(error);
      }
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => group.push({ result: EMPTY_RESULT, resolve: () => resolve(value), reject }));
  }

  /** One statement of `atomically`: announced to the row cache when it writes, and timed. */
  readonly #step = (sql: string, parameters: readonly unknown[], operation: string): QueryResult<unknown> => {
    if (!this.native.inTransaction) throw new Error('the transaction was aborted by an earlier error');
    const statement = this.statements.prepare(sql);
    if (!statement.readonly) this.#events.onWrite(statement.table, statement.addsRowsOnly);
    return statement.timedRun(parameters, operation, this.timer);
  };

  /** RELEASE (resolving after the group's COMMIT) or ROLLBACK TO the transaction's savepoint. */
  end(connection: object, command: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.#owner !== connection) return Promise.resolve();
    let outcome: Promise<void>;
    try {
      if (!this.native.inTransaction) throw new Error('the transaction was aborted by an earlier error');
      if (command === 'COMMIT') {
        this.#control(`RELEASE ${TRANSACTION_SAVEPOINT}`);
        const group = this.#group as Waiter[];
        outcome = new Promise((resolve, reject) => group.push({ result: EMPTY_RESULT, resolve: () => resolve(), reject }));
      } else {
        this.#events.onRollback();
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

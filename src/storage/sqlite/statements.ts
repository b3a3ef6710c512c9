/**
 * What: better-sqlite3 statements prepared once per SQL text (StatementCache, least recently used
 * out first) and run with row objects built in JavaScript (CachedStatement).
 * Invariant: a row is the object better-sqlite3 would build (one property per column, in column
 * order, a later duplicate name overwriting an earlier one); what a statement writes is read from
 * its SQL once, when it is prepared.
 * Tested: test/storage/group-commit.test.ts (statement cache), test/storage/row-cache.test.ts (rows).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { QueryResult } from 'kysely';
import type { StatementTimer } from '../query-observers.js';

type Native = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement<unknown[], unknown>;

/** Statements kept prepared; the application has a few hundred distinct ones at most. */
const STATEMENT_CACHE_SIZE = 1000;

/** Statements that cannot run inside a transaction or must not be grouped. */
const UNGROUPED = /^\s*(pragma|vacuum|begin|commit|end|rollback|savepoint|release|attach|detach)\b/i;

/** PRAGMA, BEGIN, SAVEPOINT, ATTACH…: statements that run outside the write groups (sqlite/write-groups.ts). */
export function isControlStatement(sql: string): boolean {
  return UNGROUPED.test(sql);
}

const WRITE_TARGET = /^\s*(?:insert\s+(?:or\s+\w+\s+)?into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?[\s(]/i;

/**
 * The one table a plain INSERT, UPDATE or DELETE writes, in lower case; undefined for any other
 * statement (a CTE, CREATE, a write whose target cannot be read from its start).
 */
export function writeTarget(sql: string): string | undefined {
  return WRITE_TARGET.exec(sql)?.[1]?.toLowerCase();
}

/** INSERT INTO (not OR REPLACE/IGNORE, not REPLACE INTO), without ON CONFLICT: it can only add rows. */
const PLAIN_INSERT = /^\s*insert\s+into\s/i;
const UPSERT = /\bon\s+conflict\b/i;

/**
 * Whether a write can only add rows to its one table: a plain INSERT, which changes and deletes
 * nothing (an upsert, INSERT OR REPLACE and REPLACE INTO can). The row cache keeps such writes'
 * lookups (sqlite/row-cache.ts, docs/performance.md §Row cache).
 */
export function addsRowsOnly(sql: string): boolean {
  return PLAIN_INSERT.test(sql) && !UPSERT.test(sql) && writeTarget(sql) !== undefined;
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
  /** Whether the statement leaves the database as it is (SQLite's sqlite3_stmt_readonly), read once. */
  readonly readonly: boolean;
  /** What a write announces (sqlite/write-groups.ts WriteEvents): its one table, or undefined when unknown. */
  readonly table: string | undefined;
  /** What a write announces too: it can only add rows (a plain INSERT, addsRowsOnly). */
  readonly addsRowsOnly: boolean;
  readonly #columns: readonly string[] | undefined;

  constructor(statement: Statement) {
    this.#statement = statement;
    this.readonly = statement.readonly;
    this.table = this.readonly ? undefined : writeTarget(statement.source);
    this.addsRowsOnly = !this.readonly && addsRowsOnly(statement.source);
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

  /** Runs now, timed when it has an operation and something listens: a plain call, no promise. */
  timedRun(parameters: readonly unknown[], operation: string | undefined, timer: StatementTimer | undefined): QueryResult<unknown> {
    if (operation === undefined || timer === undefined) return this.run(parameters);
    const started = performance.now();
    let result: QueryResult<unknown>;
    try {
      result = this.run(parameters);
    } catch (error) {
      timer(operation, performance.now() - started, true);
      throw error;
    }
    timer(operation, performance.now() - started, false);
    return result;
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

/**
 * What: Kysely's SQLite dialect with a driver of its own: one better-sqlite3 connection shared by
 * every query and transaction, run through the write groups (sqlite/write-groups.ts) instead of
 * Kysely's SqliteDriver (a statement parsed and a transaction committed per query).
 * Invariant: every Kysely connection is a handle on the same core; a transaction is the one that
 * holds it until it ends, and named savepoints are plain statements inside it.
 * Tested: test/storage/group-commit.test.ts.
 */
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import { SqliteCore } from './core.js';
import type { WriteGroups } from './write-groups.js';
import { SqliteLiteralLimitCompiler } from './query-compiler.js';

/** A handle Kysely holds for one query or one transaction; all share the core's connection. */
class GroupConnection implements DatabaseConnection {
  readonly #groups: WriteGroups;

  constructor(groups: WriteGroups) {
    this.#groups = groups;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#groups.execute(this, query) as Promise<QueryResult<R>>;
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Not grouped and not cached: an iterating statement cannot be used by another query meanwhile.
    const result = await this.#groups.execute(this, query);
    for (const row of result.rows) yield { rows: [row as R] };
  }
}

class GroupCommitDriver implements Driver {
  readonly #groups: WriteGroups;

  constructor(groups: WriteGroups) {
    this.#groups = groups;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new GroupConnection(this.#groups);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#groups.begin(connection);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#groups.end(connection, 'COMMIT');
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#groups.end(connection, 'ROLLBACK');
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
    this.#groups.close();
  }
}

/** Kysely's SQLite dialect with the group-commit driver above. */
export class GroupCommitSqliteDialect implements Dialect {
  readonly core: SqliteCore;

  constructor(native: BetterSqlite3.Database) {
    this.core = new SqliteCore(native);
  }

  createDriver(): Driver {
    return new GroupCommitDriver(this.core.groups);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteLiteralLimitCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

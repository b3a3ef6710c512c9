/**
 * What: tells a listener, and waits for it, after every committed PostgreSQL statement or
 * transaction that updated or deleted rows of the tables it watches (storage/coherence.ts keeps
 * each instance's memory of such rows coherent with it).
 * Invariant: the listener runs after the COMMIT (or the autocommit statement) and before the
 * caller hears the result, so nothing that depends on the change being acknowledged happens
 * before every instance has dropped what it remembered. Inserts are not changes: a memory of rows
 * never holds a row that did not exist. A rolled-back transaction tells nothing.
 * Tested: test/storage/committed-changes.test.ts; test/http/bearer-coherence.test.ts.
 */
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, RootOperationNode, TransactionSettings } from 'kysely';
import { tablesChanged } from './query-tables.js';

/** A statement as the driver sees it: its SQL text and the operation tree it was compiled from. */
export interface Statement {
  readonly sql: string;
  readonly query: RootOperationNode;
}

export interface CommittedChanges {
  /**
   * Whether the statement may change existing rows of a watched table (update, delete, merge,
   * upsert, replace: storage/query-tables.ts), read from its operation tree; a raw `sql` statement
   * by its text (changePattern). False while nobody listens.
   */
  touches(statement: Statement): boolean;
  /** Awaited after a committed change (a no-op while nobody listens). */
  changed(): Promise<void>;
  /**
   * `listener` is awaited after each committed update or delete of `tables` (one listener; a
   * second replaces the first). Returns a function that removes it.
   */
  listen(tables: readonly string[], listener: () => Promise<void>): () => void;
}

const MAX_REMEMBERED_STATEMENTS = 2_000;

export function committedChanges(): CommittedChanges {
  let listener: (() => Promise<void>) | undefined;
  let pattern: RegExp | undefined;
  let watched: ReadonlySet<string> = new Set();
  // Kysely compiles the same text, from the same tree, for every call of a query; the hot paths
  // are prepared (storage/prepared.ts). The answer per text is remembered, bounded by starting over.
  const seen = new Map<string, boolean>();
  return {
    touches(statement) {
      if (pattern === undefined) return false;
      const sql = statement.sql;
      let answer = seen.get(sql);
      if (answer === undefined) {
        const changed = tablesChanged(statement.query);
        answer = changed === undefined ? pattern.test(sql) : [...changed].some((table) => watched.has(table));
        if (seen.size >= MAX_REMEMBERED_STATEMENTS) seen.clear();
        seen.set(sql, answer);
      }
      return answer;
    },
    changed() {
      return listener === undefined ? Promise.resolve() : listener();
    },
    listen(tables, next) {
      listener = next;
      pattern = changePattern(tables);
      watched = new Set(tables.map((table) => table.toLowerCase()));
      seen.clear();
      return () => {
        if (listener !== next) return;
        listener = undefined;
        pattern = undefined;
        seen.clear();
      };
    },
  };
}

/**
 * For raw `sql` statements only, which have no operation tree to read: `update <table>`, `delete
 * from <table>`, `truncate <table>` and `insert into <table> … on conflict … do update` anywhere
 * in the statement (a data-modifying CTE included), the table quoted or not, with or without a
 * schema. Wider than exact on purpose: a false alarm costs one forget, a miss a stale answer.
 */
export function changePattern(tables: readonly string[]): RegExp {
  const names = tables.map((t) => t.replace(/[^a-z0-9_]/gi, '')).join('|');
  const table = String.raw`(?:only\s+)?(?:"?\w+"?\.)?"?(?:${names})"?(?:\s|$|;|\()`;
  return new RegExp(String.raw`\b(?:(?:update|delete\s+from|truncate(?:\s+table)?)\s+${table}|insert\s+into\s+${table}[\s\S]*\bon\s+conflict\b[\s\S]*\bdo\s+update\b)`, 'i');
}

/** PostgreSQL's Kysely dialect with its driver wrapped by `watchingDriver`. */
export function watchingDialect(base: Dialect, changes: CommittedChanges): Dialect {
  return {
    createAdapter: () => base.createAdapter(),
    createDriver: () => watchingDriver(base.createDriver(), changes),
    createIntrospector: (db) => base.createIntrospector(db),
    createQueryCompiler: () => base.createQueryCompiler(),
  };
}

interface Watched extends DatabaseConnection {
  inner: DatabaseConnection;
  inTransaction: boolean;
  dirty: boolean;
}

/**
 * A driver whose connections report committed changes: an autocommit statement that touches a
 * watched table waits for the listener before it resolves; inside a transaction the statement
 * marks the transaction, and its COMMIT waits for the listener.
 */
export function watchingDriver(inner: Driver, changes: CommittedChanges): Driver {
  const wrappers = new WeakMap<DatabaseConnection, Watched>();
  const wrap = (connection: DatabaseConnection): Watched => {
    let wrapped = wrappers.get(connection);
    if (wrapped === undefined) {
      const self: Watched = {
        inner: connection,
        inTransaction: false,
        dirty: false,
        async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
          if (!changes.touches(query)) return connection.executeQuery<R>(query);
          if (self.inTransaction) {
            self.dirty = true;
            return connection.executeQuery<R>(query);
          }
          const result = await connection.executeQuery<R>(query);
          await changes.changed();
          return result;
        },
        streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
      };
      wrapped = self;
      wrappers.set(connection, wrapped);
    }
    return wrapped;
  };
  const unwrap = (connection: DatabaseConnection): Watched => connection as Watched;
  const driver: Driver = {
    init: () => inner.init(),
    acquireConnection: async () => wrap(await inner.acquireConnection()),
    async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
      const watched = unwrap(connection);
      await inner.beginTransaction(watched.inner, settings);
      watched.inTransaction = true;
      watched.dirty = false;
    },
    async commitTransaction(connection: DatabaseConnection) {
      const watched = unwrap(connection);
      const dirty = watched.dirty;
      watched.inTransaction = false;
      watched.dirty = false;
      try {
        await inner.commitTransaction(watched.inner);
      } catch (error) {
        // A COMMIT whose answer was lost may have committed: told as a change all the same.
        if (dirty) await changes.changed().catch(() => undefined);
        throw error;
      }
      if (dirty) await changes.changed();
    },
    async rollbackTransaction(connection: DatabaseConnection) {
      const watched = unwrap(connection);
      watched.inTransaction = false;
      watched.dirty = false;
      await inner.rollbackTransaction(watched.inner);
    },
    releaseConnection: (connection: DatabaseConnection) => inner.releaseConnection(unwrap(connection).inner),
    destroy: () => inner.destroy(),
  };
  if (inner.savepoint) driver.savepoint = (connection, name, compile) => inner.savepoint!(unwrap(connection).inner, name, compile);
  if (inner.rollbackToSavepoint) driver.rollbackToSavepoint = (connection, name, compile) => inner.rollbackToSavepoint!(unwrap(connection).inner, name, compile);
  if (inner.releaseSavepoint) driver.releaseSavepoint = (connection, name, compile) => inner.releaseSavepoint!(unwrap(connection).inner, name, compile);
  return driver;
}

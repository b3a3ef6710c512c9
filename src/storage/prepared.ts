import { hash } from 'node:crypto';
import type { Compilable, CompiledQuery, Kysely, QueryResult, RootOperationNode, Transaction } from 'kysely';
import type { Database } from './database.js';

/**
 * Hot-path queries built once (DESIGN §5: "the hot paths run without an ORM, with prepared
 * statements and as few round trips as the semantics allow").
 *
 * A Kysely query is written as everywhere else, typed against the schema, but with named
 * placeholders where the values go; it is compiled once per SQL dialect, and each call only
 * puts its values into the compiled parameter list. Building and compiling a query tree per call
 * (`freeze`, `visitNode`, `cloneWithWhere`, `parseRowValues`) was 6–10 % of the server's CPU on
 * webhook execute, bearer checks and the token endpoint (docs/performance.md).
 *
 * Outside a transaction the compiled statement goes straight to the connection (`directRunner`,
 * registered by storage/connect.ts: the group-commit SQLite core, whose statement cache keeps it
 * prepared, or the pg pool as a named statement that each connection parses and plans once),
 * skipping Kysely's executor and its promise hops; inside one it runs through the transaction's
 * Kysely connection as any other query. Metrics see it either way.
 */

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Runs one compiled statement outside any transaction. `cacheable`: a point lookup the runner may
 * answer from memory while nothing could have changed it (SQLite's row cache, storage/row-cache.ts).
 */
export type DirectRunner = (query: CompiledQuery, cacheable?: boolean) => Promise<QueryResult<unknown>>;

const directRunners = new WeakMap<object, DirectRunner>();

/** storage/connect.ts: statements for this Kysely instance (not its transactions) may skip the executor. */
export function registerDirectRunner(db: Kysely<Database>, runner: DirectRunner): void {
  directRunners.set(db, runner);
}

/** Stands in for a value while the query is compiled; replaced by the call's value afterwards. */
class Placeholder {
  constructor(readonly name: string) {}
}

/** Where each compiled parameter comes from: a placeholder's value, or a constant of the query. */
type Slot = { name: string } | { constant: unknown };

interface Template {
  sql: string;
  query: RootOperationNode;
  slots: readonly Slot[];
  /** A name for the statement derived from its SQL: PostgreSQL prepares it once per connection under it. */
  queryId: { queryId: string };
}

export interface PrepareOptions {
  /**
   * A lookup of one row by a key (webhook, access token, person, application), read on a hot
   * path and rarely written: outside transactions it may be answered from memory until a write
   * could have changed it (storage/row-cache.ts). The caller must not modify the rows it gets.
   */
  cacheable?: boolean;
}

/** A query compiled once per dialect; call it with the database (or transaction) and the values. */
export type PreparedQuery<V, R> = (db: Db, values: V) => Promise<QueryResult<R>>;

/**
 * `prepareQuery<{ hash: string }>()((db, v) => db.selectFrom('t').selectAll().where('h', '=', v.hash))`
 * — `v.hash` is a placeholder while the query is compiled. A placeholder may stand wherever a value
 * does (where, set, values, limit), not for identifiers, lists or ordering.
 */
export function prepareQuery<V extends object>(): <R>(build: (db: Db, values: V) => Compilable<R>, options?: PrepareOptions) => PreparedQuery<V, R> {
  return <R>(build: (db: Db, values: V) => Compilable<R>, options: PrepareOptions = {}): PreparedQuery<V, R> => {
    const cacheable = options.cacheable === true;
    // One template per SQL dialect, keyed by the dialect's adapter class (a Kysely instance and
    // its transactions share one adapter).
    const templates = new Map<unknown, Template>();
    const templateFor = (db: Db): Template => {
      const dialect = db.getExecutor().adapter.constructor;
      let template = templates.get(dialect);
      if (template === undefined) {
        template = compileTemplate(db, build);
        templates.set(dialect, template);
      }
      return template;
    };
    return (db, values) => {
      const template = templateFor(db);
      const parameters = template.slots.map((slot) => ('name' in slot ? (values as Record<string, unknown>)[slot.name] : slot.constant));
      const compiled = { sql: template.sql, parameters, query: template.query, queryId: template.queryId } as CompiledQuery<R>;
      const direct = directRunners.get(db);
      return (direct ? direct(compiled, cacheable) : db.executeQuery(compiled)) as Promise<QueryResult<R>>;
    };
  };
}

function compileTemplate<V extends object>(db: Db, build: (db: Db, values: V) => Compilable<unknown>): Template {
  const used = new Set<string>();
  const placeholders = new Proxy({} as V, {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined;
      used.add(name);
      return new Placeholder(name);
    },
  });
  const compiled = build(db, placeholders).compile();
  const slots = compiled.parameters.map((parameter): Slot => (parameter instanceof Placeholder ? { name: parameter.name } : { constant: parameter }));
  // A placeholder that did not become a parameter (put where Kysely inlines or expands a value)
  // would silently drop the caller's value: refuse the query when it is first built.
  for (const name of used) {
    if (!slots.some((slot) => 'name' in slot && slot.name === name)) throw new Error(`prepareQuery: placeholder "${name}" is not a parameter of ${compiled.sql}`);
  }
  return { sql: compiled.sql, query: compiled.query, slots, queryId: { queryId: statementName(compiled.sql) } };
}

/** `gh_` and 24 hex digits of the SQL's SHA-256: the same statement gets the same name in every process. */
export function statementName(sql: string): string {
  return `gh_${hash('sha256', sql, 'hex').slice(0, 24)}`;
}

/** The first row, or undefined (Kysely's executeTakeFirst for a prepared query). */
export async function firstRow<R>(result: Promise<QueryResult<R>>): Promise<R | undefined> {
  return (await result).rows[0];
}

/** Rows an INSERT, UPDATE or DELETE changed. */
export async function affectedRows(result: Promise<QueryResult<unknown>>): Promise<bigint> {
  return (await result).numAffectedRows ?? 0n;
}

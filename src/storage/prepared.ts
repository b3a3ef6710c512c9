/**
 * What: hot-path queries compiled once and bound per connection (prepareQuery), and the one
 * declaration of a cached point lookup (hotLookup: table, key, converter).
 * Invariant: per call, only the values change; a cacheable statement is checked once, where it is
 * declared, to read no table whose writes leave the row cache in place and to call no clock
 * (storage/sqlite/row-cache.ts assertCacheable), so its answer is a pure function of its parameters.
 * Tested: test/storage/prepared.test.ts, test/storage/row-cache.test.ts (the refusals),
 * test/http/webhook-hot-path.test.ts (one row-cache miss for 100 executes).
 */
import { hash } from 'node:crypto';
import {
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  type Compilable,
  type CompiledQuery,
  type QueryResult,
  type RootOperationNode,
  type Selectable,
  type Transaction,
} from 'kysely';
import type { Database } from './database.js';
import { coherenceOf, declareCoherentCache } from './coherence.js';
import { statementOperation } from './query-observers.js';
import { tablesNamed } from './query-tables.js';
import { assertCacheable, convertOnce } from './sqlite/row-cache.js';
import { SqliteLiteralLimitCompiler } from './sqlite/query-compiler.js';

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
 * A cached lookup is declared with hotLookup, never by hand: the declaration names the table and
 * the key, converts each row once, and is refused at start-up if the row cache could answer it
 * wrongly.
 *
 * Outside a transaction the statement is bound once to the connection (`DirectRunner`, registered
 * by storage/sqlite/connect.ts and storage/postgres.ts: the SQLite core, storage/sqlite/core.ts,
 * keeps the better-sqlite3 statement and runs it with each call's values; the pg pool sends it as
 * a named statement that each connection parses and plans once), skipping Kysely's executor and
 * its promise hops; inside a transaction it runs through the transaction's Kysely connection as
 * any other query. Metrics see it either way.
 */

type Db = Kysely<Database> | Transaction<Database>;

/** What a direct runner needs to know of a prepared statement, once. */
export interface DirectStatement {
  sql: string;
  /** The operation tree it was compiled from: what it reads and changes (storage/query-tables.ts). */
  query: RootOperationNode;
  /** A name derived from the SQL: PostgreSQL prepares it once per connection under it. */
  queryId: string;
  /** 'select', 'insert', 'update' or 'delete': the label its timings carry. */
  operation: string;
  /**
   * A point lookup the runner may answer from memory while nothing could have changed it
   * (SQLite's row cache, storage/sqlite/row-cache.ts).
   */
  cacheable: boolean;
}

/**
 * Binds one prepared statement to a connection, once: the function it returns runs the statement
 * with one call's values, outside any transaction, and times it.
 */
export type DirectRunner = (statement: DirectStatement) => (parameters: readonly unknown[]) => Promise<QueryResult<unknown>>;

const directRunners = new WeakMap<object, DirectRunner>();

/** storage/sqlite/connect.ts and storage/postgres.ts: statements for this Kysely instance (not its transactions) may skip the executor. */
export function registerDirectRunner(db: Kysely<Database>, runner: DirectRunner): void {
  directRunners.set(db, runner);
}

/** One statement of an all-or-none group, run at once: its SQL, values and timing label. */
export type StepRunner = (sql: string, parameters: readonly unknown[], operation: string) => QueryResult<unknown>;

/**
 * Runs `steps` all or none and settles once what they wrote is committed: a database whose
 * statements run synchronously (SQLite, storage/sqlite/write-groups.ts `atomically`).
 */
export type AtomicRunner = <T>(steps: (run: StepRunner) => T) => Promise<T>;

const atomicRunners = new WeakMap<object, AtomicRunner>();

/** storage/sqlite/connect.ts: this Kysely instance can run prepared statements all or none without a Kysely transaction. */
export function registerAtomicRunner(db: Kysely<Database>, runner: AtomicRunner): void {
  atomicRunners.set(db, runner);
}

/** The prepared statements of an all-or-none group (`atomically`): each runs at once and returns its result. */
export interface AtomicSteps {
  run<V, R>(query: PreparedQuery<V, R>, values: V): QueryResult<R>;
}

/**
 * Whether `db` runs `atomically` (SQLite); PostgreSQL's statements are round trips, and its
 * all-or-none writes are single statements or transactions instead.
 */
export function runsAtomically(db: Db): boolean {
  return atomicRunners.has(db);
}

/**
 * Runs prepared statements all or none, without a Kysely transaction (DESIGN §5): on SQLite a
 * savepoint inside the turn's write group, opened, run and released in one synchronous step, so no
 * other query can interleave and nothing waits on a promise between statements; settles after the
 * group's COMMIT, like any write. `steps` must be synchronous; a throw undoes every step (ROLLBACK
 * TO) and rejects with it. Only for a database with `runsAtomically`.
 */
export function atomically<T>(db: Db, steps: (tx: AtomicSteps) => T): Promise<T> {
  const runner = atomicRunners.get(db);
  if (runner === undefined) return Promise.reject(new Error('atomically: this database runs no atomic steps (runsAtomically)'));
  return runner((run) =>
    steps({
      run: <V, R>(query: PreparedQuery<V, R>, values: V): QueryResult<R> => {
        const { sql, parameters, operation } = query.statement(db, values);
        return run(sql, parameters, operation) as QueryResult<R>;
      },
    }),
  );
}

/** Stands in for a value while the query is compiled; replaced by the call's value afterwards. */
class Placeholder {
  constructor(readonly name: string) {}
}

/** Where each compiled parameter comes from: a placeholder's value (its name), or a constant of the query. */
interface Slot {
  name: string | undefined;
  constant: unknown;
}

interface Template {
  sql: string;
  query: RootOperationNode;
  slots: readonly Slot[];
  /** A name for the statement derived from its SQL: PostgreSQL prepares it once per connection under it. */
  queryId: { queryId: string };
}

/** A template as one database runs it: straight through its direct runner, or through Kysely. */
interface Binding {
  template: Template;
  /** 'select', 'insert', 'update' or 'delete': the label its timings carry. */
  operation: string;
  direct: ((parameters: readonly unknown[]) => Promise<QueryResult<unknown>>) | undefined;
}

export interface PrepareOptions {
  /**
   * A lookup of one row by a unique key (webhook, access token, person, application; the row
   * cache lets plain INSERTs pass on that ground, storage/sqlite/row-cache.ts), read on a hot
   * path and rarely written: outside transactions it may be answered from memory until a write
   * could have changed it (storage/sqlite/row-cache.ts). The caller must not modify the rows it gets.
   * Checked when the query is declared: one that names a table of NON_INVALIDATING_TABLES or calls
   * the clock throws (storage/sqlite/row-cache.ts assertCacheable). Repositories use hotLookup.
   */
  cacheable?: boolean;
}

/**
 * A query compiled once per dialect; call it with the database (or transaction) and the values.
 * `tables`: the tables its operation tree names (storage/query-tables.ts), undefined for raw `sql`;
 * what a cache of its rows watches (storage/coherence.ts) and what table ownership checks.
 */
export type PreparedQuery<V, R> = ((db: Db, values: V) => Promise<QueryResult<R>>) & {
  readonly tables: ReadonlySet<string> | undefined;
  /** The statement as `db` runs it with these values (for `atomically`). */
  readonly statement: (db: Db, values: V) => { sql: string; parameters: unknown[]; operation: string };
};

/**
 * `prepareQuery<{ hash: string }>()((db, v) => db.selectFrom('t').selectAll().where('h', '=', v.hash))`
 * — `v.hash` is a placeholder while the query is compiled. A placeholder may stand wherever a value
 * does (where, set, values, limit), not for identifiers, lists or ordering.
 */
export function prepareQuery<V extends object>(): <R>(build: (db: Db, values: V) => Compilable<R>, options?: PrepareOptions) => PreparedQuery<V, R> {
  return <R>(build: (db: Db, values: V) => Compilable<R>, options: PrepareOptions = {}): PreparedQuery<V, R> => {
    const cacheable = options.cacheable === true;
    // Compiled once for SQLite at declaration, when first asked what it reads; a cacheable one is
    // refused at start-up (module load), not at the first request.
    let declared: Template | undefined;
    const declaredTemplate = (): Template => (declared ??= compileTemplate(declarationDb(), build));
    if (cacheable) assertCacheable(declaredTemplate().sql, tablesNamed(declaredTemplate().query));
    // One template per SQL dialect, keyed by the dialect's adapter class (a Kysely instance and
    // its transactions share one adapter).
    const templates = new Map<unknown, Template>();
    // One binding per database (or transaction) the query has run on; the last one is remembered
    // apart, as a process runs its queries against one database nearly always.
    const bindings = new WeakMap<Db, Binding>();
    let lastDb: Db | undefined;
    let last: Binding | undefined;
    const bind = (db: Db): Binding => {
      const dialect = db.getExecutor().adapter.constructor;
      let template = templates.get(dialect);
      if (template === undefined) {
        template = compileTemplate(db, build);
        templates.set(dialect, template);
      }
      const runner = directRunners.get(db);
      const operation = statementOperation(template.query.kind, template.sql);
      const direct = runner?.({ sql: template.sql, query: template.query, queryId: template.queryId.queryId, operation, cacheable });
      const binding = { template, operation, direct };
      bindings.set(db, binding);
      return binding;
    };
    const bindingOf = (db: Db): Binding => {
      let binding = db === lastDb ? last : undefined;
      if (binding === undefined) {
        binding = bindings.get(db) ?? bind(db);
        lastDb = db;
        last = binding;
      }
      return binding;
    };
    const fill = (template: Template, values: V): unknown[] => {
      const slots = template.slots;
      const parameters = new Array<unknown>(slots.length);
      for (let i = 0; i < slots.length; i += 1) {
        const slot = slots[i] as Slot;
        parameters[i] = slot.name === undefined ? slot.constant : (values as Record<string, unknown>)[slot.name];
      }
      return parameters;
    };
    const run = (db: Db, values: V): Promise<QueryResult<R>> => {
      const { template, direct } = bindingOf(db);
      const parameters = fill(template, values);
      if (direct !== undefined) return direct(parameters) as Promise<QueryResult<R>>;
      return db.executeQuery({ sql: template.sql, parameters, query: template.query, queryId: template.queryId } as CompiledQuery<R>);
    };
    const statement = (db: Db, values: V): { sql: string; parameters: unknown[]; operation: string } => {
      const { template, operation } = bindingOf(db);
      return { sql: template.sql, parameters: fill(template, values), operation };
    };
    let tables: ReadonlySet<string> | undefined | null = null;
    Object.defineProperty(run, 'statement', { value: statement });
    return Object.defineProperty(run, 'tables', {
      get: () => {
        if (tables === null) tables = tablesNamed(declaredTemplate().query);
        return tables;
      },
    }) as PreparedQuery<V, R>;
  };
}

let declarationKysely: Kysely<Database> | undefined;

/** A Kysely that compiles SQLite's SQL and runs nothing: to check a declaration before any database is open. */
function declarationDb(): Kysely<Database> {
  declarationKysely ??= new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteLiteralLimitCompiler(),
    },
  });
  return declarationKysely;
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
  const slots = compiled.parameters.map((parameter): Slot => (parameter instanceof Placeholder ? { name: parameter.name, constant: undefined } : { name: undefined, constant: parameter }));
  // A placeholder that did not become a parameter (put where Kysely inlines or expands a value)
  // would silently drop the caller's value: refuse the query when it is first built.
  for (const name of used) {
    if (!slots.some((slot) => slot.name === name)) throw new Error(`prepareQuery: placeholder "${name}" is not a parameter of ${compiled.sql}`);
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

type Table = keyof Database & string;
type Column<TB extends Table> = keyof Selectable<Database[TB]> & string;

/** One cached point lookup: the table it reads, the column it is looked up by, and what a row becomes. */
export interface HotLookupDeclaration<TB extends Table, C extends Column<TB>, T extends object> {
  table: TB;
  /** A column whose value identifies at most one row (a primary key or a unique hash): the row cache relies on it (plain INSERTs end no generation). */
  key: Column<TB>;
  /** The columns read; every column when absent. */
  columns?: readonly C[];
  /** Applied once per row read (storage/sqlite/row-cache.ts convertOnce); the value is shared and frozen. */
  convert: (row: Pick<Selectable<Database[TB]>, NoInfer<C>>) => T;
  /**
   * Also remembered across instances on PostgreSQL with Redis (storage/coherence.ts), under this
   * cache name and bound: the cache watches the tables of this lookup's compiled query. Without
   * it, only SQLite's row cache answers it from memory.
   */
  acrossInstances?: { name: string; maxEntries: number };
}

/**
 * Reads the declared row by its key, converted; undefined when there is none. `tables`: what its
 * query reads (storage/query-tables.ts).
 */
export type HotLookup<T> = ((db: Db, key: string) => Promise<T | undefined>) & { readonly tables: ReadonlySet<string> | undefined };

/**
 * `hotLookup({ table: 'webhooks', key: 'id', convert: toWebhook })`: a prepared, cacheable
 * `select … from table where key = ?` whose rows are converted once each. Declared at module level,
 * so a table the row cache cannot keep correct (storage/sqlite/row-cache.ts NON_INVALIDATING_TABLES)
 * stops the process at start-up with the reason.
 */
export function hotLookup<TB extends Table, T extends object, C extends Column<TB> = Column<TB>>(declaration: HotLookupDeclaration<TB, C, T>): HotLookup<T> {
  const { table, key, columns, convert, acrossInstances } = declaration;
  const lookup = prepareQuery<{ key: string }>()(
    (db, v) => {
      // The table and columns are checked against the schema by the declaration's type.
      const from = (db as unknown as Kysely<Record<string, Record<string, unknown>>>).selectFrom(table as string);
      const by: string = key;
      return columns === undefined ? from.selectAll().where(by, '=', v.key) : from.select(columns as readonly string[]).where(by, '=', v.key);
    },
    { cacheable: true },
  );
  const converted = convertOnce(convert as (row: object) => T);
  const read = async (db: Db, value: string): Promise<T | undefined> => {
    const row = (await lookup(db, { key: value })).rows[0];
    return row === undefined ? undefined : converted(row as object);
  };
  // Both caches are declared here, by the one query: SQLite's row cache binds it as cacheable,
  // PostgreSQL's coherent cache watches the tables its tree names (issue #37 §4).
  const remembered = acrossInstances === undefined ? undefined : declareCoherentCache<T>(acrossInstances.name, [lookup], acrossInstances.maxEntries);
  // Without a coherence attached (SQLite, transactions) the read allocates nothing more.
  const run =
    remembered === undefined
      ? read
      : (db: Db, value: string): Promise<T | undefined> => {
          const coherence = coherenceOf(db);
          return coherence === undefined ? read(db, value) : coherence.cache(remembered).read(value, () => read(db, value));
        };
  return Object.defineProperty(run, 'tables', { get: () => lookup.tables }) as HotLookup<T>;
}

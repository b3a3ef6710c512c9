/**
 * What: point lookups (webhook, access token, person, application) answered from memory while no
 * write could have changed them; SQLite only (with PostgreSQL several instances share the data).
 * Invariant: a cached answer is what a fresh read would return. It hears every change as WriteEvents
 * (sqlite/events.ts) and alone ends a generation; assertCacheable refuses, where a lookup is declared
 * (storage/prepared.ts) and bound (sqlite/core.ts), one that reads an exempt table or the clock.
 * Tested: test/storage/row-cache.test.ts, test/http/webhook-hot-path.test.ts (GET → DELETE → GET
 * of a webhook message; 100 executes on one webhook cost at most one miss).
 */

import type { QueryResult } from 'kysely';
import type { WriteEvents } from './events.js';
import { addsRowsOnly, writeTarget } from './statements.js';

/**
 * Why cache at all (DESIGN §5: the hot paths read "as few times as the semantics allow"): every
 * bearer request looks up its access token and its person, and every webhook URL request its
 * webhook, rows that change rarely and are read thousands of times in between. Turning such a row
 * into JavaScript values costs more than SQLite finding it, and the two lookups were about a sixth
 * of the server's CPU on GET /users/@me (docs/performance.md). What a cached answer promises is what
 * a read in the same event-loop turn promised before (sqlite/write-groups.ts: reads share a read
 * transaction per turn).
 */

/**
 * How many lookups of one statement are kept; each holds one small row (a webhook, a token, a
 * person) and its converted value, ~0.5 KB on the heap for a webhook (measured), so ~10 MB per
 * statement at most; it holds more than the benchmark's 14,000 webhook URLs (docs/performance.md).
 */
export const ROW_CACHE_ENTRIES = 20_000;

/**
 * Tables whose writes end no generation. A table belongs here only when no cached lookup reads
 * it (assertCacheable refuses one that does) and neither its foreign keys (ON DELETE/UPDATE actions
 * run on the child, not on the parent) nor a trigger (the schema has none) make its writes reach
 * another table. Messages are the one write on the hot path (webhook execute, bot messages);
 * a signed GitHub delivery also records its id against replays (webhook_github_deliveries, read
 * only by that check); the token endpoint's refresh tokens and codes are used up by an UPDATE on
 * every grant and read by no cached lookup (nothing references them either); everything else is rare.
 *
 * Plain INSERTs (sqlite/statements.ts addsRowsOnly) end no generation, whatever their table: every
 * cached lookup is a point lookup by a unique key (storage/prepared.ts hotLookup), and only a row
 * is kept, never a miss (RowCache.set), so a row added later cannot be what a kept answer lacks,
 * and a row with a kept row's key cannot be added (the key is unique). An INSERT fires no foreign
 * key action (those run on deletes and updates of the parent), the schema has no trigger, and no
 * table declares a conflict clause (ON CONFLICT REPLACE would make a plain INSERT delete a row;
 * test/http/token-row-cache.test.ts reads the schema for both). So a
 * token grant's new access token leaves the app, person and webhook lookups in memory.
 */
export const NON_INVALIDATING_TABLES: ReadonlySet<string> = new Set(['messages', 'webhook_github_deliveries', 'oauth_refresh_tokens', 'oauth_codes']);

/**
 * SQL whose answer depends on when or how often it runs, not only on its parameters: SQLite's and
 * PostgreSQL's clock functions and keywords, and random values. A cached answer would freeze it.
 */
const IMPURE_SQL =
  /\b(?:(?:unixepoch|now|datetime|date|time|julianday|strftime|timediff|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|random|randomblob|gen_random_uuid)\s*\(|current_timestamp\b|current_date\b|current_time\b|localtimestamp\b|localtime\b)/i;

/** Whether `sql` names `table` as an identifier (quoted or bare), not as part of a longer name. */
function namesTable(sql: string, table: string): boolean {
  return new RegExp(`(?:^|[^A-Za-z0-9_$])${table}(?:$|[^A-Za-z0-9_$])`, 'i').test(sql);
}

/**
 * Refuses a statement the row cache could answer wrongly: one that names a table whose writes end
 * no generation (a deleted message would still be served), or that calls the clock or random (the
 * cached answer would not be a pure function of its parameters). Called once per statement, where
 * it is declared (with the tables its compiled query names) and where it is bound (its text only),
 * never per lookup.
 */
export function assertCacheable(sql: string, tables?: ReadonlySet<string>): void {
  for (const table of NON_INVALIDATING_TABLES) {
    // The tables of its operation tree when it has one (storage/query-tables.ts); its text otherwise.
    if (tables === undefined ? namesTable(sql, table) : tables.has(table)) {
      throw new Error(
        `a cacheable statement may not read "${table}": writes to it do not invalidate the row cache (storage/sqlite/row-cache.ts NON_INVALIDATING_TABLES), so a changed or deleted row would still be served: ${sql}`,
      );
    }
  }
  const impure = IMPURE_SQL.exec(sql);
  if (impure !== null) {
    throw new Error(`a cacheable statement must be a pure function of its parameters, but calls "${impure[0].replace(/\s*\($/, '')}" (pass the time as a parameter, or do not cache it): ${sql}`);
  }
}

/** Whether a write to `table` (undefined: not known) may change a cached row: unless it is an exempt table. */
function tableInvalidatesRows(table: string | undefined): boolean {
  return table === undefined || !NON_INVALIDATING_TABLES.has(table);
}

/** Whether a statement that writes may change a cached row: unless it plainly writes one exempt table, or only adds rows. */
export function writeInvalidatesRows(sql: string): boolean {
  return !addsRowsOnly(sql) && tableInvalidatesRows(writeTarget(sql));
}

/**
 * The key of a lookup among those of its statement: its one parameter, or its parameters joined;
 * undefined (not cached) unless every parameter is a string, as the keys of the cached lookups are.
 */
export function lookupKey(parameters: readonly unknown[]): string | undefined {
  if (parameters.length === 1) {
    const only = parameters[0];
    return typeof only === 'string' ? only : undefined;
  }
  // Joined with a separator no value may hold, or two lookups could share a key.
  for (const parameter of parameters) if (typeof parameter !== 'string' || parameter.includes('\u0000')) return undefined;
  return parameters.join('\u0000');
}

/** Picks which of `size` cached lookups makes room for a new one: an index in [0, size). */
export type PickVictim = (size: number) => number;

const pickAtRandom: PickVictim = (size) => Math.floor(Math.random() * size);

/** One statement's lookups: results by key, and the keys in slots, for eviction. */
interface Entries {
  results: Map<string, QueryResult<unknown>>;
  keys: string[];
}

/**
 * Results by statement and lookup key, all read in the current generation (a generation's end
 * drops them, and a result read in an earlier one is refused); past the bound, a new lookup takes
 * the place of one chosen at random. Keyed by the statement's SQL first: that string is the same
 * object on every call, so its hash is computed once, where a key made of the SQL and the values
 * would be a new long string to hash on every lookup.
 *
 * Why at random, not the oldest first (docs/performance.md, row cache): requests that cycle over
 * more webhooks than the bound (the benchmark's 14,000 URLs in turn; any round-robin sender) find
 * none of them in a cache that drops the oldest, since each is dropped just before it comes round
 * again; dropped at random, about half are found. And dropping a Map's oldest entry means asking
 * for its first key, which V8 finds by walking past every entry deleted before it: with the bound
 * reached, ~6 µs per miss. A slot array makes the choice O(1).
 */
export class RowCache implements WriteEvents {
  #generation = 0;
  readonly #statements = new Map<string, Entries>();
  readonly #limit: number;
  readonly #pick: PickVictim;
  /** Lookups answered from memory, and lookups that went to the database (tests, diagnostics). */
  hits = 0;
  misses = 0;

  constructor(limitPerStatement = ROW_CACHE_ENTRIES, pick: PickVictim = pickAtRandom) {
    this.#limit = limitPerStatement;
    this.#pick = pick;
  }

  get generation(): number {
    return this.#generation;
  }

  /** Lookups kept, over every statement. */
  get size(): number {
    let size = 0;
    for (const entries of this.#statements.values()) size += entries.results.size;
    return size;
  }

  /** Something may have changed a cached row: every entry read so far is stale (called by the handlers below). */
  invalidate(): void {
    this.#generation += 1;
    this.#statements.clear();
  }

  onWrite(table: string | undefined, addsRowsOnly = false): void {
    // A plain INSERT changes no kept answer (NON_INVALIDATING_TABLES says why).
    if (addsRowsOnly && table !== undefined) return;
    if (tableInvalidatesRows(table)) this.invalidate();
  }

  /** Whatever the lost group wrote is gone: start over rather than reason about it. */
  onCommitFailed(): void {
    this.invalidate();
  }

  onRollback(): void {
    this.invalidate();
  }

  onForeignCommit(): void {
    this.invalidate();
  }

  get(sql: string, key: string): QueryResult<unknown> | undefined {
    const result = this.#statements.get(sql)?.results.get(key);
    if (result !== undefined) {
      this.hits += 1;
      return result;
    }
    this.misses += 1;
    return undefined;
  }

  /**
   * Keeps a result read in `generation`, unless a write has ended that generation since. A miss
   * (no row) is not kept: a plain INSERT, which ends no generation, could add its row.
   */
  set(sql: string, key: string, generation: number, result: QueryResult<unknown>): void {
    if (generation !== this.#generation || result.rows.length === 0) return;
    let entries = this.#statements.get(sql);
    if (entries === undefined) {
      entries = { results: new Map(), keys: [] };
      this.#statements.set(sql, entries);
    }
    const { results, keys } = entries;
    if (results.has(key)) {
      results.set(key, result);
      return;
    }
    if (keys.length < this.#limit) {
      keys.push(key);
    } else {
      const slot = this.#pick(keys.length);
      results.delete(keys[slot] as string);
      keys[slot] = key;
    }
    results.set(key, result);
  }
}

/**
 * `convert` applied once per row object. A row the row cache answers again and again is the same
 * object each time, so the domain value made from it (ids turned from bigint into decimal strings,
 * scopes split, redirect URIs parsed) is kept beside it instead of built anew on every request;
 * a row read afresh is a new object and is converted afresh.
 * Every later caller shares the value, so it is frozen, and so are the arrays it holds: a caller
 * that tried to change it would fail loudly (a TypeError in strict mode) instead of changing
 * another request's answer. Repositories get it through hotLookup (storage/prepared.ts).
 */
export function convertOnce<R extends object, T extends object>(convert: (row: R) => T): (row: R) => T {
  const converted = new WeakMap<R, T>();
  return (row) => {
    let value = converted.get(row);
    if (value === undefined) {
      value = convert(row);
      for (const field of Object.values(value)) if (Array.isArray(field)) Object.freeze(field);
      Object.freeze(value);
      converted.set(row, value);
    }
    return value;
  };
}

/**
 * What: opens a PostgreSQL database: a pg pool behind Kysely, and the hot-path statements of
 * storage/prepared.ts sent straight to the pool as named statements (parsed and planned once per
 * connection).
 * Invariant: a connection error never crashes the process; it reaches the caller through its next
 * query. PostgreSQL has no row cache: several instances may share the database.
 * Tested: test/storage/postgres-pool.test.ts, and every suite run with TEST_DATABASE_URL.
 */
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from './database.js';
import type { ConnectOptions, DatabaseHandle } from './handle.js';
import { committedChanges, watchingDialect } from './committed-changes.js';
import { registerDirectRunner } from './prepared.js';
import { settingsAdvice, type AdvisedSettings } from './postgres-settings.js';
import { queryObservers } from './query-observers.js';

export function connectPostgres(url: string, options: ConnectOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Fail fast when the database is down instead of queueing requests (issue #7 §4: no hang past 5 s).
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // A dropped connection while idle must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor while checked out: pg-pool listens only to idle clients, so a connection cut inside a
  // transaction (PostgreSQL stopped: 57P01) would be an unhandled 'error' event and kill the
  // process. The failure reaches the caller through its next query instead, and pg-pool drops the
  // broken client on release (issue #7 §4).
  pool.on('connect', (client) => client.on('error', () => undefined));
  const observers = queryObservers();
  // Updates and deletes of the tables an instance remembers rows of are told to storage/coherence.ts
  // once committed, before their caller goes on (committed-changes.ts).
  const changes = committedChanges();
  const db = new Kysely<Database>({ dialect: watchingDialect(new PostgresDialect({ pool }), changes), log: observers.log });
  // Prepared hot-path statements go straight to the pool: one checkout, one round trip, one
  // release, as Kysely's driver does, without its executor (storage/prepared.ts).
  registerDirectRunner(db, (statement) => {
    const { sql: text, queryId: name, operation } = statement;
    return async (parameters) => {
      const started = performance.now();
      let result: pg.QueryResult;
      try {
        // A named statement: each pooled connection parses and plans it once, then only binds
        // values (the extended protocol's Parse is skipped), DESIGN §5.
        result = await pool.query({ name, text, values: parameters as unknown[] });
        observers.emit(operation, performance.now() - started, false);
      } catch (error) {
        observers.emit(operation, performance.now() - started, true);
        throw error;
      }
      // Autocommit: the statement has committed; instances forget what it changed before its caller goes on.
      if (changes.touches(statement)) await changes.changed();
      const changed = result.command === 'INSERT' || result.command === 'UPDATE' || result.command === 'DELETE' || result.command === 'MERGE';
      return changed ? { numAffectedRows: BigInt(result.rowCount ?? 0), rows: result.rows } : { rows: result.rows };
    };
  });
  return {
    db,
    dialect: 'postgres',
    observeQueries: observers.observe,
    onCommittedChange: changes.listen,
    // The same for every instance of this database whatever URL reaches it (host names, ports and
    // users differ between instances): the database's oid and name and the schema statements run in.
    identity: async () => {
      const { rows } = await sql<{ identity: string }>`select (select oid::text from pg_database where datname = current_database()) || ':' || current_database() || ':' || current_schema() as identity`.execute(db);
      return rows[0]?.identity ?? '';
    },
    settingsAdvice: async () => {
      const { rows } = await sql<AdvisedSettings>`select current_setting('autovacuum') as autovacuum`.execute(db);
      return settingsAdvice(rows[0] ?? { autovacuum: '' });
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/**
 * What: which database a Kysely instance (or transaction) runs on, for the repository functions
 * that choose their dialect's strategy inside (issue #37 §4: services never branch on it).
 * Invariant: a property read and an instanceof, no allocation: it is asked on hot paths.
 * Tested: through the repositories' tests on both databases (test/http/webhook-execute-round-trips.test.ts).
 */
import { PostgresAdapter, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.js';

/** Whether `db` runs on PostgreSQL (else SQLite). */
export function onPostgres(db: Kysely<Database> | Transaction<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

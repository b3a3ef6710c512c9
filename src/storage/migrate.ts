import { setTimeout as sleep } from 'node:timers/promises';
import { Migrator, PostgresAdapter, sql, type Kysely, type MigrationResultSet } from 'kysely';
import type { Database } from './database.js';
import { migrations } from './migrations/index.js';

export class MigrationError extends Error {
  constructor(readonly failed: string | undefined, cause: unknown) {
    super(`migration ${failed ?? '(unknown)'} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'MigrationError';
  }
}

/** Applies every pending migration; run at start-up and by `gatehouse migrate`. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one. On PostgreSQL
  // with a per-run search_path (tests, or several deployments in one database) it would find
  // another schema's lock table, skip creating its own, and fail: name the current schema.
  const schema = db.getExecutor().adapter instanceof PostgresAdapter ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  let result: MigrationResultSet = await migrator.migrateToLatest();
  // Kysely's migration lock is per process on SQLite (one connection), so two processes starting
  // together on a fresh file both run the first migration and one fails ("table … already
  // exists"). The loser waits and asks again: the winner's migrations are then recorded as applied.
  // PostgreSQL's lock is a real table lock and needs none of this.
  for (let attempt = 1; result.error && !schema && attempt <= 5; attempt++) {
    await sleep(200 * attempt);
    result = await migrator.migrateToLatest();
  }
  for (let attempt = 1; schema && lostCatalogRace(result) && attempt <= 10; attempt++) {
    await sleep(20 * attempt);
    result = await migrator.migrateToLatest();
  }
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new MigrationError(failed, result.error);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Before it takes its lock, Kysely's migrator asks whether its bookkeeping tables exist through
 * PostgreSQL's introspection, one query over the catalog rows of every schema of the database that
 * names each schema and table again (has_schema_privilege, pg_get_serial_sequence). A schema or
 * table that another deployment or test run drops while that query runs fails it with "schema … /
 * relation … does not exist", though nothing of ours is missing. No migration has run then (none
 * reports an error), so asking again is safe.
 */
export function lostCatalogRace(result: MigrationResultSet): boolean {
  if (!result.error) return false;
  if ((result.results ?? []).some((r) => r.status === 'Error')) return false;
  const message = result.error instanceof Error ? result.error.message : String(result.error);
  return /^(?:schema|relation) ".+" does not exist$/.test(message);
}

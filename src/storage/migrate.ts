import { Migrator, type Kysely, type MigrationResultSet } from 'kysely';
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
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new MigrationError(failed, result.error);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

import type { MigrationResultSet } from 'kysely';
import { describe, expect, it } from 'vitest';
import { lostCatalogRace } from '../../src/storage/migrate.js';

/**
 * Kysely's migrator introspects every schema of a PostgreSQL database before it takes its lock; a
 * schema or table dropped meanwhile by another deployment fails that read, not our migrations.
 * Only such a failure, before any migration ran, is asked again.
 */
describe('migrations: what is asked again on PostgreSQL', () => {
  const failed = (message: string, results?: MigrationResultSet['results']): MigrationResultSet => ({ error: new Error(message), results });

  it('another schema or table dropped during the introspection, before any migration ran', () => {
    expect(lostCatalogRace(failed('schema "gh_test_19b131542d37" does not exist'))).toBe(true);
    expect(lostCatalogRace(failed('relation "gh_test_3d67a16add82.webhook_github_secrets" does not exist', []))).toBe(true);
    expect(lostCatalogRace(failed('schema "x" does not exist', [{ migrationName: 'a', direction: 'Up', status: 'NotExecuted' }]))).toBe(true);
  });

  it('never a migration that failed, another error, or success', () => {
    expect(lostCatalogRace(failed('relation "webhooks" does not exist', [{ migrationName: '2026-11-27-10-webhook-secrets-sealed', direction: 'Up', status: 'Error' }]))).toBe(false);
    expect(lostCatalogRace(failed('connection terminated unexpectedly'))).toBe(false);
    expect(lostCatalogRace({ results: [] })).toBe(false);
  });
});

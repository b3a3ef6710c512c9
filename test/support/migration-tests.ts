import type { Kysely } from 'kysely';
import { afterEach, beforeEach } from 'vitest';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * For a migration's tests (test/storage/migrations-*.test.ts): a fresh database before each test,
 * handed to `use` with its Kysely untyped (what a migration sees), and dropped after it.
 */
export function freshDatabaseEachTest(use: (t: TestDatabase, db: Kysely<unknown>) => void): void {
  let current: TestDatabase | undefined;
  beforeEach(async () => {
    current = await createTestDatabase();
    use(current, current.handle.db as unknown as Kysely<unknown>);
  });
  afterEach(async () => {
    await current?.drop();
    current = undefined;
  });
}

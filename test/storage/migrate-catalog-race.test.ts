import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createTestDatabase, TEST_DATABASE_URL, testDialect } from '../support/database.js';

/**
 * Several deployments (or test runs) in one PostgreSQL database: one dropping its schema while
 * another starts must not stop the other from migrating. Kysely's migrator introspects every
 * schema before it takes its lock (src/storage/migrate.ts lostCatalogRace).
 */
const isPg = testDialect === 'postgres';
if (!isPg) console.warn('test/storage/migrate-catalog-race.test.ts is skipped: it needs PostgreSQL (TEST_DATABASE_URL)');

describe.skipIf(!isPg)('migrations beside other schemas being dropped (PostgreSQL)', () => {
  it('a fresh schema migrates while other schemas with tables are created and dropped all the time', async () => {
    const churn = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await churn.connect();
    let stop = false;
    let dropped = 0;
    const churning = (async () => {
      for (let i = 0; !stop && i < 100_000; i++) {
        const name = `gh_churn_${process.pid}_${i}`;
        await churn.query(`create schema ${name}; create table ${name}.t (id bigserial primary key, a text, b text, c text)`);
        await churn.query(`drop schema ${name} cascade`);
        dropped += 1;
      }
    })();
    try {
      for (let round = 0; round < 6; round++) {
        const database = await createTestDatabase();
        try {
          await expect(migrateToLatest(database.handle.db)).resolves.toContain('2026-11-21-01-foundation');
        } finally {
          await database.drop();
        }
      }
    } finally {
      stop = true;
      await churning;
      await churn.end();
    }
    expect(dropped).toBeGreaterThan(0);
  });
});

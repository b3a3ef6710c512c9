import pg from 'pg';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { connectDatabase } from '../../src/storage/connect.js';
import { isDatabaseUnavailable } from '../../src/storage/unavailable.js';
import { TEST_DATABASE_URL } from '../support/database.js';

if (!TEST_DATABASE_URL) console.warn('test/storage/postgres-pool.test.ts is skipped: it needs TEST_DATABASE_URL (PostgreSQL)');

describe.skipIf(!TEST_DATABASE_URL)('the PostgreSQL pool when connections are cut (issue #7 §4)', () => {
  it('a connection cut inside a transaction fails that transaction as "unavailable", does not crash the process, and the pool goes on', async () => {
    const handle = connectDatabase(TEST_DATABASE_URL as string, { poolSize: 2 });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      let cut!: () => void;
      const wasCut = new Promise<void>((resolve) => (cut = resolve));
      const transaction = handle.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        // What `pg_ctl stop -m fast` does to every session: FATAL 57P01 while it is checked out.
        await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
        await new Promise((r) => setTimeout(r, 200));
        cut();
        await sql`select 1`.execute(trx);
      });
      const failure = await transaction.then(
        () => undefined,
        (error: unknown) => error,
      );
      await wasCut;
      expect(failure).toBeDefined();
      expect(isDatabaseUnavailable(failure)).toBe(true);
      // The broken connection was dropped, not handed out again.
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
      expect(rows[0]!.one).toBe(1);
    } finally {
      await admin.end();
      await handle.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('start-up advice on the PostgreSQL server settings', () => {
  it('warns about autovacuum exactly when this server has it off (storage/postgres-settings.ts)', async () => {
    const handle = connectDatabase(TEST_DATABASE_URL as string, { poolSize: 1 });
    try {
      const { rows } = await sql<{ autovacuum: string }>`show autovacuum`.execute(handle.db);
      const advice = await handle.settingsAdvice!();
      expect(advice.some((a) => a.includes('autovacuum is off'))).toBe(rows[0]!.autovacuum === 'off');
    } finally {
      await handle.close();
    }
  });
});

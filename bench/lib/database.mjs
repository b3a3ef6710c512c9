// A fresh database for one benchmark run (bench/run.mjs, bench/lib/instances.mjs,
// bench/instructions.mjs): a SQLite file in the run's temporary directory, or with --postgres a
// database of its own on BENCH_POSTGRES_URL's server, dropped at the end, and BENCH_REDIS_URL's Redis.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export async function freshDatabase(opts, dir) {
  if (!opts.postgres) return { env: { DATABASE_URL: join(dir, 'bench.db') }, analyze: async () => undefined, drop: async () => undefined, kind: 'sqlite', file: join(dir, 'bench.db') };
  const { default: pg } = await import('pg');
  const adminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `gh_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const autovacuum = (await admin.query('show autovacuum')).rows[0].autovacuum;
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    autovacuum,
    env: { DATABASE_URL: url.toString(), REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    url: url.toString(),
    /**
     * ANALYZE the whole database after a scenario's seeding, as autovacuum would on a default
     * installation once a table grew (it is off on some development PostgreSQLs: `show
     * autovacuum`). Without it, a statement the server prepared while a table was small keeps its
     * plan (a sequential scan of what is now 70,000 grants) until something analyzes the table,
     * and the figure would depend on the seeding's timing. ANALYZE also makes PostgreSQL plan the
     * server's prepared statements anew.
     */
    async analyze() {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      await c.query('ANALYZE');
      await c.end();
    },
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { secretCheck } from '../../src/core/sealed.js';
import { MemoryBucketStore } from '../../src/rate-limit/memory-store.js';
import { createServices } from '../../src/services.js';
import { connectDatabase, type DatabaseHandle } from '../../src/storage/connect.js';
import { adoptSecretCheck } from '../../src/storage/server-secret-check.js';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/database.js';

/**
 * Issue #36 §4: a second instance started without GATEHOUSE_SECRET made a secret of its own and
 * went on sealing and deriving with it. The database now records a check value of its secret
 * (never the secret); an instance, or a CLI run, whose secrets do not produce it refuses to start
 * with a message naming GATEHOUSE_SECRET. Runs on SQLite and, with TEST_DATABASE_URL, on
 * PostgreSQL, where the second instance has its own connection pool as another process would.
 */
const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const C = 'c'.repeat(32);

describe('issue #36 §4: every instance of one database has its server secret', () => {
  let database: TestDatabase;
  let dir: string;
  const extraHandles: DatabaseHandle[] = [];

  beforeEach(async () => {
    database = await createTestDatabase();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-check-'));
  });
  afterEach(async () => {
    for (const handle of extraHandles.splice(0)) await handle.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another instance's way in: on PostgreSQL a pool of its own on the same schema. */
  const instanceHandle = (): DatabaseHandle => {
    if (!TEST_DATABASE_URL) return database.handle;
    const handle = connectDatabase(TEST_DATABASE_URL, { schema: database.schema as string, poolSize: 2 });
    extraHandles.push(handle);
    return handle;
  };

  /** Starts an instance with `env` on the shared database and stops it again; rejects as createServices does. */
  const start = async (env: Record<string, string>) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', GATEHOUSE_SECRET_FILE: join(dir, 'default.secret'), ...env });
    const services = await createServices(config, {
      database: instanceHandle(),
      clock: new ManualClock(),
      logger: pino({ level: 'silent' }),
      buckets: new MemoryBucketStore(),
      workerId: 1,
      maintenance: false,
    });
    await services.close();
    return services.secrets;
  };

  it('the first instance records a check of its secret, and the database never holds the secret itself', async () => {
    await start({ GATEHOUSE_SECRET: A });
    const rows = await database.handle.db.selectFrom('server_secret_check').selectAll().execute();
    expect(rows.map((r) => r.check_value)).toEqual([secretCheck(A)]);
    expect(rows.flatMap((r) => Object.values(r).map(String)).join(' ')).not.toContain(A);
  });

  it('a second instance with the same GATEHOUSE_SECRET starts', async () => {
    await start({ GATEHOUSE_SECRET: A });
    await expect(start({ GATEHOUSE_SECRET: A })).resolves.toEqual([A]);
  });

  it('a second instance with another GATEHOUSE_SECRET refuses to start, naming GATEHOUSE_SECRET', async () => {
    await start({ GATEHOUSE_SECRET: A });
    const refused = start({ GATEHOUSE_SECRET: B });
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow(/GATEHOUSE_SECRET does not hold the server secret this database is used with/);
    // Refusing changed nothing: the first secret is still the database's.
    await expect(start({ GATEHOUSE_SECRET: A })).resolves.toEqual([A]);
  });

  it('a second instance without GATEHOUSE_SECRET, whose secret file holds its own secret, refuses to start and says where its secret came from', async () => {
    await start({ GATEHOUSE_SECRET_FILE: join(dir, 'first.secret') });
    const file = join(dir, 'second.secret');
    await expect(start({ GATEHOUSE_SECRET_FILE: file })).rejects.toThrow(new RegExp(`GATEHOUSE_SECRET is unset, and the secret in ${file} is not the server secret`));
    // The first instance's file still opens the database (SQLite's single-file default).
    await expect(start({ GATEHOUSE_SECRET_FILE: join(dir, 'first.secret') })).resolves.toHaveLength(1);
  });

  it('rotation: "new,old" is accepted and makes the new secret the database\'s; then "old" alone is refused and "new" alone is accepted', async () => {
    await start({ GATEHOUSE_SECRET: A });
    await expect(start({ GATEHOUSE_SECRET: `${B},${A}` })).resolves.toEqual([B, A]);
    // Values sealed from now on use B, which an instance holding only A cannot open.
    await expect(start({ GATEHOUSE_SECRET: A })).rejects.toThrow(/GATEHOUSE_SECRET/);
    await expect(start({ GATEHOUSE_SECRET: B })).resolves.toEqual([B]);
    // A new secret listed after the current one (announced before it is used) changes nothing.
    await expect(start({ GATEHOUSE_SECRET: `${B},${C}` })).resolves.toEqual([B, C]);
    await expect(start({ GATEHOUSE_SECRET: B })).resolves.toEqual([B]);
  });

  it('gatehouse secret adopt (the old secret is lost): the database takes the new one', async () => {
    await start({ GATEHOUSE_SECRET: A });
    await adoptSecretCheck(database.handle.db, secretCheck(B), 0);
    await expect(start({ GATEHOUSE_SECRET: B })).resolves.toEqual([B]);
    await expect(start({ GATEHOUSE_SECRET: A })).rejects.toThrow(/GATEHOUSE_SECRET/);
  });

  it('two instances with different secrets starting at the same moment: exactly one starts', async () => {
    const results = await Promise.allSettled([start({ GATEHOUSE_SECRET: A }), start({ GATEHOUSE_SECRET: B })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const [rejected] = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected?.reason).toBeInstanceOf(ConfigError);
  });
});

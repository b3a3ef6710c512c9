import pino, { type Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/app-type.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { ManualClock } from '../../src/core/clock.js';
import type { BucketStore } from '../../src/rate-limit/bucket.js';
import { createServices, type Services } from '../../src/services.js';
import { randomBytes } from 'node:crypto';
import { MemoryBucketStore } from '../../src/rate-limit/memory-store.js';
import { RedisBucketStore, ResilientBucketStore } from '../../src/rate-limit/redis-store.js';
import { connectRedis, waitUntilReady } from '../../src/storage/redis.js';
import { connectDatabase } from '../../src/storage/connect.js';
import { createTestDatabase, TEST_DATABASE_URL, TEST_REDIS_URL, type TestDatabase } from './database.js';
import { loggerOptions } from '../../src/http/logging.js';
import { captureTarget, RecordingRandom } from './secret-recorder.js';

export interface TestApp {
  app: App;
  services: Services;
  clock: ManualClock;
  config: Config;
  database: TestDatabase;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: ManualClock;
  /** The app-event worker's longest sleep between rounds (60 s here unless set; the service's is APP_EVENT_FALLBACK_POLL_MS). */
  appEventPollMs?: number;
  buckets?: BucketStore;
  /** Defaults to a silent logger; logging tests pass one that writes to a captured stream. */
  logger?: Logger;
  /**
   * PostgreSQL: a second instance on the first one's database (its own pool, listeners and
   * Redis connections), as several processes share one (test/reliability/bearer-coherence.test.ts).
   */
  sameDatabaseAs?: TestApp;
  /** Makes /readyz report Redis (test/http/operations.test.ts). */
  redisReachable?: () => Promise<boolean>;
}

/**
 * A fully wired app on its own database with a manual clock; requests go through app.inject().
 * Password hashing is cheap here (2^10) because tests create many accounts; the production
 * default is in core/password.ts.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = {
    // Every page agent signs up from 127.0.0.1: the sign-up limit is tested where it is set.
    ...loadConfig({ GATEHOUSE_BASE_URL: 'http://localhost:8080', LOG_LEVEL: 'silent', GATEHOUSE_SIGN_UPS_PER_HOUR: '0', ...options.env }),
    passwordCost: { log2N: 10, r: 8, p: 1 },
  };
  const clock = options.clock ?? new ManualClock();
  const database = options.sameDatabaseAs ? anotherHandle(options.sameDatabaseAs.database) : await createTestDatabase();
  // Issue #7 §6: with GATEHOUSE_TEST_LOG_DIR set, every app logs at debug level with the
  // production redaction to a file of its own, and records every secret it issues beside it;
  // test/support/secret-recorder.ts then searches the logs for those secrets.
  const capture = options.logger ? undefined : captureTarget();
  const services = await createServices(config, {
    clock,
    database: database.handle,
    logger: options.logger ?? (capture ? pino(loggerOptions('debug'), pino.destination({ dest: capture.log, sync: true })) : pino({ level: 'silent' })),
    buckets: options.buckets ?? (await testBucketStore()),
    ...(options.redisReachable ? { redisReachable: options.redisReachable } : {}),
    ...(capture ? { random: new RecordingRandom(undefined, capture.secrets) } : {}),
  });
  // The app-event worker's start-up round and its idle sleep's end are statements of their own:
  // tests that count a request's statements must not see them land in their window on a busy
  // machine. New events are still sent at once (the worker hears their change).
  const app = await buildApp(services, { appEventPollMs: options.appEventPollMs ?? 60_000, appEventFirstRoundMs: 60_000 });
  return {
    app,
    services,
    clock,
    config,
    database,
    async close() {
      await app.close();
      await services.close();
      await database.drop();
    },
  };
}

/** A handle of its own on a PostgreSQL test database; closing it leaves the database to its owner. */
function anotherHandle(owner: TestDatabase): TestDatabase {
  if (!TEST_DATABASE_URL || !owner.schema) throw new Error('sameDatabaseAs needs TEST_DATABASE_URL (one SQLite in-memory database has one connection)');
  const handle = connectDatabase(TEST_DATABASE_URL, { schema: owner.schema, poolSize: 5 });
  return { handle, url: owner.url, schema: owner.schema, drop: () => handle.close() };
}

/**
 * With TEST_REDIS_URL the app's buckets live in Redis under a prefix of their own, so every
 * throttling and rate-limit test also runs against the Redis store (DESIGN §6).
 */
async function testBucketStore() {
  if (!TEST_REDIS_URL) return new MemoryBucketStore();
  const client = connectRedis(TEST_REDIS_URL);
  if (!(await waitUntilReady(client))) throw new Error(`TEST_REDIS_URL ${TEST_REDIS_URL} did not answer`);
  return new ResilientBucketStore(new RedisBucketStore(client, `gh:test:${randomBytes(6).toString('hex')}:`), new MemoryBucketStore(), pino({ level: 'silent' }));
}

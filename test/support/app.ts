import pino from 'pino';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/app-type.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { ManualClock } from '../../src/core/clock.js';
import type { BucketStore } from '../../src/rate-limit/bucket.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestDatabase, type TestDatabase } from './database.js';

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
  buckets?: BucketStore;
}

/**
 * A fully wired app on its own database with a manual clock; requests go through app.inject().
 * Password hashing is cheap here (2^10) because tests create many accounts; the production
 * default is in core/password.ts.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = {
    ...loadConfig({ GATEHOUSE_BASE_URL: 'http://localhost:8080', LOG_LEVEL: 'silent', ...options.env }),
    passwordCost: { log2N: 10, r: 8, p: 1 },
  };
  const clock = options.clock ?? new ManualClock();
  const database = await createTestDatabase();
  const services = await createServices(config, {
    clock,
    database: database.handle,
    logger: pino({ level: 'silent' }),
    ...(options.buckets ? { buckets: options.buckets } : {}),
  });
  const app = await buildApp(services);
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

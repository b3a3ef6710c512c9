import type { App } from './app-type.js';
import type { Metrics } from './metrics.js';
import type { DatabaseHandle } from '../storage/connect.js';

/** What /readyz says this instance does while Redis is unreachable. */
const REDIS_FALLBACK = 'rate limits on this instance’s memory; live updates reach this instance’s viewers only';

/** What these routes read: the rest of the services object is none of their business (http/ sits below services.ts). */
export interface OperationsDeps {
  database: Pick<DatabaseHandle, 'ping'>;
  metrics: Pick<Metrics, 'render' | 'contentType'>;
  /** With REDIS_URL: whether Redis answers right now. */
  redisReachable?: () => Promise<boolean>;
}

/**
 * /healthz answers while the process runs; /readyz only while the database answers too; /metrics
 * is the Prometheus text exposition (docs/operations.md). None is in the OpenAPI document.
 */
export function registerOperationsRoutes(app: App, services: OperationsDeps): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const [database, redis] = await Promise.all([
      withTimeout(services.database.ping(), 2000).then(
        () => 'ok' as const,
        () => 'unreachable' as const,
      ),
      services.redisReachable ? withTimeout(services.redisReachable(), 2000).catch(() => false) : undefined,
    ]);
    // Issue #7 §4: Redis is reported but does not decide readiness. Without it this instance still
    // serves everything: rate limits on its own memory, live updates to its own viewers only
    // (docs/reliability.md). Taking every instance out of rotation for that would turn a
    // degradation into an outage.
    const body = {
      status: database === 'ok' ? 'ready' : 'unavailable',
      database,
      ...(redis === undefined ? {} : redis ? { redis: 'ok' } : { redis: 'unreachable', degraded: REDIS_FALLBACK }),
    };
    return reply.code(database === 'ok' ? 200 : 503).header('Cache-Control', 'no-store').send(body);
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const body = await services.metrics.render();
    return reply.type(services.metrics.contentType).header('Cache-Control', 'no-store').send(body);
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

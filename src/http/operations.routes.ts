import type { App } from './app-type.js';
import type { Services } from '../services.js';

/**
 * /healthz answers while the process runs; /readyz only while the database answers too; /metrics
 * is the Prometheus text exposition (docs/operations.md). None is in the OpenAPI document.
 */
export function registerOperationsRoutes(app: App, services: Services): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await withTimeout(services.database.ping(), 2000);
      return { status: 'ready', database: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: 'unreachable' });
    }
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

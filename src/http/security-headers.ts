import Fastify from 'fastify';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import type { App } from './app-type.js';

/** Headers every answer has anyway, never taken from the probe. */
const TRANSPORT_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * Helmet's headers (DESIGN §4: strict CSP, frame-ancestors 'none', X-Frame-Options, Referrer-Policy,
 * nosniff, HSTS over https) on every answer, computed once.
 *
 * @fastify/helmet builds helmet's middleware again for every request (parsing the CSP directives
 * each time, in two async hooks): 1–2.5 % of the CPU on the API hot paths (docs/performance.md).
 * The headers depend only on the options, so one request to a throwaway instance with the same
 * options yields exactly the set helmet would send, and one synchronous hook copies it onto each
 * reply, with the request's X-Request-Id. A route that needs another policy (the consent page)
 * still overrides a header itself.
 */
export async function installSecurityHeaders(app: App, options: FastifyHelmetOptions): Promise<void> {
  const probe = Fastify({ logger: false });
  await probe.register(helmet, options);
  probe.get('/', async () => '');
  const answer = await probe.inject({ method: 'GET', url: '/' });
  await probe.close();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (!TRANSPORT_HEADERS.has(name) && typeof value === 'string') headers[name] = value;
  }
  const frozen = Object.freeze(headers);
  // The same synchronous hook echoes the request id (DESIGN §8): one hook instead of an async
  // onSend hook, which cost a promise and a microtask turn per request (docs/performance.md).
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(frozen);
    reply.header('X-Request-Id', request.id);
    done();
  });
}

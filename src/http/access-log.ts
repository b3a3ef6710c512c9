/**
 * What: the request log, one line per answered request (issue #26 §0): request id, method, the
 * matched route with its parameters filled in and every secret one redacted (logging.ts
 * redactRequestUrl), status and response time.
 * Invariant: nothing of a request but those fields is written (no headers, no body, no query);
 * the line costs one object and one pino call, made only when `info` is enabled.
 * Tested: test/http/logging.test.ts.
 */
import type { FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import type { Logger } from 'pino';
import type { App } from './app-type.js';
import { redactRequestUrl, redactUrl } from './logging.js';

/**
 * The line is built here from redacted parts only, so it goes through a child that skips the
 * root logger's redaction paths and `req` serializer (both exist for objects code logs, whose
 * shape is unknown): walking 45 wildcard paths per line was most of the cost of logging at info.
 */
function accessLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: ['__none__'] }, serializers: { req: (value: unknown) => value } });
}

/** Milliseconds with one decimal: enough to read, short to write. */
function milliseconds(elapsed: number): number {
  return Math.round(elapsed * 10) / 10;
}

/**
 * The log level is fixed when the server starts (LOG_LEVEL), so hooks are added only for the
 * lines that level writes: at `warn` no request runs any of them (docs/performance.md §Request
 * hooks), and only `debug` adds a hook to every request's arrival.
 */
export function installAccessLog(app: App, logger: Logger): void {
  if (!logger.isLevelEnabled('info')) return;
  const access = accessLogger(logger);
  const line = (request: FastifyRequest, reply: FastifyReply, url: string) => {
    access.info({ reqId: request.id, req: { method: request.method, url, ip: request.ip }, res: { statusCode: reply.statusCode }, responseTime: milliseconds(reply.elapsedTime) }, 'request completed');
  };
  // Each route logs under the pattern it was registered with, known once here (the same reason
  // as http/metrics.ts: `request.routeOptions` is built anew at every access).
  app.addHook('onRoute', (route) => {
    const pattern = route.url;
    const log: onResponseHookHandler = pattern.includes(':')
      ? (request, reply, done) => {
          line(request, reply, redactRequestUrl(request.url, pattern, request.params));
          done();
        }
      : (request, reply, done) => {
          line(request, reply, redactUrl(request.url));
          done();
        };
    const existing = route.onResponse;
    route.onResponse = existing === undefined ? [log] : [...(Array.isArray(existing) ? existing : [existing]), log];
  });
  // Requests no route matched reach the not-found handler, which has no onRoute.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) line(request, reply, redactUrl(request.url));
    done();
  });
  // At debug, a request is also logged when it arrives, so one that never completes can be seen.
  if (logger.isLevelEnabled('debug')) {
    app.addHook('onRequest', (request, _reply, done) => {
      access.debug({ reqId: request.id, req: { method: request.method, url: redactUrl(request.url) } }, 'incoming request');
      done();
    });
  }
}

/**
 * What: the request log, one line per answered request (issue #26 §0): request id, method, the
 * matched route with its parameters filled in and every secret one redacted (logging.ts
 * routeRedaction), status and response time.
 * Invariant: nothing of a request but those fields is written (no headers, no body, no query);
 * the line is one string written to pino's destination, made only when `info` is enabled.
 * Tested: test/http/logging.test.ts.
 */
import type { FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import pino, { type Logger } from 'pino';
import type { App } from './app-type.js';
import { redactUrl, routeRedaction } from './logging.js';

/** Milliseconds with one decimal: enough to read, short to write. */
function milliseconds(elapsed: number): number {
  return Math.round(elapsed * 10) / 10;
}

/**
 * Writes the line as the JSON pino itself writes for `logger.info({ reqId, req: { method, url,
 * ip }, res: { statusCode }, responseTime }, 'request completed')` — the level, the time, the
 * logger's bindings (pid, hostname), the fields, the message, in pino's order — straight to the
 * logger's destination (pino.symbols: the stream and the serialised bindings every pino logger
 * keeps). The line's shape is fixed and every part of it was redacted before it got here, so
 * pino's general path (walking the object's keys, its serialisers and its 45 redaction paths,
 * stringifying each nested object) is not needed, and it cost more than the rest of a webhook
 * execute's logging (docs/performance.md §Logging). Every string is escaped by JSON.stringify:
 * a request id may come from the client's X-Request-Id.
 */
function accessLine(logger: Logger): (request: FastifyRequest, reply: FastifyReply, quotedUrl: string) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as { write(line: string): unknown };
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const level = `{"level":${logger.levels.values['info'] ?? 30},"time":`;
  // The method needs no escaping: node's parser accepts only the token characters of RFC 9110 §9.1.
  return (request, reply, quotedUrl) => {
    stream.write(
      `${level}${Date.now()}${bindings},"reqId":${JSON.stringify(request.id)},"req":{"method":"${request.method}","url":${quotedUrl},"ip":${JSON.stringify(request.ip)}},"res":{"statusCode":${reply.statusCode}},"responseTime":${milliseconds(reply.elapsedTime)},"msg":"request completed"}\n`,
    );
  };
}

/**
 * The log level is fixed when the server starts (LOG_LEVEL), so hooks are added only for the
 * lines that level writes: at `warn` no request runs any of them (docs/performance.md §Request
 * hooks), and only `debug` adds a hook to every request's arrival.
 */
export function installAccessLog(app: App, logger: Logger): void {
  if (!logger.isLevelEnabled('info')) return;
  const line = accessLine(logger);
  // Each route logs under the pattern it was registered with, known once here (the same reason
  // as http/metrics.ts: `request.routeOptions` is built anew at every access).
  app.addHook('onRoute', (route) => {
    const pattern = route.url;
    let log: onResponseHookHandler;
    if (pattern.includes(':')) {
      const redact = routeRedaction(pattern);
      log = (request, reply, done) => {
        line(request, reply, JSON.stringify(redact(request.url, request.params)));
        done();
      };
    } else if (pattern.includes('*')) {
      log = (request, reply, done) => {
        line(request, reply, JSON.stringify(redactUrl(request.url)));
        done();
      };
    } else {
      // A static route matches only its own path (the router compares the decoded path, case and
      // trailing slash included), so redactUrl of any URL it matched is redactUrl of the pattern,
      // with `?[REDACTED]` when there was a query: both written once here instead of per request
      // (docs/performance.md §Logging).
      const plain = JSON.stringify(redactUrl(pattern));
      const withQuery = JSON.stringify(redactUrl(`${pattern}?`));
      log = (request, reply, done) => {
        line(request, reply, request.url.includes('?') ? withQuery : plain);
        done();
      };
    }
    const existing = route.onResponse;
    route.onResponse = existing === undefined ? [log] : [...(Array.isArray(existing) ? existing : [existing]), log];
  });
  // Requests no route matched reach the not-found handler, which has no onRoute.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) line(request, reply, JSON.stringify(redactUrl(request.url)));
    done();
  });
  // At debug, a request is also logged when it arrives, so one that never completes can be seen.
  if (logger.isLevelEnabled('debug')) {
    app.addHook('onRequest', (request, _reply, done) => {
      logger.debug({ reqId: request.id, req: { method: request.method, url: redactUrl(request.url) } }, 'incoming request');
      done();
    });
  }
}

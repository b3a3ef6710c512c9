/**
 * Discord's HTTP wire details that client libraries depend on (DESIGN §1): exactly
 * `application/json` on JSON answers, and `%40me` read as `@me`; both synchronous, on every answer.
 * Invariant: the body and status are untouched; only the header and the path segment change.
 * Tested by test/http/discord-wire.test.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { App } from './app-type.js';

/**
 * Two details of Discord's HTTP wire that client libraries depend on (DESIGN §1).
 */

const JSON_WITH_CHARSET = 'application/json; charset=utf-8';
const JSON_EXACT = 'application/json';

/**
 * DESIGN §1: JSON answers carry exactly `Content-Type: application/json`, Discord's header.
 * discord.py parses a body only when the type is exactly that, so Fastify's `; charset=utf-8`
 * (added during send, after any route could set the type) is taken off here; the body stays
 * UTF-8 (RFC 8259 §8.1: JSON is UTF-8 and has no charset parameter). A synchronous hook with one
 * string comparison: no promise, no allocation on the webhook hot path (DESIGN §5).
 */
export function installExactJsonContentType(app: App): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.getHeader('content-type') === JSON_WITH_CHARSET) reply.header('content-type', JSON_EXACT);
    done(null, payload);
  });
}

// A path segment `%40me` (any case of the hex digits), up to the query.
const ENCODED_AT_ME = /\/%40me(?=\/|\?|$)/gi;

/**
 * DESIGN §1: percent-encoded path arguments are accepted wherever the plain ones are.
 * discord-api-types percent-encodes route arguments, so @discordjs/core asks for
 * `/users/%40me`; Fastify's router matches static segments undecoded. Rewriting the one encoded
 * argument that appears in static segments (`@me`) to its plain form makes every `@me` route
 * answer both spellings. Only URLs that contain `%40` pay for the regular expression.
 */
export function rewriteEncodedAtMe(request: IncomingMessage): string {
  const url = request.url ?? '/';
  if (url.indexOf('%40') === -1) return url;
  const query = url.indexOf('?');
  if (query === -1) return url.replace(ENCODED_AT_ME, '/@me');
  return url.slice(0, query).replace(ENCODED_AT_ME, '/@me') + url.slice(query);
}

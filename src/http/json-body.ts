/**
 * The JSON body parser of every route (issue #7 §5, issue #21 §1): UTF-8 only, depth checked by a
 * linear scan before parsing, then Fastify's own parser with its prototype-poisoning protection.
 * Invariant: a body that is not valid UTF-8 JSON, or nests deeper than JSON_DEPTH_MAX, is a 400
 * before any handler reads it. Tested by test/http/errors.test.ts and
 * test/http/adversarial-inputs.test.ts.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyError } from 'fastify';
import type { App } from './app-type.js';
import { JSON_DEPTH_MAX, jsonNestsDeeperThan } from './body-limits.js';

/**
 * JSON bodies must be UTF-8 (RFC 8259 §8.1). Fastify's own parser decodes bytes leniently, so a
 * body with invalid UTF-8 would be accepted with U+FFFD where the bad bytes were and stored that
 * way; this parser refuses it as invalid JSON (400, code 50109) before anything reads it, then
 * hands the text to Fastify's default parser, which keeps its prototype-poisoning protection
 * (issue #7 §5, found by test/reliability/fuzz.test.ts). The body limit applies as before.
 * JSON nested deeper than JSON_DEPTH_MAX is refused the same way after one linear scan, before
 * JSON.parse and the prototype-poisoning walk build it (issue #21 §1).
 */
export function installStrictJsonParser(app: App): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    const problem = !isUtf8(bytes)
      ? 'The request body is not valid UTF-8'
      : jsonNestsDeeperThan(bytes, JSON_DEPTH_MAX)
        ? `The request body nests deeper than ${JSON_DEPTH_MAX} levels`
        : undefined;
    if (problem !== undefined) {
      const error = new SyntaxError(problem) as SyntaxError & Pick<FastifyError, 'statusCode' | 'code'>;
      error.statusCode = 400;
      error.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(error, undefined);
      return;
    }
    parseJson(request, bytes.toString('utf8'), done);
  });
}

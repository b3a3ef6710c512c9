import type { FastifyError, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { App } from '../../http/app-type.js';
import { ApiError, OAuthError, RateLimitedError } from '../../core/errors.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../http/error-handler.js';
import { isDatabaseUnavailable } from '../../storage/unavailable.js';
import { BodyRefused, FORM_FIELDS_MAX, parseForm } from '../../http/body-limits.js';

/**
 * What every form-only OAuth endpoint shares (the token and revocation endpoints, and any a new
 * grant brings, e.g. device authorization; issue #37 §3): bodies read as form-urlencoded only,
 * repeated protocol parameters refused, parameters read as strings, errors answered in RFC 6749
 * §5.2 terms and answers never cached. An endpoint's scope calls acceptFormBodiesOnly once; its
 * routes use formOnly, readParams and noStore.
 */

/** Marks a body in any media type other than form-urlencoded, so the route can answer in OAuth terms. */
const NOT_A_FORM = Symbol('not a form');
type FormBody = Record<string, string | string[]> | typeof NOT_A_FORM | undefined;

/**
 * Refuses what RFC 6749 §3.2 forbids before schema validation runs: a body that is not
 * form-urlencoded (SPEC §4 note; OAUTH-CHECKLIST D2) and a protocol parameter sent twice (§3.2).
 */
export function formOnly(parameters: readonly string[]): preValidationAsyncHookHandler {
  return async function formOnly(request) {
    const body = request.body as FormBody;
    if (body === undefined || body === NOT_A_FORM) throw new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded');
    for (const name of parameters) {
      if (Array.isArray(body[name])) throw new OAuthError('invalid_request', `${name} must not be repeated`);
    }
  };
}

/** The protocol parameters as strings; an empty value counts as absent (RFC 6749 §3.2, D12). */
export function readParams(body: unknown, parameters: readonly string[]): Record<string, string | undefined> {
  const form = body as Record<string, unknown>;
  const params: Record<string, string | undefined> = {};
  for (const name of parameters) {
    const value = form[name];
    params[name] = typeof value === 'string' && value !== '' ? value : undefined;
  }
  return params;
}

/** RFC 6749 §5.1: token responses are never cached. */
export function noStore(reply: FastifyReply): FastifyReply {
  // Lower-case names: every token answer sets these (src/http/security-headers.ts says why).
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/**
 * Anything that goes wrong on these endpoints is answered as an RFC 6749 §5.2 error (E3):
 * Fastify's own 4xx (body too large, bad encoding) become invalid_request, unexpected errors
 * server_error. Rethrowing hands the error to the one error handler, which renders it.
 */
export function asOAuthError(raw: unknown, request: FastifyRequest): OAuthError {
  if (raw instanceof OAuthError) return raw;
  if (raw instanceof RateLimitedError) {
    const seconds = Math.max(1, Math.ceil(raw.retryAfterMs / 1000));
    return new OAuthError('temporarily_unavailable', raw.message, 429, { 'Retry-After': String(seconds) });
  }
  const status = raw instanceof ApiError ? raw.status : (raw as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (raw instanceof BodyRefused) return new OAuthError('invalid_request', `the request has more than ${FORM_FIELDS_MAX} parameters`, 400);
    const description = status === 413 ? 'the request body is too large' : 'the request is malformed';
    return new OAuthError('invalid_request', description, status === 413 ? 413 : 400);
  }
  if (isDatabaseUnavailable(raw)) {
    // Issue #7 §4: the database is down, not the request wrong — a retryable 503, never a 500.
    request.log.warn({ code: (raw as { code?: unknown }).code }, 'database unavailable at the token endpoint');
    return new OAuthError('temporarily_unavailable', 'the service cannot reach its database; try again shortly', 503, {
      'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
    });
  }
  request.log.error({ err: raw }, 'unhandled error at the token endpoint');
  return new OAuthError('server_error', 'the server could not complete the request; try again', 500);
}

/**
 * SPEC §4 note: form-urlencoded only. Every other media type is read (within the body limit) and
 * marked, so the answer is an OAuth invalid_request rather than a 415. Issue #21 §1: a few KiB and
 * a bounded field count, parsed in linear time (a repeated parameter keeps its values for formOnly
 * to refuse), before any client authentication. Every error in `scope` becomes an OAuth error.
 */
export function acceptFormBodiesOnly(scope: App, bodyLimit: number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    done(null, parseForm(body as string));
  });
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, _body, done) => done(null, NOT_A_FORM));
  scope.setErrorHandler((error, request) => {
    throw asOAuthError(error, request);
  });
}

/**
 * The one error handler (DESIGN §2): every thrown error becomes a JSON API error, an RFC 6749
 * error body or an HTML page; `sendRateLimited` also answers the webhook gate's 429s directly.
 * Invariant: one renderer per kind of answer, so an error looks the same whichever path sent it;
 * an unknown error is logged and answered with a generic 500 carrying no stack and no inner message.
 * Tested by test/http/errors.test.ts and test/reliability/fuzz.test.ts (every route, no 5xx).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './app-type.js';
import { addFieldError, ApiError, ApiErrors, OAuthError, PageError, RateLimitedError, type ErrorTree } from '../core/errors.js';
import { errorPage } from '../web/layout.js';
import { csrfToken } from '../web/csrf.js';
import { pageErrorFor } from './page-errors.js';
import { isDatabaseUnavailable } from '../storage/unavailable.js';

/**
 * Seconds a client is asked to wait while the database is unreachable (issue #7 §4): the pool
 * reconnects on the first request after it returns, so a short wait is enough.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The Via header of a 429 (RFC 9110 §7.6.3: the protocol and the name of the answering server). */
export const RATE_LIMIT_VIA = '1.1 gatehouse';

/**
 * The one error handler (DESIGN §2): every thrown error becomes a JSON API error, an RFC 6749
 * error body, or an HTML page, and nothing else. Unknown errors are logged and answered with a
 * generic 500 that carries no stack and no message from inside.
 */
export function isApiRequest(request: FastifyRequest): boolean {
  const url = request.url;
  return url.startsWith('/api/') || url === '/api' || url.startsWith('/.well-known/');
}

/** Discord's error codes for the JSON Schema keywords our route schemas use. */
function fieldErrorCode(keyword: string): string {
  switch (keyword) {
    case 'required':
      return 'BASE_TYPE_REQUIRED';
    case 'maxLength':
    case 'maxItems':
      return 'BASE_TYPE_MAX_LENGTH';
    case 'minLength':
    case 'minItems':
      return 'BASE_TYPE_MIN_LENGTH';
    case 'enum':
    case 'const':
    case 'anyOf':
      return 'BASE_TYPE_CHOICES';
    case 'type':
      return 'BASE_TYPE_BAD_TYPE';
    case 'minimum':
    case 'maximum':
      return 'NUMBER_TYPE_MAX';
    default:
      return 'BASE_TYPE_INVALID';
  }
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns AJV's flat list into Discord's body-shaped tree (DESIGN §1, 50035). */
export function validationTree(issues: readonly ValidationIssue[]): ErrorTree {
  const tree: ErrorTree = {};
  for (const issue of issues) {
    const path = issue.instancePath.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (issue.keyword === 'required' && typeof issue.params['missingProperty'] === 'string') path.push(issue.params['missingProperty']);
    const message = issue.keyword === 'required' ? 'This field is required' : issue.message ? capitalise(issue.message) : 'Invalid value';
    addFieldError(tree, path.length ? path : ['_root'], { code: fieldErrorCode(issue.keyword), message });
  }
  return tree;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const body: { code: number; message: string; errors?: ErrorTree } = { code: error.code, message: error.message };
  if (error.errors) body.errors = error.errors;
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

function sendPage(request: FastifyRequest, reply: FastifyReply, status: number, title: string, detail: string, serviceName: string): FastifyReply {
  const key = request.csrfKey;
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(errorPage({ status, title, detail, serviceName, viewer: request.viewer, csrfToken: key ? csrfToken(key) : '' }));
}

/** A wait in the largest unit that reads well on a page ("45 seconds", "15 minutes", "24 hours"), rounded up. */
function waitWords(seconds: number): string {
  const [n, unit] = seconds < 60 ? [seconds, 'second'] : seconds < 3600 ? [Math.ceil(seconds / 60), 'minute'] : [Math.ceil(seconds / 3600), 'hour'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** Retry-After is in whole seconds, rounded up, and never 0 (RFC 9110 §10.2.3). */
function retryAfterSeconds(error: RateLimitedError): number {
  return Math.max(1, Math.ceil(error.retryAfterMs / 1000));
}

/**
 * The JSON 429 of the API (DESIGN §1, Discord's shape): Retry-After and
 * {message, retry_after, global, code: 0}. Also called directly by the webhook gate, the
 * service's most frequent refusal, which answers without throwing through Fastify's error path
 * (docs/performance.md §Rate limits and the 429 path); the rendering stays here, in one place.
 */
export function sendRateLimited(reply: FastifyReply, error: RateLimitedError): FastifyReply {
  reply.header('retry-after', String(retryAfterSeconds(error))); // lower case: see security-headers.ts
  // DESIGN §1: Discord's 429s come through a proxy that adds Via, and discord.py waits a 429 out
  // only when Via is present (one without is taken for a proxy's ban and raised at once).
  reply.header('via', RATE_LIMIT_VIA);
  return reply.code(429).send({ message: error.message, retry_after: error.retryAfterMs / 1000, global: error.global, code: 0 });
}

/** Renders any thrown error as the request's format asks (the body of the one error handler). */
function renderError(raw: unknown, request: FastifyRequest, reply: FastifyReply, serviceName: string): FastifyReply {
  if (raw instanceof OAuthError) {
    // RFC 6749 §5.1/§5.2: no-store on every token endpoint answer, errors included.
    reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    if (raw.headers) reply.headers(raw.headers);
    return reply.code(raw.status).type('application/json; charset=utf-8').send({ error: raw.error, error_description: raw.description });
  }
  if (raw instanceof PageError) return sendPage(request, reply, raw.status, raw.title, raw.detail, serviceName);
  if (raw instanceof RateLimitedError) {
    if (isApiRequest(request)) return sendRateLimited(reply, raw);
    const seconds = retryAfterSeconds(raw);
    reply.header('Retry-After', String(seconds));
    return sendPage(request, reply, 429, 'Too many attempts', `${raw.message} Try again in ${waitWords(seconds)}.`, serviceName);
  }
  if (raw instanceof ApiError) {
    if (isApiRequest(request)) return sendApiError(reply, raw);
    const words = pageErrorFor(raw);
    return sendPage(request, reply, raw.status, words.title, words.detail, serviceName);
  }

  const error = raw as FastifyError & { validation?: ValidationIssue[] };
  if (error.validation) {
    if (isApiRequest(request)) return sendApiError(reply, ApiErrors.invalidFormBody(validationTree(error.validation)));
    return sendPage(request, reply, 400, 'That did not work', 'The form contained invalid values. Go back and check them.', serviceName);
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Fastify's own 4xx (bad JSON, body too large, unsupported media type…): its message is
    // safe to show, its stack is not.
    const message =
      status === 413
        ? 'Request entity too large'
        : status === 414
          ? '414: URI Too Long'
          : status === 415
          ? 'Unsupported Media Type'
          : error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError || /JSON/i.test(error.message)
            ? 'The request body contains invalid JSON.'
            : `${status}: Bad Request`;
    const code = status === 413 ? 40005 : message.includes('invalid JSON') ? 50109 : 0;
    if (isApiRequest(request)) return sendApiError(reply, new ApiError(status, code, message));
    return sendPage(request, reply, status, 'Bad request', message, serviceName);
  }
  if (isDatabaseUnavailable(error)) {
    // Issue #7 §4: an outage is not a bug — 503 with Retry-After, no stack, logged without one.
    request.log.warn({ code: error.code, reason: error.message }, 'database unavailable');
    reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    if (isApiRequest(request)) return sendApiError(reply, ApiErrors.serviceUnavailable());
    return sendPage(request, reply, 503, 'Temporarily unavailable', 'The service cannot reach its database right now. Try again in a few seconds.', serviceName);
  }
  request.log.error({ err: error }, 'unhandled error');
  if (isApiRequest(request)) return sendApiError(reply, new ApiError(500, 0, '500: Internal Server Error'));
  return sendPage(request, reply, 500, 'Something went wrong', 'The server could not finish this request. Try again in a moment.', serviceName);
}

/**
 * `identifyViewer` (accounts/page-context.hook.ts viewerIdentifier) lets the 404 page show who is
 * signed in: unknown URLs never pass through the pages context that would have said.
 */
export function installErrorHandling(app: App, serviceName: string, identifyViewer?: (request: FastifyRequest) => Promise<void>): void {
  app.setErrorHandler((raw: unknown, request, reply) => renderError(raw, request, reply, serviceName));

  app.setNotFoundHandler(async (request, reply) => {
    if (isApiRequest(request)) return sendApiError(reply, ApiErrors.notFound());
    // A lookup that fails (database down) leaves the page signed out rather than failing it.
    if (identifyViewer) await identifyViewer(request).catch(() => undefined);
    return sendPage(request, reply, 404, 'Page not found', 'There is nothing at this address.', serviceName);
  });
}

/**
 * Fastify's `frameworkErrors` option: a URL the router cannot decode (bad percent-encoding,
 * FST_ERR_BAD_URL → 400) or a path parameter over `maxParamLength` (→ 414) is refused before
 * routing, and Fastify would answer in a JSON shape of its own naming its error codes. Its
 * default error handler, not ours, is in force there, so the error is rendered here directly,
 * like any other 4xx (issue #7 §5, found by test/reliability/fuzz.test.ts).
 */
export function frameworkErrorRenderer(serviceName: string): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    // No onRequest hook ran for this request: echo its id here (DESIGN §8).
    reply.header('X-Request-Id', request.id);
    void renderError(error, request, reply, serviceName);
  };
}

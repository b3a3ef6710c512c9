/**
 * Typed errors, rendered in exactly one place (http/error-handler.ts) as JSON, an OAuth error
 * body, or an HTML page (DESIGN §9.7). Domain code throws these and never builds responses.
 */

/** One validation failure at a field, in Discord's Invalid Form Body shape. */
export interface FieldError {
  code: string;
  message: string;
}

/** Mirrors the request body: `{content: {_errors: [...]}, embeds: {0: {title: {_errors: [...]}}}}`. */
export interface ErrorTree {
  [key: string]: ErrorTree | FieldError[];
}

/**
 * Adds one error at a path (['embeds', 0, 'title']) to a tree. Path keys come from request
 * bodies, so only own properties are followed and each is defined as an own property: a key named
 * `__proto__` or `constructor` becomes a field of the tree, never a way into Object.prototype.
 */
export function addFieldError(tree: ErrorTree, path: readonly (string | number)[], error: FieldError): ErrorTree {
  let node: ErrorTree = tree;
  for (const key of path) {
    const k = String(key);
    const next = Object.hasOwn(node, k) ? node[k] : undefined;
    if (next === undefined || Array.isArray(next)) {
      const created: ErrorTree = {};
      Object.defineProperty(node, k, { value: created, enumerable: true, writable: true, configurable: true });
      node = created;
    } else {
      node = next;
    }
  }
  const list = Object.hasOwn(node, '_errors') ? node['_errors'] : undefined;
  if (Array.isArray(list)) list.push(error);
  else Object.defineProperty(node, '_errors', { value: [error], enumerable: true, writable: true, configurable: true });
  return tree;
}

/**
 * The base of every error that is an expected answer (a 4xx, a 429, an OAuth error, an error
 * page): rendered by the one handler, never logged with a stack, and thrown thousands of times a
 * second under abuse, so none captures one — capturing it cost a tenth of the CPU of a 401 or a
 * 429 (docs/performance.md §Request hooks). Errors nobody expected (bugs) are plain Errors and keep their stacks.
 */
export class ExpectedError extends Error {
  constructor(message: string) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** An error of the resource API: `{code, message, errors?}` with Discord's numeric codes (DESIGN §1). */
export class ApiError extends ExpectedError {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: ErrorTree,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Discord's codes, with SPEC.md's names. One constructor per code so call sites read like the spec. */
/**
 * An API error about who acts or what they act on (not a member, no permission, no such member),
 * not about what a form says: a page shows it as an error page rather than beside the form
 * (web/components.ts `refused`). On the API it is an ApiError like any other.
 */
export class AccessError extends ApiError {
  override readonly name = 'AccessError';
}

export const ApiErrors = {
  unauthorized: () => new ApiError(401, 0, '401: Unauthorized'),
  notFound: (what = 'Not Found') => new ApiError(404, 0, `404: ${what}`),
  methodNotAllowed: () => new ApiError(405, 0, '405: Method Not Allowed'),
  unknownChannel: () => new ApiError(404, 10003, 'Unknown Channel'),
  unknownServer: () => new ApiError(404, 10004, 'Unknown Server'),
  unknownMember: () => new ApiError(404, 10007, 'Unknown Member'),
  unknownMessage: () => new ApiError(404, 10008, 'Unknown Message'),
  unknownRole: () => new ApiError(404, 10011, 'Unknown Role'),
  unknownUser: () => new ApiError(404, 10013, 'Unknown User'),
  unknownWebhook: () => new ApiError(404, 10015, 'Unknown Webhook'),
  unknownApplication: () => new ApiError(404, 10002, 'Unknown Application'),
  tooManyWebhooks: () => new ApiError(400, 30007, 'Maximum number of webhooks reached (10)'),
  missingAccess: () => new ApiError(403, 50001, 'Missing Access'),
  emptyMessage: () => new ApiError(400, 50006, 'Cannot send an empty message'),
  cannotMessageUser: () => new ApiError(403, 50007, 'Cannot send messages to this user'),
  missingPermissions: () => new ApiError(403, 50013, 'Missing Permissions'),
  invalidOAuthToken: () => new ApiError(401, 50025, 'Invalid OAuth2 access token'),
  missingScope: (scope: string) => new ApiError(403, 50026, `Missing required OAuth2 scope: ${scope}`),
  invalidWebhookToken: () => new ApiError(401, 50027, 'Invalid Webhook Token'),
  invalidFormBody: (errors: ErrorTree) => new ApiError(400, 50035, 'Invalid Form Body', errors),
  payloadTooLarge: () => new ApiError(413, 40005, 'Request entity too large'),
  unsupportedMediaType: () => new ApiError(415, 0, 'Unsupported Media Type'),
  serviceUnavailable: (message = 'Service temporarily unavailable') => new ApiError(503, 0, message),
} as const;

/** Shorthand for a 50035 with one field error. */
export function invalidField(path: readonly (string | number)[], code: string, message: string): ApiError {
  return ApiErrors.invalidFormBody(addFieldError({}, path, { code, message }));
}

/**
 * An OAuth 2.0 protocol error for the token and revoke endpoints, rendered as RFC 6749 §5.2
 * `{error, error_description}` with `Cache-Control: no-store`.
 */
export class OAuthError extends ExpectedError {
  constructor(
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'invalid_grant'
      | 'unauthorized_client'
      | 'unsupported_grant_type'
      | 'invalid_scope'
      | 'unsupported_token_type'
      | 'invalid_target'
      // RFC 7591 §3.2.2 (registration) and RFC 6750 §3.1 (a registration access token, RFC 7592).
      | 'invalid_redirect_uri'
      | 'invalid_client_metadata'
      | 'invalid_token'
      // RFC 8628 §3.5: the device access token response's errors.
      | 'authorization_pending'
      | 'slow_down'
      | 'access_denied'
      | 'expired_token'
      | 'temporarily_unavailable'
      | 'server_error',
    readonly description: string,
    readonly status: number = error === 'invalid_client' ? 401 : 400,
    readonly headers?: Record<string, string>,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/** An error shown to a person as an HTML page (e.g. RFC 6749 §4.1.2.1: unknown client, never a redirect). */
export class PageError extends ExpectedError {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'PageError';
  }
}

/** Too many attempts; carries when to retry. */
export class RateLimitedError extends ExpectedError {
  constructor(
    readonly retryAfterMs: number,
    message = 'You are being rate limited.',
    /** Discord's `global`: the caller's global bucket refused, not one route's (a bot's 50 per second). */
    readonly global = false,
  ) {
    super(message);
    this.name = 'RateLimitedError';
  }
}

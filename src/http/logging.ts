/**
 * Logger options and the per-request logger (DESIGN §4, §8): secrets redacted, and a request's
 * child logger made only when something is logged (docs/performance.md §Logging).
 * Invariant: no secret reaches a log line, and every line goes through the real child with the
 * same bindings (reqId) and the same redaction. Tested by test/http/logging.test.ts.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger, LoggerOptions } from 'pino';
import { SecretPrefix } from '../core/secrets.js';

/**
 * Logs never contain secrets (DESIGN §4): the Authorization and Cookie headers, Set-Cookie, and
 * the token segment of webhook URLs and the code of invite links are redacted; query strings are dropped because OAuth
 * redirects and authorize links carry codes and state. Request logs carry no headers and no
 * bodies at all (see the `req` serializer), so form passwords never reach them; the key paths
 * below catch the same secrets when code logs an object that holds them.
 *
 * The webhook pattern matches any id segment (not only digits) and the unversioned /api/webhooks
 * form Discord clients also use: a mistyped id must not put a valid token in the logs.
 */
export const WEBHOOK_TOKEN_PATH = /^(\/api(?:\/v\d+)?\/webhooks\/[^/?]+\/)[^/?]+/;

/**
 * Invite links carry their code in the path (/invite/<code>), and a code is a secret like any
 * other (stored only as a hash, DESIGN §3): whoever reads the logs must not be able to join.
 */
export const INVITE_CODE_PATH = /^(\/invite\/)[^/?]+/;

/** Issue #40 §2: an interaction's callback URL carries its token (/api/v1/interactions/<id>/<token>/callback). */
const INTERACTION_TOKEN_PATH = /^(\/api(?:\/v\d+)?\/interactions\/[^/?]+\/)[^/?]+/;

/**
 * Object keys whose values are secrets wherever they appear in a logged object (up to two levels
 * down). Not `code`: an error's `err.code` must stay readable; OAuth codes only travel in bodies
 * and query strings, which are never logged.
 */
const SECRET_KEYS = [
  'authorization',
  'cookie',
  'password',
  'currentPassword',
  'newPassword',
  'confirmPassword',
  'client_secret',
  'clientSecret',
  'token',
  'access_token',
  'refresh_token',
  'botToken',
  'bot_token',
  'code_verifier',
  '_csrf',
];

/**
 * Any issued secret, wherever it stands in a path: every secret carries a type prefix precisely so
 * that a leak is recognisable (DESIGN §3), and a client may paste one into the wrong place (a token
 * as a channel id); the position-based rules above cannot know that.
 */
export const ANY_SECRET = new RegExp(`(?:${Object.values(SecretPrefix).join('|')})_[A-Za-z0-9_-]{8,}`, 'g');

/** Route parameters that hold a secret (the webhook token, an invite code). */
const SECRET_PARAMS = new Set(['token', 'code']);

/**
 * The path of a request target: an absolute-form target (`http://host/path`, RFC 9112 §3.2.2)
 * loses its scheme and authority, and percent-escapes are decoded where they form valid UTF-8,
 * so a token written as `tok%65n` is recognised like `token`.
 */
function targetPath(url: string): string {
  const path = (url.split('?', 1)[0] ?? url).replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** A raw request URL with every secret it may hold replaced (the fallback when no route matched). */
export function redactUrl(url: string): string {
  const path = targetPath(url);
  const redacted = path.replace(WEBHOOK_TOKEN_PATH, '$1[REDACTED]').replace(INVITE_CODE_PATH, '$1[REDACTED]').replace(INTERACTION_TOKEN_PATH, '$1[REDACTED]').replace(ANY_SECRET, '[REDACTED]');
  return url.includes('?') ? `${redacted}?[REDACTED]` : redacted;
}

/**
 * The URL a request log shows (issue #21 §5): when a route matched, the route's pattern with
 * each parameter filled in from the parsed parameters, secret ones (SECRET_PARAMS) as
 * [REDACTED], so whatever spelling reached the route (absolute form, percent-escapes) the
 * secret is named by the route, not guessed from the raw text. Otherwise `redactUrl`.
 */
export function redactRequestUrl(url: string, route: string | undefined, params: unknown): string {
  if (route === undefined || !route.includes(':')) return redactUrl(url);
  return routeRedaction(route)(url, params);
}

type RouteRedaction = (url: string, params: unknown) => string;

/**
 * redactRequestUrl for one route pattern, with the pattern split into its literal text and its
 * parameters once (the access log makes one per route when it is registered), so a request only
 * joins the parts: no regular expression runs over the pattern per request.
 */
export function routeRedaction(route: string): RouteRedaction {
  // Alternating: literal, parameter name, literal, … (a capturing split keeps the names).
  const parts = route.split(/:([A-Za-z0-9_]+)/);
  return (url, params) => {
    if (params === null || typeof params !== 'object') return redactUrl(url);
    const values = params as Record<string, unknown>;
    let path = parts[0] as string;
    for (let i = 1; i < parts.length; i += 2) {
      const name = parts[i] as string;
      if (SECRET_PARAMS.has(name)) path += '[REDACTED]';
      else {
        const value = values[name];
        if (typeof value === 'string') path += value.replace(ANY_SECRET, '[REDACTED]');
      }
      path += parts[i + 1] as string;
    }
    return url.includes('?') ? `${path}?[REDACTED]` : path;
  };
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        'res.headers["set-cookie"]',
        'headers["set-cookie"]',
        ...SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      req(request: { id?: string; method?: string; url?: string; ip?: string; params?: unknown; routeOptions?: { url?: string } }) {
        return { id: request.id, method: request.method, url: redactRequestUrl(request.url ?? '', request.routeOptions?.url, request.params), ip: request.ip };
      },
    },
  };
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger, made only when something is logged at an enabled level. Fastify makes a
 * child logger per request, and with the redaction above pino runs its redaction over the child's
 * bindings each time: 2–3 % of the CPU on the hot paths (docs/performance.md §Logging), although at
 * LOG_LEVEL=warn a successful request logs nothing. Each line still goes through the real child,
 * with the same bindings (reqId) and the same redaction.
 */
class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly childBindings: Bindings,
    private readonly childOptions: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.childBindings, this.childOptions);
    return this.#child;
  }

  #log(method: LogMethod, args: unknown[]): void {
    if (this.#child === undefined && !(this.parent as unknown as Logger).isLevelEnabled(method)) return;
    (this.#real()[method] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#log('error', args);
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }

  info(...args: unknown[]): void {
    this.#log('info', args);
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the per-request logger above. */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options);
}

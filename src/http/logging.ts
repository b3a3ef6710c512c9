import type { LoggerOptions } from 'pino';

/**
 * Logs never contain secrets (DESIGN §4): the Authorization and Cookie headers, Set-Cookie, and
 * the token segment of webhook URLs are redacted; query strings are dropped because OAuth
 * redirects and authorize links carry codes and state. Request logs carry no headers and no
 * bodies at all (see the `req` serializer), so form passwords never reach them; the key paths
 * below catch the same secrets when code logs an object that holds them.
 *
 * The webhook pattern matches any id segment (not only digits) and the unversioned /api/webhooks
 * form Discord clients also use: a mistyped id must not put a valid token in the logs.
 */
export const WEBHOOK_TOKEN_PATH = /^(\/api(?:\/v\d+)?\/webhooks\/[^/?]+\/)[^/?]+/;

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
  'code_verifier',
  '_csrf',
];

export function redactUrl(url: string): string {
  const path = url.split('?', 1)[0] ?? url;
  const redacted = path.replace(WEBHOOK_TOKEN_PATH, '$1[REDACTED]');
  return url.length > path.length ? `${redacted}?[REDACTED]` : redacted;
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
      req(request: { id?: string; method?: string; url?: string; ip?: string }) {
        return { id: request.id, method: request.method, url: redactUrl(request.url ?? ''), ip: request.ip };
      },
    },
  };
}

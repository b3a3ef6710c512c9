import type { LoggerOptions } from 'pino';

/**
 * Logs never contain secrets (DESIGN §4): the Authorization and Cookie headers, Set-Cookie, and
 * the token segment of webhook URLs are redacted; query strings are dropped because OAuth
 * redirects and authorize links carry codes and state.
 */
export const WEBHOOK_TOKEN_PATH = /^(\/api\/v\d+\/webhooks\/[0-9]+\/)[^/?]+/;

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
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        'headers.authorization',
        'headers.cookie',
        '*.password',
        '*.client_secret',
        '*.token',
        '*.code',
        '*.refresh_token',
        '*.code_verifier',
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

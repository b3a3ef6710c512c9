import { createHmac } from 'node:crypto';
import { safeEqual } from '../core/secrets.js';

/**
 * CSRF tokens (OAUTH-CHECKLIST A14, issue #2 §5): an HMAC of a fixed label keyed by the session's
 * random id (or, before sign-in, by a random cookie), so a token is bound to one session and is
 * useless to anyone who cannot read that session's cookie. Nothing is stored.
 */
export const CSRF_FIELD = '_csrf';
/** Where a script sends the token when the body cannot carry it first (a streamed multipart upload, issue #42 §2). */
export const CSRF_HEADER = 'x-csrf-token';

export function csrfToken(key: string): string {
  return createHmac('sha256', key).update('gatehouse-csrf-v1').digest('base64url');
}

export function verifyCsrfToken(key: string | undefined, token: unknown): boolean {
  if (!key || typeof token !== 'string' || token.length === 0) return false;
  return safeEqual(csrfToken(key), token);
}

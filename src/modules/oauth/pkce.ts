import { hash } from 'node:crypto';
import { safeEqual } from '../../core/secrets.js';

/**
 * PKCE (RFC 7636) with S256 only (OAUTH-CHECKLIST B3: plain is refused). Shared by the
 * authorization endpoint (challenge) and the token endpoint (verifier).
 */

/** RFC 7636 §4.1/§4.2 ABNF: 43–128 characters of unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~". */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** True for a well-formed code_verifier or code_challenge (OAUTH-CHECKLIST B5). */
export function isValidPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

/** RFC 7636 §4.2: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), no padding. */
export function s256Challenge(verifier: string): string {
  return hash('sha256', Buffer.from(verifier, 'ascii'), 'base64url');
}

/**
 * RFC 7636 §4.6: the verifier matches when its S256 transform equals the stored challenge,
 * compared in constant time (OAUTH-CHECKLIST B7, I1). A malformed verifier never matches.
 */
export function verifyPkce(verifier: string, challenge: string): boolean {
  if (!isValidPkceValue(verifier)) return false;
  return safeEqual(s256Challenge(verifier), challenge);
}

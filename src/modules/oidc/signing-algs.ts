/**
 * The algorithms an app may choose for its ID tokens (issue #22 §3; RFC 7518 §3.1); the first is
 * the default. Issue #36 §6: RS256 is the default because OpenID Connect Core §3.1.3.7 and
 * Dynamic Client Registration §2 make it the default id_token_signed_response_alg, and many
 * relying-party libraries accept nothing else unless told otherwise.
 */
export const SIGNING_ALGS = ['RS256', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
export const DEFAULT_SIGNING_ALG: SigningAlg = 'RS256';

export function isSigningAlg(value: string): value is SigningAlg {
  return (SIGNING_ALGS as readonly string[]).includes(value);
}

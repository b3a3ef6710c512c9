/** The algorithms an app may choose for its ID tokens (issue #22 §3; RFC 7518 §3.1); the first is the default. */
export const SIGNING_ALGS = ['ES256', 'RS256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
export const DEFAULT_SIGNING_ALG: SigningAlg = 'ES256';

export function isSigningAlg(value: string): value is SigningAlg {
  return (SIGNING_ALGS as readonly string[]).includes(value);
}

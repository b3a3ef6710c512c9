import { createHash } from 'node:crypto';

/**
 * The claims of an ID token (OpenID Connect Core §2, §3.1.3.6, §5.4), as a pure function of what
 * the grant and the person hold. Times are in milliseconds here and in seconds in the token.
 */

/** What the profile scopes reveal about the person (§5.1 standard claims). */
export interface ClaimsPerson {
  id: string;
  username: string;
  name: string;
  avatarUrl: string | null;
  email: string | null;
  emailVerified: boolean;
}

export interface IdTokenInput {
  /** The issuer exactly as the RFC 8414 and Discovery documents name it. */
  issuer: string;
  clientId: string;
  person: ClaimsPerson;
  /** The scopes of the tokens this ID token comes with. */
  scopes: readonly string[];
  issuedAt: number;
  lifetimeMs: number;
  /** When the person signed in (§2 auth_time). */
  authTime: number;
  /** The authorization request's nonce (§3.1.2.1); echoed in the code exchange's token only. */
  nonce: string | null;
  /** The access token issued beside it, for at_hash (§3.1.3.6). */
  accessToken: string;
  /** Issue #38 §4: how the person signed in (§2 amr, RFC 8176 values); left out when unknown. */
  amr?: readonly string[];
  /** Issue #38 §4: the acr_values value the sign-in met (§2 acr), when one was asked for. */
  acr?: string | null;
}

export type IdTokenClaims = Record<string, string | number | boolean | string[]>;

const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * §3.1.3.6 at_hash: base64url of the left half of the hash of the access token's ASCII octets,
 * with the hash of the JWS alg — SHA-256 for both ES256 and RS256.
 */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/**
 * §2: iss, sub (the person's id: stable, never reassigned), aud (the client id), exp, iat,
 * auth_time, nonce when the request had one, at_hash; azp is only required with several
 * audiences and is left out. §5.4: `email` adds email and email_verified, `identify` adds name,
 * preferred_username and picture (when the person has an avatar); so does OIDC's own `profile`.
 */
export function idTokenClaims(input: IdTokenInput): IdTokenClaims {
  const claims: IdTokenClaims = {
    iss: input.issuer,
    sub: input.person.id,
    aud: input.clientId,
    exp: seconds(input.issuedAt + input.lifetimeMs),
    iat: seconds(input.issuedAt),
    auth_time: seconds(input.authTime),
    at_hash: accessTokenHash(input.accessToken),
  };
  if (input.nonce !== null) claims['nonce'] = input.nonce;
  if (input.amr !== undefined && input.amr.length > 0) claims['amr'] = [...input.amr];
  if (input.acr) claims['acr'] = input.acr;
  Object.assign(claims, profileClaims(input.person, input.scopes));
  return claims;
}

/** §5.4 scope → claims, shared by the ID token and UserInfo (§5.3.2). */
export function profileClaims(person: ClaimsPerson, scopes: readonly string[]): IdTokenClaims {
  const claims: IdTokenClaims = {};
  if (scopes.includes('identify') || scopes.includes('profile')) {
    claims['name'] = person.name;
    claims['preferred_username'] = person.username;
    if (person.avatarUrl !== null) claims['picture'] = person.avatarUrl;
  }
  if (scopes.includes('email') && person.email !== null) {
    claims['email'] = person.email;
    claims['email_verified'] = person.emailVerified;
  }
  return claims;
}

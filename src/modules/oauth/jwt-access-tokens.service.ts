import { decodeProtectedHeader } from 'jose';
import type { Deps } from '../../deps.js';
import { verifyOwnJwt } from '../oidc/oidc-keys.service.js';

/**
 * The row an RFC 9068 JWT access token names (issue #41; grants/jwt-access-token.ts): its `jti`, the
 * stored hash, when the token is an `at+jwt` this server signed. Undefined for anything else (an ID
 * token included: its `typ` is JWT). Expiry is the row's to decide, as for an opaque token.
 */
export async function jwtAccessTokenRow(deps: Deps, token: string): Promise<string | undefined> {
  if (token.split('.').length !== 3) return undefined;
  let typ: unknown;
  try {
    typ = decodeProtectedHeader(token).typ;
  } catch {
    return undefined;
  }
  // RFC 9068 §4: the typ header distinguishes an access token from every other JWT.
  if (typ !== 'at+jwt') return undefined;
  const claims = await verifyOwnJwt(deps, token);
  return typeof claims?.jti === 'string' ? claims.jti : undefined;
}

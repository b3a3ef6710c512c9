import { MINUTE } from '../../../core/clock.js';
import { hashSecret } from '../../../core/secrets.js';
import type { Deps } from '../../../deps.js';
import { DEFAULT_SIGNING_ALG, signJwt } from '../../oidc/oidc-keys.service.js';
import type { ResourceServer } from '../../resource-servers/resource-servers.service.js';
import { ACCESS_TOKEN_LIFETIME_MS } from './issuance.js';
import { oauthClientId } from '../../client-metadata/client-metadata.service.js';

/**
 * RFC 9068 JWT access tokens (issue #41 §1), for resource servers that chose them: the API verifies
 * the token itself against the JWKS. Every grant still stores the opaque token's hash as the row,
 * and the JWT names that row by `jti`, so introspection, revocation and a refresh retry find it as
 * they find an opaque token. Short-lived, since a JWT checked locally cannot be revoked there.
 */

/** A JWT access token's lifetime: a resource server verifying locally learns of a revocation only at expiry. */
export const JWT_ACCESS_TOKEN_LIFETIME_MS = 5 * MINUTE;

/** How long an access token for `server` (undefined: Gatehouse's own API) lives. */
export function accessTokenLifetime(server: ResourceServer | undefined): number {
  return server?.accessTokenFormat === 'jwt' ? JWT_ACCESS_TOKEN_LIFETIME_MS : ACCESS_TOKEN_LIFETIME_MS;
}

/** What an access token says about itself. */
export interface AccessTokenFacts {
  /** The opaque token whose hash is the stored row. */
  opaque: string;
  clientId: string;
  /** The person's id, or for an application's own token its client id (RFC 9068 §2.2). */
  subject: string;
  scope: string;
  issuedAt: number;
  expiresAt: number;
}

/**
 * The access token the client receives: the opaque one, or for a JWT resource server its RFC 9068
 * JWT (`typ: at+jwt`, §2.1; iss, sub, aud, client_id, scope, iat, exp, jti §2.2), signed with the
 * OpenID Connect keys (the JWKS at /.well-known/jwks.json).
 */
export function presentedAccessToken(deps: Deps, server: ResourceServer | undefined, facts: AccessTokenFacts): string | Promise<string> {
  if (server?.accessTokenFormat !== 'jwt') return facts.opaque;
  return signedAccessJwt(deps, server, facts);
}

async function signedAccessJwt(deps: Deps, server: ResourceServer, facts: AccessTokenFacts): Promise<string> {
  // Issue #41 §3: a metadata-document client is known by its URL (client-metadata.service.ts oauthClientId).
  const clientId = await oauthClientId(deps, facts.clientId);
  return signJwt(
    deps,
    DEFAULT_SIGNING_ALG,
    {
      iss: deps.config.baseUrl,
      sub: facts.subject,
      aud: server.identifier,
      client_id: clientId,
      scope: facts.scope,
      iat: Math.floor(facts.issuedAt / 1000),
      exp: Math.floor(facts.expiresAt / 1000),
      jti: hashSecret(facts.opaque),
    },
    'at+jwt',
  );
}

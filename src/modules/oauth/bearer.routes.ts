import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { ApiError } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { protectedResourceMetadataUrl } from './metadata.js';
import { authenticateBearer, authenticateBearerWithPerson, type BearerToken } from './identity.service.js';

/**
 * Bearer authentication for /api/v1 routes (SPEC §5.1; RFC 6750; OAUTH-CHECKLIST E5), as a
 * Fastify preHandler: `{ preHandler: requireBearer(services, 'identify') }`, then
 * `bearerOf(request)` in the handler.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The access token requireBearer accepted for this request. */
    bearer: BearerToken | undefined;
  }
}

const BEARER = /^bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

function realm(deps: Deps): string {
  return deps.config.serviceName.replace(/["\\]/g, '');
}

/**
 * 401 `{code: 0, message: "401: Unauthorized"}` (Discord's answer) with the RFC 6750 §3 challenge.
 * DESIGN §1 names error="invalid_token" for a missing token too, so one challenge serves every case.
 */
function unauthorized(deps: Deps, error: 'invalid_token' | 'invalid_request', description: string): ApiError {
  // RFC 9728 §5.1: the challenge names the protected-resource metadata, where a client finds the authorization server.
  return new ApiError(401, 0, '401: Unauthorized', undefined, {
    'WWW-Authenticate': `Bearer realm="${realm(deps)}", error="${error}", error_description="${description}", resource_metadata="${protectedResourceMetadataUrl(deps.config.baseUrl)}"`,
  });
}

/** The access token the preHandler accepted for this request. */
export function bearerOf(request: FastifyRequest): BearerToken {
  const token = request.bearer;
  if (!token) throw new Error('bearerOf() called on a route without requireBearer()');
  return token;
}

/**
 * Accepts only `Authorization: Bearer <token>` (scheme case-insensitive). A token in the query
 * string is refused even next to a valid header (RFC 9700 §4.3.2: URLs leak into logs and
 * Referer). Missing, unknown, expired or revoked → 401; a valid token without `scope` → 403 50026
 * with error="insufficient_scope".
 */
export function requireBearer(deps: Deps, scope?: string, options: { withPerson?: boolean } = {}): preHandlerAsyncHookHandler {
  // A route answering with the person reads it with the token (identity.service.ts).
  const authenticate = options.withPerson === true ? authenticateBearerWithPerson : authenticateBearer;
  return async function bearer(request) {
    const query = request.query as Record<string, unknown> | undefined;
    if (query && typeof query === 'object' && 'access_token' in query) {
      throw unauthorized(deps, 'invalid_request', 'access tokens are not accepted in the query string; use the Authorization header');
    }
    const header = request.headers.authorization?.trim();
    if (header === undefined || header === '') throw unauthorized(deps, 'invalid_token', 'an access token is required: Authorization: Bearer <token>');
    const match = BEARER.exec(header);
    if (!match) throw unauthorized(deps, 'invalid_token', 'the Authorization header must use the Bearer scheme');
    const token = await authenticate(deps, match[1] as string);
    if (!token) throw unauthorized(deps, 'invalid_token', 'the access token is invalid, expired or revoked');
    if (scope !== undefined && !token.scopes.includes(scope)) {
      throw new ApiError(403, 50026, `Missing required OAuth2 scope: ${scope}`, undefined, {
        'WWW-Authenticate': `Bearer realm="${realm(deps)}", error="insufficient_scope", scope="${scope}"`,
      });
    }
    // A request property (decorated in app.ts), not a WeakMap keyed by the request: every bearer
    // request added an entry the garbage collector had to weigh as an ephemeron.
    request.bearer = token;
  };
}

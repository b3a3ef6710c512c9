import type { Acting, Who } from '../../core/acting.js';
import { OAuthError } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { authenticateClient } from './client-auth.service.js';
import type { TokenParams } from './grants/grant.js';
import type { TokenResponse } from './grants/issuance.js';
import { grantFor, grantTypeList } from './grants/registry.js';

export type { TokenResponse } from './grants/issuance.js';
// The derivation test/http/refresh.test.ts checks successors against.
export { successorTokens } from './grants/refresh-token.js';

/** What the token endpoint received: form parameters (empty values already absent) and context. */
export interface TokenRequest {
  params: TokenParams;
  authorization: string | undefined;
}

/** RFC 6749 §5.2: what a grant type the registry does not list is told. */
const UNSUPPORTED_GRANT_TYPE = `grant_type must be ${grantTypeList()}`;

/**
 * POST /api/oauth2/token (SPEC §2.2–2.3): authenticates the client, then runs the grant the
 * registry lists under grant_type (grants/registry.ts). Any other grant type (password,
 * client_credentials, implicit: OAUTH-CHECKLIST I3) answers unsupported_grant_type, before the
 * client is looked at. `acting` is the request, nobody known yet (its address is the one client
 * authentication failures count against); the grants record their refusals with it.
 */
export async function exchangeToken(deps: Deps, acting: Acting<Who>, request: TokenRequest): Promise<TokenResponse> {
  const p = request.params;
  const grantType = p['grant_type'];
  if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required');
  const grant = grantFor(grantType);
  if (grant === undefined) throw new OAuthError('unsupported_grant_type', UNSUPPORTED_GRANT_TYPE);
  const client = await authenticateClient(deps, acting, { authorization: request.authorization, clientId: p['client_id'], clientSecret: p['client_secret'] });
  // Issue #39: disabling an app revoked its grants, so a code or refresh token (one that raced the
  // disabling too) is RFC 6749 §5.2 invalid_grant; client credentials carry no grant, and a client
  // not allowed any grant now is unauthorized_client.
  if (client.app.disabledAt !== null) {
    throw new OAuthError(grantType === 'client_credentials' ? 'unauthorized_client' : 'invalid_grant', 'this application is disabled by the operator of this service');
  }
  return grant.exchange(deps, acting, client, p);
}

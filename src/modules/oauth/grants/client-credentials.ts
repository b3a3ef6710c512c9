import type { Acting, Who } from '../../../core/acting.js';
import { OAuthError } from '../../../core/errors.js';
import { issueSecret } from '../../../core/secrets.js';
import type { Deps } from '../../../deps.js';
import { parseResourceScope } from '../../resource-servers/resource-servers.js';
import type { AuthenticatedClient } from '../client-auth.service.js';
import { storeAppOnlyToken } from '../token-writes.repository.js';
import type { GrantType, TokenParams } from './grant.js';
import type { TokenResponse } from './issuance.js';
import { accessTokenLifetime, presentedAccessToken } from './jwt-access-token.js';
import { RESOURCE_PARAMETER, targetResource } from './resource.js';

/**
 * grant_type=client_credentials (RFC 6749 §4.4; issue #41 §2): an application's own access token,
 * for one of the resource servers it serves (RFC 8707 `resource`), with that API's scopes — the
 * scopes an app may hold without a person. Confidential apps only (§4.4: "MUST only be used by
 * confidential clients"); no refresh token (§4.4.3). Gatehouse's own API has no scope that speaks
 * for nobody, so `resource` is required. A successful exchange records nothing, like the other grants.
 */
async function clientCredentials(deps: Deps, _acting: Acting<Who>, { app }: AuthenticatedClient, p: TokenParams): Promise<TokenResponse> {
  // RFC 6749 §5.2: the client is identified, but not allowed this grant type.
  if (!app.confidential) throw new OAuthError('unauthorized_client', 'client_credentials is for confidential applications: a public client has no secret to prove it is itself');
  if (p['resource'] === undefined) throw new OAuthError('invalid_target', 'resource is required: client_credentials tokens are for a resource server this application serves');
  const server = await targetResource(deps, p['resource']);
  // RFC 8707 §2: an app mints its own tokens only for the APIs it serves.
  if (server === undefined || server.applicationId !== app.id) throw new OAuthError('invalid_target', 'resource is not a resource server of this application');
  const scope = parseResourceScope(server, p['scope']);
  if (!scope.ok) throw new OAuthError('invalid_scope', scope.reason);
  const now = deps.clock.now();
  const lifetime = accessTokenLifetime(server);
  const access = issueSecret(deps.random, 'accessToken');
  await storeAppOnlyToken(deps.db, {
    applicationId: app.id,
    ownerId: app.ownerId,
    resourceServerId: server.id,
    accessHash: access.hash,
    scopes: scope.scopes,
    now,
    expiresAt: now + lifetime,
    newGrantId: () => deps.ids.next(),
  });
  const scopeText = scope.scopes.join(' ');
  const token = await presentedAccessToken(deps, server, { opaque: access.plain, clientId: app.id, subject: app.id, scope: scopeText, issuedAt: now, expiresAt: now + lifetime });
  return { access_token: token, token_type: 'Bearer', expires_in: Math.floor(lifetime / 1000), scope: scopeText };
}

/** grant_type=client_credentials: the application's own token for one of its resource servers. */
export const clientCredentialsGrant: GrantType = {
  parameters: {
    scope: 'scopes of the resource server (default: all of them)',
    resource: RESOURCE_PARAMETER,
  },
  exchange: clientCredentials,
};

import type { Acting, Who } from '../../core/acting.js';
import { OAuthError } from '../../core/errors.js';
import { hashSecret, hasPrefix } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import { authenticateClient, DISABLED_CLIENT, invalidClient } from './client-auth.service.js';
import { findTokenToIntrospect } from './introspection.repository.js';
import { jwtAccessTokenRow } from './jwt-access-tokens.service.js';
import { oauthClientId } from '../client-metadata/client-metadata.service.js';

/** Parameters of the introspection endpoint (RFC 7662 §2.1), for the repeated-parameter check. */
export const INTROSPECT_PARAMETERS = ['token', 'token_type_hint', 'client_id', 'client_secret'] as const;

export interface IntrospectRequest {
  params: Readonly<Record<string, string | undefined>>;
  authorization: string | undefined;
}

/** RFC 7662 §2.2: what a caller learns about a token. */
export interface Introspection {
  active: boolean;
  scope?: string;
  client_id?: string;
  username?: string;
  sub?: string;
  aud?: string;
  exp?: number;
  iat?: number;
  token_type?: 'Bearer';
}

const INACTIVE: Introspection = Object.freeze({ active: false }) as Introspection;

/**
 * POST /api/oauth2/token/introspect (RFC 7662; issue #41 §1). The caller is a confidential client,
 * authenticated as at the token endpoint (client-auth.service.ts); a public one is invalid_client
 * (§2.1: the endpoint is protected, and a public client proves nothing). A token is described only
 * to whoever it concerns: a resource server's token to the application serving that resource
 * server, a token for Gatehouse's own API to the client it was issued to. Anything else — unknown,
 * expired, revoked, a refresh token, someone else's — is `{"active": false}` (§2.2: no oracle).
 * `acting` is the request, nobody known yet: a failed client authentication is audited with it.
 */
export async function introspectToken(deps: Deps, acting: Acting<Who>, request: IntrospectRequest): Promise<Introspection> {
  const p = request.params;
  const client = await authenticateClient(deps, acting, { authorization: request.authorization, clientId: p['client_id'], clientSecret: p['client_secret'] });
  if (!client.app.confidential) throw invalidClient(deps, 'introspection is for confidential clients: authenticate with a client secret');
  // Issue #39: a client the operator disabled is not a client now (RFC 6749 §5.2 invalid_client), so
  // it learns nothing about tokens, not even that one is inactive.
  if (client.app.disabledAt !== null) throw invalidClient(deps, DISABLED_CLIENT);
  const token = p['token'];
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required');
  // RFC 7662 §2.1: token_type_hint only orders a search; only access tokens are ever active here.
  const tokenHash = await accessTokenHash(deps, token);
  if (tokenHash === undefined) return INACTIVE;
  const found = await findTokenToIntrospect(deps.db, tokenHash);
  const now = deps.clock.now();
  if (!found || found.expiresAt <= now) return INACTIVE;
  const concerned = found.audience !== null ? found.audience.applicationId === client.app.id : found.resourceServerId === null && found.applicationId === client.app.id;
  if (!concerned) return INACTIVE;
  const answer: Introspection = {
    active: true,
    scope: found.scopes,
    // Issue #41 §3: a metadata-document client is known by its URL (client-metadata.service.ts oauthClientId).
    client_id: await oauthClientId(deps, found.applicationId),
    // RFC 9068 §2.2: a token of the client itself has the client as its subject.
    sub: found.appOnly ? found.applicationId : found.userId,
    aud: found.audience?.identifier ?? deps.config.baseUrl,
    exp: Math.floor(found.expiresAt / 1000),
    iat: Math.floor(found.createdAt / 1000),
    token_type: 'Bearer',
  };
  if (!found.appOnly && found.username !== null) answer.username = found.username;
  return answer;
}

/**
 * The stored row's hash for a presented access token: the opaque token's SHA-256, or for an RFC
 * 9068 JWT this server signed, the row it names (`jti`). Undefined for anything else.
 */
async function accessTokenHash(deps: Deps, token: string): Promise<string | undefined> {
  if (hasPrefix(token, 'accessToken')) return hashSecret(token);
  return jwtAccessTokenRow(deps, token);
}

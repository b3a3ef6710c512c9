import type { Acting, Who } from '../../../core/acting.js';
import { OAuthError } from '../../../core/errors.js';
import { formatScopes, parseScope } from '../../../core/scopes.js';
import { hashSecret, hasPrefix, issueSecret } from '../../../core/secrets.js';
import type { Deps } from '../../../deps.js';
import { resolveResource, resourceServerById } from '../../resource-servers/resource-servers.service.js';
import type { AuthenticatedClient } from '../client-auth.service.js';
import { jwtAccessTokenRow } from '../jwt-access-tokens.service.js';
import { findSubjectToken, storeExchangedToken } from '../token-exchange.repository.js';
import type { GrantType, TokenParams } from './grant.js';
import { ACCESS_TOKEN_LIFETIME_MS, type TokenResponse } from './issuance.js';

/** RFC 8693 §2.1: the grant type. */
export const TOKEN_EXCHANGE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3: token type identifiers. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/** The issued token's lifetime at most (SPEC §8's hour); never longer than the subject token's rest. */
const EXCHANGED_TOKEN_LIFETIME_MS = ACCESS_TOKEN_LIFETIME_MS;

/**
 * grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693; issue #41): the application
 * serving a resource server exchanges an access token it received for that API (the subject token)
 * for a short-lived access token of Gatehouse's own API, acting for the same person, with the
 * delegated scopes the person approved on the consent screen (delegation.ts). The issued token
 * belongs to the subject token's authorization, so ending that authorization ends it too. No
 * refresh token (§2.2.1: "the authorization server SHOULD NOT" issue one to an impersonating
 * client without reason; the subject token's client refreshes instead). Nothing changes on a refusal.
 */
async function tokenExchange(deps: Deps, _acting: Acting<Who>, { app }: AuthenticatedClient, p: TokenParams): Promise<TokenResponse> {
  // RFC 6749 §5.2: a public client proves nothing about being the API the token was for.
  if (!app.confidential) throw new OAuthError('unauthorized_client', 'token exchange is for confidential applications: authenticate as the application serving the resource server');
  const subjectToken = p['subject_token'];
  const subjectType = p['subject_token_type'];
  // RFC 8693 §2.1: both REQUIRED.
  if (subjectToken === undefined) throw new OAuthError('invalid_request', 'subject_token is required');
  if (subjectType === undefined) throw new OAuthError('invalid_request', 'subject_token_type is required');
  if (subjectType !== ACCESS_TOKEN_TYPE && subjectType !== JWT_TOKEN_TYPE) {
    throw new OAuthError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE} or ${JWT_TOKEN_TYPE}`);
  }
  // RFC 8693 §1.1: delegation with a separate actor token is not offered; the client itself is the actor.
  if (p['actor_token'] !== undefined || p['actor_token_type'] !== undefined) throw new OAuthError('invalid_request', 'actor_token is not supported: the authenticated client is the actor');
  const requested = p['requested_token_type'];
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE) throw new OAuthError('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}: only access tokens are issued`);
  // RFC 8693 §2.1: resource and audience name where the token will be used; only Gatehouse's own API here.
  for (const name of ['resource', 'audience'] as const) {
    const target = p[name];
    if (target !== undefined && (await resolveResource(deps, target)).kind !== 'gatehouse') {
      throw new OAuthError('invalid_target', `${name} must be this service's API (${deps.config.baseUrl}): exchanged tokens are for it alone`);
    }
  }

  const subjectHash = await subjectTokenHash(deps, subjectToken, subjectType);
  const subject = subjectHash === undefined ? undefined : await findSubjectToken(deps.db, subjectHash);
  const now = deps.clock.now();
  // RFC 8693 §2.2.2: invalid_grant for a subject token that is unknown, expired, revoked, or not for this client's API.
  if (!subject || subject.expiresAt <= now) throw new OAuthError('invalid_grant', 'subject_token is not an active access token');
  if (subject.resourceServerId === null || subject.audienceApplicationId !== app.id) throw new OAuthError('invalid_grant', 'subject_token is not for a resource server of this application');
  if (subject.appOnly) throw new OAuthError('invalid_grant', 'subject_token speaks for an application, not for a person');

  // What the person approved, and what the resource server still delegates now: the narrower of both.
  const server = await resourceServerById(deps, subject.resourceServerId);
  const allowed = subject.delegatedScopes.filter((s) => server?.delegatedScopes.includes(s) === true);
  const scopes = chooseScopes(p['scope'], allowed);

  const access = issueSecret(deps.random, 'accessToken');
  const lifetime = Math.min(EXCHANGED_TOKEN_LIFETIME_MS, subject.expiresAt - now);
  const stored = await storeExchangedToken(deps.db, { subjectHash: subjectHash as string, tokenHash: access.hash, scopes, now, expiresAt: now + lifetime });
  // Revoked between the read and the write.
  if (!stored) throw new OAuthError('invalid_grant', 'subject_token is not an active access token');
  return {
    access_token: access.plain,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: 'Bearer',
    expires_in: Math.max(1, Math.floor(lifetime / 1000)),
    scope: formatScopes(scopes),
  };
}

/** The stored row's hash for a subject token: the opaque token's SHA-256, or the row an RFC 9068 JWT of this server names. */
async function subjectTokenHash(deps: Deps, token: string, type: string): Promise<string | undefined> {
  if (type === ACCESS_TOKEN_TYPE && hasPrefix(token, 'accessToken')) return hashSecret(token);
  return jwtAccessTokenRow(deps, token);
}

/** RFC 8693 §2.1 `scope`: a subset of what the person delegated (aliases as everywhere); absent: all of it. */
function chooseScopes(raw: string | undefined, allowed: readonly string[]): string[] {
  if (raw === undefined) {
    if (allowed.length === 0) throw new OAuthError('invalid_scope', 'the person delegated no scopes of this service to this resource server');
    return [...allowed];
  }
  const parsed = parseScope(raw);
  if (!parsed.ok) throw new OAuthError('invalid_scope', parsed.reason);
  const refused = parsed.scopes.find((s) => !allowed.includes(s));
  if (refused !== undefined) throw new OAuthError('invalid_scope', `scope ${refused} was not delegated to this resource server by the person`);
  return parsed.scopes;
}

/** grant_type=urn:ietf:params:oauth:grant-type:token-exchange: a resource server acting for the person on this service's API. */
export const tokenExchangeGrant: GrantType = {
  parameters: {
    subject_token: 'RFC 8693: an access token issued for a resource server of this application',
    subject_token_type: `RFC 8693: \`${ACCESS_TOKEN_TYPE}\` (or \`${JWT_TOKEN_TYPE}\` for an RFC 9068 JWT access token)`,
    requested_token_type: `RFC 8693: \`${ACCESS_TOKEN_TYPE}\`, the only type issued`,
    audience: "RFC 8693: this service's API (its base URL), the only audience of an exchanged token",
    scope: 'the delegated scopes wanted (default: all the person approved)',
    resource: "RFC 8693/8707: this service's API (its base URL)",
    actor_token: 'RFC 8693: not supported (the authenticated client is the actor); refused with invalid_request',
    actor_token_type: 'RFC 8693: not supported; refused with invalid_request',
  },
  exchange: tokenExchange,
};

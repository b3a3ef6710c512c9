import { createHmac } from 'node:crypto';
import { SECOND } from '../../../core/clock.js';
import type { Acting, Who } from '../../../core/acting.js';
import { OAuthError } from '../../../core/errors.js';
import { coversScopes, parseScope } from '../../../core/scopes.js';
import { SecretPrefix, hashSecret, hasPrefix, safeEqual } from '../../../core/secrets.js';
import type { Deps } from '../../../deps.js';
import { changing } from '../../../events/event-bus.js';
import type { Application } from '../../applications/applications.js';
import type { AuthenticatedClient } from '../client-auth.service.js';
import { revokeGrant } from '../grants.repository.js';
import { rotateToSuccessors } from '../token-writes.repository.js';
import { findAccessToken, findRefreshToken, findRefreshTokenToRotate, type StoredRefreshToken } from '../tokens.repository.js';
import type { GrantType, TokenParams } from './grant.js';
import { requireSameResource, RESOURCE_PARAMETER } from './resource.js';
import { accessTokenLifetime, presentedAccessToken } from './jwt-access-token.js';
import { resourceServerById, type ResourceServer } from '../../resource-servers/resource-servers.service.js';
import { pairToStore, tokenResponse, withIdToken, type TokenResponse } from './issuance.js';

/**
 * A rotated refresh token presented again within this time, by the same client, while its
 * successor is still unused, is a retry (a response lost on the network, two tabs refreshing at
 * once) and gets the same successor pair back; any other reuse ends the grant (RFC 9700 §4.14.2).
 */
export const REFRESH_GRACE_MS = 30 * SECOND;

/**
 * The successor pair of a refresh token, derived rather than drawn (oauth.table.ts): HMAC-SHA256
 * keyed with the server secret (never stored in the database, config/server-secret.ts) over a
 * label, the presented token and the row's random rotation key. A retry within the grace window
 * re-derives exactly the pair the first rotation stored (as hashes only); neither an old token
 * alone nor an old token with a copy of the database yields its successors (issue #21 §5).
 */
export function successorTokens(secret: string, presented: string, rotationKey: string): { access: string; refresh: string } {
  const derive = (label: string) => createHmac('sha256', secret).update(`${label}\0${presented}\0${rotationKey}`).digest('base64url');
  return {
    access: `${SecretPrefix.accessToken}_${derive('gatehouse-rotate-access-v2')}`,
    refresh: `${SecretPrefix.refreshToken}_${derive('gatehouse-rotate-refresh-v2')}`,
  };
}

/**
 * grant_type=refresh_token (RFC 6749 §6; SPEC §3 rotation; OAUTH-CHECKLIST F1–F9). The presented
 * token is consumed atomically and one successor pair is minted; concurrent refreshes of one
 * token mint exactly one pair and, within the grace window, every caller gets that pair.
 */
async function refresh(deps: Deps, acting: Acting<Who>, { app }: AuthenticatedClient, p: TokenParams): Promise<TokenResponse> {
  const presented = p['refresh_token'];
  if (presented === undefined) throw new OAuthError('invalid_request', 'refresh_token is required');
  const tokenHash = hashSecret(presented);
  const stored = hasPrefix(presented, 'refreshToken') ? await findRefreshTokenToRotate(deps.db, tokenHash) : undefined;
  // Revoked grants have their tokens deleted (F7): unknown and revoked look alike.
  if (!stored) throw new OAuthError('invalid_grant', 'refresh token is invalid or revoked');
  // F1 (RFC 6749 §10.4): bound to its client.
  if (stored.applicationId !== app.id) throw new OAuthError('invalid_grant', 'refresh token was not issued to this client');

  // F6: the new access token may be narrower, never wider; the new refresh token keeps the grant's scope.
  let accessScopes = stored.scopes;
  const scopeParam = p['scope'];
  if (scopeParam !== undefined) {
    const parsed = parseScope(scopeParam);
    if (!parsed.ok) throw new OAuthError('invalid_scope', parsed.reason);
    if (!coversScopes(stored.scopes, parsed.scopes)) throw new OAuthError('invalid_scope', 'scope exceeds the scope originally granted');
    accessScopes = parsed.scopes;
  }

  // RFC 8707 §2.2: a resource named here must be the one the authorization was for.
  if (p['resource'] !== undefined) await requireSameResource(deps, p['resource'], stored.resourceServerId);

  const now = deps.clock.now();
  if (stored.usedAt === null && stored.expiresAt <= now) throw new OAuthError('invalid_grant', 'refresh token expired');
  // Issue #41: a resource server's grant; its format decides the access token's shape and lifetime.
  const resource = stored.resourceServerId !== null ? await resourceServerById(deps, stored.resourceServerId) : undefined;
  const lifetime = accessTokenLifetime(resource);
  // Rows written before migration 2026-11-21-04 have no rotation key; they rotate under an empty one.
  const successors = successorTokens(deps.secrets[0], presented, stored.rotationKey ?? '');
  const successorRefreshHash = hashSecret(successors.refresh);

  if (stored.usedAt === null) {
    const rotated = await writeRotation(deps, app, stored, { tokenHash, successorRefreshHash, accessHash: hashSecret(successors.access), accessScopes, now, lifetime });
    if (rotated) return withIdTokenOf(deps, app, stored, tokenResponse(successors.access, successors.refresh, lifetime, accessScopes), now, resource);
    // A concurrent refresh rotated it first: answer as a retry of that one.
  }
  return retryOrReuse(deps, acting, app, stored, presented, tokenHash, successors, now, resource);
}

/**
 * The rotation's writes, all or none: the token marked used with its successor named, the new
 * access and refresh tokens stored. False when a concurrent refresh rotated the token first.
 */
async function writeRotation(
  deps: Deps,
  app: Application,
  stored: StoredRefreshToken,
  r: { tokenHash: string; successorRefreshHash: string; accessHash: string; accessScopes: string[]; now: number; lifetime: number },
): Promise<boolean> {
  const { tokenHash, successorRefreshHash, accessHash, accessScopes, now, lifetime } = r;
  const rotated = await rotateToSuccessors(
    deps.db,
    tokenHash,
    pairToStore(deps, { grantId: stored.grantId, applicationId: app.id, userId: stored.userId, accessHash, accessScopes, refreshHash: successorRefreshHash, refreshScopes: stored.scopes, now, resourceServerId: stored.resourceServerId, accessLifetimeMs: lifetime }),
  );
  return rotated === 'rotated';
}

/**
 * A refresh token that was already rotated. Within the grace window, with the successor still
 * unused, the same pair is returned (expires_in counts down from the first answer); otherwise
 * this is reuse (RFC 9700 §4.14.2, F4) and the whole grant ends.
 */
async function retryOrReuse(
  deps: Deps,
  acting: Acting<Who>,
  app: Application,
  seen: StoredRefreshToken,
  presented: string,
  tokenHash: string,
  successors: { access: string; refresh: string },
  now: number,
  resource: ResourceServer | undefined,
): Promise<TokenResponse> {
  // Re-read: when we lost a race, `seen` predates the rotation.
  const stored = seen.usedAt === null ? await findRefreshToken(deps.db, tokenHash) : seen;
  if (!stored) throw new OAuthError('invalid_grant', 'refresh token is invalid or revoked');
  if (stored.usedAt !== null && now - stored.usedAt <= REFRESH_GRACE_MS && stored.successorHash !== null) {
    // The first rotation may have used a secret that has since been rotated out of first place.
    const candidates = [successors, ...deps.secrets.slice(1).map((secret) => successorTokens(secret, presented, stored.rotationKey ?? ''))];
    const pair = candidates.find((c) => safeEqual(stored.successorHash as string, hashSecret(c.refresh)));
    if (pair) {
      const [successor, access] = await Promise.all([findRefreshToken(deps.db, hashSecret(pair.refresh)), findAccessToken(deps.db, hashSecret(pair.access))]);
      if (successor && successor.usedAt === null && access && access.expiresAt > now) {
        return withIdTokenOf(deps, app, stored, tokenResponse(pair.access, pair.refresh, access.expiresAt - now, access.scopes), now, resource);
      }
    }
  }
  if (stored.usedAt === null) throw new OAuthError('invalid_grant', 'refresh token expired');
  // Issue #37 §2: the grant ends and refresh.reused is recorded in the same transaction.
  await changing(deps, acting, async (trx, emit) => {
    await revokeGrant(trx, stored.grantId, now);
    emit({ type: 'refresh.reused', applicationId: app.id, userId: stored.userId });
  });
  throw new OAuthError('invalid_grant', 'refresh token already used: it was replaced by a newer one, and the authorization has been revoked');
}

/**
 * Issue #22 (OpenID Connect Core §12.2): a refresh whose access token keeps openid also returns a
 * new ID token for the same person and sign-in (sub, auth_time), without the original nonce.
 */
function withIdTokenOf(
  deps: Deps,
  app: Application,
  stored: StoredRefreshToken,
  response: TokenResponse,
  now: number,
  resource?: ResourceServer,
): TokenResponse | Promise<TokenResponse> {
  // A token for another API is no sign-in to Gatehouse (issue #41); a JWT resource server gets its JWT.
  if (stored.resourceServerId !== null) return resourceResponse(deps, app, stored, response, now, resource);
  return withIdToken(deps, response, { clientId: app.id, grantId: stored.grantId, userId: stored.userId, scopes: response.scope.split(' '), withNonce: false, now });
}

/** A resource server's refreshed response: its access token as the server's format presents it (jwt-access-token.ts). */
async function resourceResponse(deps: Deps, app: Application, stored: StoredRefreshToken, response: TokenResponse, now: number, resource: ResourceServer | undefined): Promise<TokenResponse> {
  const expiresAt = now + response.expires_in * 1000;
  const facts = { opaque: response.access_token, clientId: app.id, subject: stored.userId, scope: response.scope, issuedAt: expiresAt - accessTokenLifetime(resource), expiresAt };
  response.access_token = await presentedAccessToken(deps, resource, facts);
  return response;
}

/** grant_type=refresh_token: a refresh token of this client, rotated on every use (SPEC §3). */
export const refreshTokenGrant: GrantType = {
  parameters: {
    refresh_token: 'the current refresh token',
    scope: 'narrow the new access token to these scopes',
    resource: RESOURCE_PARAMETER,
  },
  exchange: refresh,
};

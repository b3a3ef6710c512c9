import type { Acting, Who } from '../../../core/acting.js';
import { OAuthError } from '../../../core/errors.js';
import { hashSecret, hasPrefix } from '../../../core/secrets.js';
import type { Deps } from '../../../deps.js';
import type { AuthenticatedClient } from '../client-auth.service.js';
import { findDeviceCode, recordPoll, redeemDeviceCode } from '../device-codes.repository.js';
import { SLOW_DOWN_STEP_S } from '../device.js';
import { resourceServerById } from '../../resource-servers/resource-servers.service.js';
import type { GrantType, TokenParams } from './grant.js';
import { accessTokenLifetime, presentedAccessToken } from './jwt-access-token.js';
import { drawTokenPair, pairToStore, tokenResponse, withIdToken, type TokenResponse } from './issuance.js';

/** RFC 8628 §3.4: the grant type a device polls with. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4–3.5; issue #41 §2): the
 * device polls with its device code until the person answers on /activate. Checks needing only
 * the presented values come first; every poll is counted, so one faster than the interval is
 * slow_down and grows the interval by 5 s. The tokens are the code flow's (issuance.ts), taken
 * once: the approved row is consumed with their insert (DESIGN §3).
 */
async function pollDeviceCode(deps: Deps, _acting: Acting<Who>, { app }: AuthenticatedClient, p: TokenParams): Promise<TokenResponse> {
  const deviceCode = p['device_code'];
  if (deviceCode === undefined) throw new OAuthError('invalid_request', 'device_code is required');
  const hash = hashSecret(deviceCode);
  const stored = hasPrefix(deviceCode, 'deviceCode') ? await findDeviceCode(deps.db, hash) : undefined;
  if (!stored) throw new OAuthError('invalid_grant', 'device code is invalid');
  // RFC 8628 §3.4 (RFC 6749 §5.2): a device code works only for the client it was issued to.
  if (stored.applicationId !== app.id) throw new OAuthError('invalid_grant', 'device code was not issued to this client');
  if (stored.status === 'used') throw new OAuthError('invalid_grant', 'device code already used');
  const now = deps.clock.now();
  if (stored.expiresAt <= now) throw new OAuthError('expired_token', 'the device code has expired: start a new device authorization');

  // RFC 8628 §3.5: slow_down — the interval grows by 5 s for this and every later request.
  const tooFast = stored.lastPolledAt !== null && now - stored.lastPolledAt < stored.intervalSeconds * 1000;
  const interval = tooFast ? stored.intervalSeconds + SLOW_DOWN_STEP_S : stored.intervalSeconds;
  const counted = await recordPoll(deps.db, hash, stored.lastPolledAt, now, interval);
  // A concurrent poll of the same code was counted instead: this one came too fast.
  if (tooFast || !counted) throw new OAuthError('slow_down', `polling too fast: wait at least ${interval} seconds between requests`);

  if (stored.status === 'pending') throw new OAuthError('authorization_pending', 'the person has not answered yet: keep polling');
  if (stored.status === 'denied') throw new OAuthError('access_denied', 'the person declined to authorize the device');
  return issueTokens(deps, app.id, stored, hash, now);
}

async function issueTokens(deps: Deps, clientId: string, stored: { userId: string | null; grantId: string | null; scopes: string[]; resourceServerId: string | null }, hash: string, now: number): Promise<TokenResponse> {
  const { userId, grantId, scopes, resourceServerId } = stored;
  if (userId === null || grantId === null) throw new OAuthError('invalid_grant', 'device code is invalid');
  // Issue #41: as in the code grant, the resource server's format decides the access token's shape and lifetime.
  const resource = resourceServerId !== null ? await resourceServerById(deps, resourceServerId) : undefined;
  const accessLifetimeMs = accessTokenLifetime(resource);
  const { access, refresh } = drawTokenPair(deps);
  const pair = pairToStore(deps, { grantId, applicationId: clientId, userId, accessHash: access.hash, accessScopes: scopes, refreshHash: refresh.hash, refreshScopes: scopes, now, resourceServerId, accessLifetimeMs });
  const redeemed = await redeemDeviceCode(deps.db, hash, pair);
  // RFC 8628 §3.5: the person withdrew the approval (removed the app's access) before this poll.
  if (redeemed === 'revoked') throw new OAuthError('access_denied', 'the person removed this access before the device collected it');
  // Lost the race to a concurrent poll that took the tokens: single use.
  if (redeemed === 'lost-race') throw new OAuthError('invalid_grant', 'device code already used');
  const response = tokenResponse(access.plain, refresh.plain, pair.accessExpiresAt - now, scopes);
  // A token for another API is no sign-in to Gatehouse: its scopes are that API's (issue #41);
  // a JWT resource server gets its RFC 9068 JWT (jwt-access-token.ts).
  if (resourceServerId !== null) {
    const facts = { opaque: access.plain, clientId, subject: userId, scope: response.scope, issuedAt: now, expiresAt: pair.accessExpiresAt };
    response.access_token = await presentedAccessToken(deps, resource, facts);
    return response;
  }
  return withIdToken(deps, response, { clientId, grantId, userId, scopes, withNonce: false, now });
}

/** The device authorization grant: the device code from POST /api/oauth2/device/authorize (device.service.ts). */
export const deviceCodeGrant: GrantType = {
  parameters: {
    device_code: 'RFC 8628: the device code from the device authorization endpoint',
  },
  exchange: pollDeviceCode,
};

import { createHmac } from 'node:crypto';
import { DAY, HOUR, SECOND } from '../../core/clock.js';
import { OAuthError } from '../../core/errors.js';
import { SecretPrefix, hashSecret, hasPrefix, issueSecret, safeEqual } from '../../core/secrets.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { addressBlock } from '../accounts/sign-in-throttle.js';
import { verifyClientSecret, type Application } from '../applications/applications.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { redeemCodeForTokens, rotateToSuccessors, type TokenPair } from './token-writes.repository.js';
import { CLIENT_ADDRESS_FAILURE_RULE, readClientCredentials, type ClientAuthMethod, type PresentedClientAuth } from './client-auth.js';
import { getServer } from '../directory/servers.service.js';
import { planInstallAtExchange, writeServerInstall } from '../applications/installs.service.js';
import { revokeGrant } from './grants.repository.js';
import { createIncomingWebhook, prepareIncomingWebhook } from './incoming-webhook.service.js';
import type { WebhookRecord } from '../webhooks/webhooks.js';
import { presentGuild, type GuildResource } from '../resources/resources.js';
import { isValidPkceValue, verifyPkce } from './pkce.js';
import { coversScopes, formatScopes, parseScope } from '../../core/scopes.js';
import { idTokenFor, isOpenIdScope } from '../oidc/oidc.service.js';
import { findAccessToken, findCodeToRedeem, findRefreshToken, findRefreshTokenToRotate, type StoredRefreshToken } from './tokens.repository.js';

/** SPEC §8. */
export const ACCESS_TOKEN_LIFETIME_MS = HOUR;
export const REFRESH_TOKEN_LIFETIME_MS = 30 * DAY;
/**
 * A rotated refresh token presented again within this time, by the same client, while its
 * successor is still unused, is a retry (a response lost on the network, two tabs refreshing at
 * once) and gets the same successor pair back; any other reuse ends the grant (RFC 9700 §4.14.2).
 */
export const REFRESH_GRACE_MS = 30 * SECOND;

/** RFC 6749 §5.1 successful token response (SPEC §2.3). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  /** OpenID Connect Core §3.1.3.3: with scope openid (issue #22; oidc/oidc.service.ts). */
  id_token?: string;
  /** Bot installs through the code flow (issue #4): the server the bot was added to (Discord's `guild`). */
  server?: GuildResource;
  /** The same server under Discord's name (DESIGN §1). */
  guild?: GuildResource;
  /** webhook.incoming (issue #23): the webhook this exchange created, with its token and URL (shown once). */
  webhook?: WebhookRecord;
}

/** What the token endpoint received: form parameters (empty values already absent) and context. */
export interface TokenRequest {
  params: Readonly<Record<string, string | undefined>>;
  authorization: string | undefined;
  /** The client's address, for throttling failed client authentication. */
  address: string;
}

/** An authenticated client (or an identified public one) and how it authenticated. */
export interface AuthenticatedClient {
  app: Application;
  method: ClientAuthMethod;
}

function wwwAuthenticate(deps: Deps): Record<string, string> {
  const realm = deps.config.serviceName.replace(/["\\]/g, '');
  return { 'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"` };
}

/** RFC 6749 §5.2: invalid_client is a 401 and always names the scheme to use (RFC 9110 §15.5.2). */
function invalidClient(deps: Deps, description: string): OAuthError {
  return new OAuthError('invalid_client', description, 401, wwwAuthenticate(deps));
}

/**
 * Authenticates the client of a token or revocation request (RFC 6749 §2.3, §3.2.1;
 * OAUTH-CHECKLIST D3–D8, D10, D12): HTTP Basic, client_secret_post, or client_id alone for a
 * public app. Failures are counted per address only (client-auth.ts: client ids are public and
 * secrets unguessable, so a per-client count would only let strangers lock an app out) and
 * refused beyond the limit with 429 `temporarily_unavailable` and Retry-After.
 */
export async function authenticateClient(deps: Deps, presented: PresentedClientAuth, address: string): Promise<AuthenticatedClient> {
  const now = deps.clock.now();
  const addressKey = `oauth-client-auth:address:${addressBlock(address)}`;
  const read = readClientCredentials(presented);

  // D10: an address with too many failures is refused before anything it presents is checked.
  const refuseBlockedAddress = async (): Promise<void> => {
    const byAddress = await deps.buckets.peek(addressKey, CLIENT_ADDRESS_FAILURE_RULE, now);
    if (byAddress.allowed) return;
    const seconds = Math.max(1, Math.ceil(byAddress.resetAfterMs / 1000));
    throw new OAuthError('temporarily_unavailable', `too many failed client authentications; retry in ${seconds} seconds`, 429, { 'Retry-After': String(seconds) });
  };

  /** `counted`: a wrong secret or an unknown client; a request that presented no secret at all guessed nothing (issue #21 §2). */
  const fail = async (description: string, counted = true): Promise<never> => {
    if (counted) await deps.buckets.take(addressKey, CLIENT_ADDRESS_FAILURE_RULE, now);
    throw invalidClient(deps, description);
  };

  if (!read.ok) {
    await refuseBlockedAddress();
    if (read.error === 'invalid_request') throw new OAuthError('invalid_request', read.description);
    return fail(read.description);
  }
  const { credentials } = read;
  // Malformed ids never reach SQL as anything but a valid 64-bit number.
  if (!isSnowflake(credentials.clientId)) {
    await refuseBlockedAddress();
    return fail('unknown client_id');
  }
  const app = await findApplicationByClientId(deps, credentials.clientId);
  // A public client presenting its client_id alone guesses nothing (its id is public), so its
  // address's failures do not concern it: no bucket is read, which on Redis is one round trip
  // fewer on every public client's grant (issue #26 §1). Everything else is judged as before.
  if (app && !app.confidential && credentials.clientSecret === undefined) return { app, method: credentials.method };
  await refuseBlockedAddress();
  if (!app) return fail('unknown client_id');
  if (app.confidential) {
    // RFC 6749 §3.2.1, §4.1.3 (D7): a client that has a secret must authenticate with it.
    if (credentials.clientSecret === undefined) return fail('this client is confidential: authenticate with its client secret', false);
    if (!verifyClientSecret(app, credentials.clientSecret)) return fail('client authentication failed');
  } else {
    // A public app has no secret, so any secret presented for it is wrong.
    return fail('this client is public and has no client secret; send client_id only');
  }
  return { app, method: credentials.method };
}

/** Parameters of the token endpoint (RFC 6749 §4.1.3, §6), for the repeated-parameter check. */
export const TOKEN_PARAMETERS = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'client_id', 'client_secret', 'refresh_token', 'scope'] as const;

/**
 * POST /api/oauth2/token (SPEC §2.2–2.3): authenticates the client, then runs the grant.
 * Unknown or unsupported grant types (password, client_credentials, implicit: OAUTH-CHECKLIST I3)
 * answer unsupported_grant_type.
 */
export async function exchangeToken(deps: Deps, request: TokenRequest): Promise<TokenResponse> {
  const p = request.params;
  const grantType = p['grant_type'];
  if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required');
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }
  const client = await authenticateClient(deps, { authorization: request.authorization, clientId: p['client_id'], clientSecret: p['client_secret'] }, request.address);
  return grantType === 'authorization_code' ? redeemCode(deps, client.app, p) : refresh(deps, client.app, p);
}

/** Access + refresh token for one grant; the caller stores them. */
function tokenResponse(access: string, refreshToken: string, expiresInMs: number, scopes: readonly string[]): TokenResponse {
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: Math.max(1, Math.floor(expiresInMs / 1000)),
    refresh_token: refreshToken,
    scope: formatScopes(scopes),
  };
}

/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6). Every check that needs
 * only the presented values happens before the code is consumed, so a request with a wrong
 * verifier or from the wrong client neither uses up the code nor, for a replay, ends the grant
 * (OAUTH-CHECKLIST C5). A replay of a used code after an otherwise valid request ends the whole
 * grant (C3, RFC 6749 §4.1.2).
 */
async function redeemCode(deps: Deps, app: Application, p: TokenRequest['params']): Promise<TokenResponse> {
  const code = p['code'];
  if (code === undefined) throw new OAuthError('invalid_request', 'code is required');
  const redirectUri = p['redirect_uri'];
  const verifier = p['code_verifier'];

  const codeHash = hashSecret(code);
  const stored = hasPrefix(code, 'authorizationCode') ? await findCodeToRedeem(deps.db, codeHash) : undefined;
  if (!stored) throw new OAuthError('invalid_grant', 'authorization code is invalid');
  // C6: a code works only for the client it was issued to.
  if (stored.applicationId !== app.id) throw new OAuthError('invalid_grant', 'authorization code was not issued to this client');

  // C7 (RFC 6749 §4.1.3): identical when the authorization request carried it; may be omitted
  // only when it did not, and must still match when sent.
  if (stored.redirectUriSent && redirectUri === undefined) throw new OAuthError('invalid_grant', 'redirect_uri is required: the authorization request included it');
  if (redirectUri !== undefined && redirectUri !== stored.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');

  if (stored.codeChallenge !== null) {
    // B7, B9: a code issued with a challenge needs its verifier, whatever the client authentication.
    if (verifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required: the authorization request included code_challenge');
    if (!isValidPkceValue(verifier)) throw new OAuthError('invalid_grant', 'code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~');
    if (!verifyPkce(verifier, stored.codeChallenge)) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
  } else {
    // B8 (RFC 9700 §4.8.2): no PKCE downgrade.
    if (verifier !== undefined) throw new OAuthError('invalid_request', 'code_verifier sent for a code issued without code_challenge');
    // SPEC §1.1: apps without a secret always use PKCE (the authorize endpoint enforces it too).
    if (!app.confidential) throw new OAuthError('invalid_grant', 'authorization code is invalid');
  }

  const now = deps.clock.now();
  if (stored.usedAt !== null) return replayedCode(deps, stored.grantId, now);
  if (stored.expiresAt <= now) throw new OAuthError('invalid_grant', 'authorization code expired');

  const grant = stored.grant;
  // Issue #21 §5: an app requiring the code grant gets its bot now, if the person still may add it.
  const install = grant ? await planInstallAtExchange(deps, app, grant) : undefined;
  if (install === 'not-allowed') throw new OAuthError('invalid_grant', 'the person who authorized can no longer add bots to that server');
  if (install === 'out-of-reach') throw new OAuthError('invalid_grant', 'the bot is in that server with permissions the person who authorized does not hold');
  // Issue #23: webhook.incoming creates its webhook here, with the code's consumption: checked
  // before the transaction, written inside it (incoming-webhook.service.ts).
  const incoming = grant?.webhookChannelId ? await prepareIncomingWebhook(deps, app, stored.userId, grant.webhookChannelId) : undefined;
  let webhook: WebhookRecord | undefined;
  const access = issueSecret(deps.random, 'accessToken');
  const refreshToken = issueSecret(deps.random, 'refreshToken');
  const pair: TokenPair = {
    grantId: stored.grantId,
    applicationId: app.id,
    userId: stored.userId,
    accessHash: access.hash,
    accessScopes: stored.scopes,
    accessExpiresAt: now + ACCESS_TOKEN_LIFETIME_MS,
    refreshHash: refreshToken.hash,
    refreshScopes: stored.scopes,
    refreshExpiresAt: now + REFRESH_TOKEN_LIFETIME_MS,
    rotationKey: () => newRotationKey(deps),
    now,
  };
  // With nothing to write beside the tokens, PostgreSQL redeems in one statement (token-writes.repository.ts).
  const alongside =
    install || incoming
      ? {
          beforeTokens: install ? (trx: Parameters<typeof writeServerInstall>[1]) => writeServerInstall(deps, trx, install) : undefined,
          afterTokens: incoming
            ? async (trx: Parameters<typeof createIncomingWebhook>[1]) => {
                webhook = await createIncomingWebhook(deps, trx, incoming);
              }
            : undefined,
        }
      : undefined;
  const consumed = (await redeemCodeForTokens(deps.db, codeHash, pair, alongside)) === 'redeemed';
  // Lost the race to a concurrent exchange of the same code (C4): that is a replay too.
  if (!consumed) return replayedCode(deps, stored.grantId, now);
  const response = tokenResponse(access.plain, refreshToken.plain, ACCESS_TOKEN_LIFETIME_MS, stored.scopes);
  if (webhook) response.webhook = webhook;
  // Issue #4: the code of a bot install also carries the server the bot was added to.
  const server = grant?.serverId ? await getServer(deps, grant.serverId) : undefined;
  if (server) response.server = response.guild = presentGuild(server);
  if (isOpenIdScope(stored.scopes)) {
    const idToken = await idTokenFor(deps, { clientId: app.id, grantId: stored.grantId, userId: stored.userId, scopes: stored.scopes, accessToken: access.plain, withNonce: true, now });
    if (idToken !== undefined) response.id_token = idToken;
  }
  return response;
}

async function replayedCode(deps: Deps, grantId: string, now: number): Promise<never> {
  await deps.db.transaction().execute((trx) => revokeGrant(trx, grantId, now));
  deps.logger.warn({ grantId }, 'authorization code presented again; grant revoked');
  throw new OAuthError('invalid_grant', 'authorization code already used');
}

function newRotationKey(deps: Deps): string {
  return deps.random.bytes(32).toString('base64url');
}

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
async function refresh(deps: Deps, app: Application, p: TokenRequest['params']): Promise<TokenResponse> {
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

  const now = deps.clock.now();
  if (stored.usedAt === null && stored.expiresAt <= now) throw new OAuthError('invalid_grant', 'refresh token expired');
  // Rows written before migration 2026-11-21-04 have no rotation key; they rotate under an empty one.
  const successors = successorTokens(deps.secrets[0], presented, stored.rotationKey ?? '');
  const successorRefreshHash = hashSecret(successors.refresh);

  if (stored.usedAt === null) {
    const rotated = await writeRotation(deps, app, stored, { tokenHash, successorRefreshHash, accessHash: hashSecret(successors.access), accessScopes, now });
    if (rotated) return withIdToken(deps, app, stored, tokenResponse(successors.access, successors.refresh, ACCESS_TOKEN_LIFETIME_MS, accessScopes), now);
    // A concurrent refresh rotated it first: answer as a retry of that one.
  }
  return retryOrReuse(deps, app, stored, presented, tokenHash, successors, now);
}

/**
 * The rotation's writes, all or none: the token marked used with its successor named, the new
 * access and refresh tokens stored. False when a concurrent refresh rotated the token first.
 */
async function writeRotation(
  deps: Deps,
  app: Application,
  stored: StoredRefreshToken,
  r: { tokenHash: string; successorRefreshHash: string; accessHash: string; accessScopes: string[]; now: number },
): Promise<boolean> {
  const { tokenHash, successorRefreshHash, accessHash, accessScopes, now } = r;
  const rotated = await rotateToSuccessors(deps.db, tokenHash, {
    grantId: stored.grantId,
    applicationId: app.id,
    userId: stored.userId,
    accessHash,
    accessScopes,
    accessExpiresAt: now + ACCESS_TOKEN_LIFETIME_MS,
    refreshHash: successorRefreshHash,
    refreshScopes: stored.scopes,
    refreshExpiresAt: now + REFRESH_TOKEN_LIFETIME_MS,
    rotationKey: () => newRotationKey(deps),
    now,
  });
  return rotated === 'rotated';
}

/**
 * A refresh token that was already rotated. Within the grace window, with the successor still
 * unused, the same pair is returned (expires_in counts down from the first answer); otherwise
 * this is reuse (RFC 9700 §4.14.2, F4) and the whole grant ends.
 */
async function retryOrReuse(
  deps: Deps,
  app: Application,
  seen: StoredRefreshToken,
  presented: string,
  tokenHash: string,
  successors: { access: string; refresh: string },
  now: number,
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
        return withIdToken(deps, app, stored, tokenResponse(pair.access, pair.refresh, access.expiresAt - now, access.scopes), now);
      }
    }
  }
  if (stored.usedAt === null) throw new OAuthError('invalid_grant', 'refresh token expired');
  await deps.db.transaction().execute((trx) => revokeGrant(trx, stored.grantId, now));
  deps.logger.warn({ grantId: stored.grantId }, 'rotated refresh token presented again; grant revoked');
  throw new OAuthError('invalid_grant', 'refresh token already used: it was replaced by a newer one, and the authorization has been revoked');
}

/**
 * Issue #22 (OpenID Connect Core §12.2): a refresh whose access token keeps openid also returns a
 * new ID token for the same person and sign-in (sub, auth_time), without the original nonce.
 */
async function withIdToken(deps: Deps, app: Application, stored: StoredRefreshToken, response: TokenResponse, now: number): Promise<TokenResponse> {
  const scopes = response.scope.split(' ');
  if (!isOpenIdScope(scopes)) return response;
  const idToken = await idTokenFor(deps, { clientId: app.id, grantId: stored.grantId, userId: stored.userId, scopes, accessToken: response.access_token, withNonce: false, now });
  if (idToken !== undefined) response.id_token = idToken;
  return response;
}

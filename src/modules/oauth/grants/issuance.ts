import { DAY, HOUR } from '../../../core/clock.js';
import { formatScopes } from '../../../core/scopes.js';
import { issueSecret, type IssuedSecret } from '../../../core/secrets.js';
import type { Deps } from '../../../deps.js';
import { idTokenFor, isOpenIdScope } from '../../oidc/oidc.service.js';
import type { GuildResource } from '../../resources/resources.js';
import type { WebhookRecord } from '../../webhooks/webhooks.js';
import type { TokenPair } from '../token-writes.repository.js';

/**
 * What every grant issues (issue #37 §3): an access and refresh token pair with its lifetimes and
 * rotation key, the ID token with scope openid, and the RFC 6749 §5.1 response. A grant decides
 * whether and for whom; this decides what that looks like.
 */

/** SPEC §8. */
export const ACCESS_TOKEN_LIFETIME_MS = HOUR;
const REFRESH_TOKEN_LIFETIME_MS = 30 * DAY;

/** RFC 6749 §5.1 successful token response (SPEC §2.3). */
export interface TokenResponse {
  access_token: string;
  /** RFC 8693 §2.2.1: the type of the token issued by a token exchange (grants/token-exchange.ts). */
  issued_token_type?: string;
  token_type: 'Bearer';
  expires_in: number;
  /** Absent for client credentials (RFC 6749 §4.4.3: "A refresh token SHOULD NOT be included"). */
  refresh_token?: string;
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

/** The response for an access + refresh token of one grant; the caller has stored them. */
export function tokenResponse(access: string, refreshToken: string, expiresInMs: number, scopes: readonly string[]): TokenResponse & { refresh_token: string } {
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: Math.max(1, Math.floor(expiresInMs / 1000)),
    refresh_token: refreshToken,
    scope: formatScopes(scopes),
  };
}

/** A fresh access and refresh token, drawn in that order (a grant with no token to rotate from). */
export function drawTokenPair(deps: Deps): { access: IssuedSecret; refresh: IssuedSecret } {
  const access = issueSecret(deps.random, 'accessToken');
  const refresh = issueSecret(deps.random, 'refreshToken');
  return { access, refresh };
}

/** A new refresh token's random rotation key (oauth.table.ts; refresh-token.ts derives successors from it). */
function newRotationKey(deps: Deps): string {
  return deps.random.bytes(32).toString('base64url');
}

/** Whom a pair is issued to and what each token may do: the grant's choice. */
export interface PairFor {
  grantId: string;
  applicationId: string;
  userId: string;
  accessHash: string;
  accessScopes: readonly string[];
  refreshHash: string;
  refreshScopes: readonly string[];
  now: number;
  /** RFC 8707 (issue #41): the grant's resource server, or null for Gatehouse's own API. */
  resourceServerId: string | null;
  /** The access token's lifetime when not SPEC §8's hour (a JWT resource server's, jwt-access-token.ts). */
  accessLifetimeMs?: number;
}

/**
 * The rows of a new pair, for the repository's all-or-none write (token-writes.repository.ts):
 * SPEC §8's lifetimes, and a rotation key drawn when the refresh token's row is written.
 */
export function pairToStore(deps: Deps, pair: PairFor): TokenPair {
  return {
    ...pair,
    accessExpiresAt: pair.now + (pair.accessLifetimeMs ?? ACCESS_TOKEN_LIFETIME_MS),
    refreshExpiresAt: pair.now + REFRESH_TOKEN_LIFETIME_MS,
    rotationKey: () => newRotationKey(deps),
  };
}

/**
 * Issue #22 (OpenID Connect Core §3.1.3.3, §12.2): a response whose access token carries openid
 * also gets an ID token for the same person and sign-in; `withNonce` only for the code's own
 * exchange (a refresh repeats no nonce).
 */
export function withIdToken(deps: Deps, response: TokenResponse, input: IdTokenInput): TokenResponse | Promise<TokenResponse> {
  // Without openid there is nothing to wait for: the response goes back as it is.
  return isOpenIdScope(input.scopes) ? addIdToken(deps, response, input) : response;
}

interface IdTokenInput {
  clientId: string;
  grantId: string;
  userId: string;
  scopes: readonly string[];
  withNonce: boolean;
  now: number;
}

async function addIdToken(deps: Deps, response: TokenResponse, input: IdTokenInput): Promise<TokenResponse> {
  const idToken = await idTokenFor(deps, { ...input, accessToken: response.access_token });
  if (idToken !== undefined) response.id_token = idToken;
  return response;
}

import type { Acting, Who } from '../../core/acting.js';
import { OAuthError } from '../../core/errors.js';
import { hashSecret, hasPrefix } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import { revokeGrant } from './grants.repository.js';
import { authenticateClient, DISABLED_CLIENT, invalidClient } from './client-auth.service.js';
import { findAccessToken, findRefreshToken, forgetConsent } from './tokens.repository.js';
import { jwtAccessTokenRow } from './jwt-access-tokens.service.js';

/** Parameters of the revocation endpoint (RFC 7009 §2.1), for the repeated-parameter check. */
export const REVOKE_PARAMETERS = ['token', 'token_type_hint', 'client_id', 'client_secret'] as const;

export interface RevokeRequest {
  params: Readonly<Record<string, string | undefined>>;
  authorization: string | undefined;
}

/** Which table a token lives in, and whom it belongs to. */
interface FoundToken {
  grantId: string;
  applicationId: string;
  userId: string;
}

async function lookUp(deps: Deps, token: string, hint: string | undefined): Promise<FoundToken | undefined> {
  const hash = hashSecret(token);
  const access = async () => {
    if (hasPrefix(token, 'accessToken')) return findAccessToken(deps.db, hash);
    // Issue #41: an RFC 9068 JWT access token names its row by jti.
    const row = await jwtAccessTokenRow(deps, token);
    return row === undefined ? undefined : findAccessToken(deps.db, row);
  };
  const refresh = () => (hasPrefix(token, 'refreshToken') ? findRefreshToken(deps.db, hash) : Promise.resolve(undefined));
  // RFC 7009 §2.1: the hint only orders the search; a wrong or unknown one extends it (G1).
  return hint === 'refresh_token' ? ((await refresh()) ?? (await access())) : ((await access()) ?? (await refresh()));
}

/**
 * POST /api/oauth2/token/revoke (RFC 7009; SPEC §2.4, §3): revoking an access or a refresh token
 * ends the whole authorization it belongs to (every token of the grant stops working at once,
 * G5, G7) and forgets the remembered consent (issue #3), so the next authorization asks again.
 *
 * Unknown, expired and already revoked tokens succeed silently (G3: no oracle). A token of
 * another client is never revoked: a public caller (who proved nothing but a client_id) gets the
 * same silent success, while an authenticated confidential caller is told, as RFC 7009 §2.1 asks
 * ("the request is refused and the client is informed"), with invalid_request (G4). `acting` is
 * the request, nobody known yet: a failed client authentication is audited with it.
 */
export async function revokeToken(deps: Deps, acting: Acting<Who>, request: RevokeRequest): Promise<void> {
  const p = request.params;
  // RFC 7009 §2.1: the client is authenticated first, like at the token endpoint (G2).
  const client = await authenticateClient(deps, acting, { authorization: request.authorization, clientId: p['client_id'], clientSecret: p['client_secret'] });
  // Issue #39: a client the operator disabled is not a client now (RFC 6749 §5.2 invalid_client);
  // disabling already revoked every grant it had, so nothing is left for it to revoke.
  if (client.app.disabledAt !== null) throw invalidClient(deps, DISABLED_CLIENT);
  const token = p['token'];
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required');

  const found = await lookUp(deps, token, p['token_type_hint']);
  if (!found) return;
  if (found.applicationId !== client.app.id) {
    if (client.method === 'none') return;
    throw new OAuthError('invalid_request', 'the token was not issued to this client');
  }
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await revokeGrant(trx, found.grantId, now);
    await forgetConsent(trx, found.userId, found.applicationId);
  });
}

import { actingAs, type Acting, type Who } from '../../../core/acting.js';
import { OAuthError } from '../../../core/errors.js';
import { hashSecret, hasPrefix } from '../../../core/secrets.js';
import { person, type PersonActor } from '../../../core/actor.js';
import type { Deps } from '../../../deps.js';
import { changing } from '../../../events/event-bus.js';
import type { DomainEvent } from '../../../events/domain-events.js';
import { planInstallAtExchange, writeServerInstall } from '../../applications/installs.service.js';
import { getServer } from '../../directory/servers.service.js';
import { presentGuild } from '../../resources/resources.js';
import type { WebhookRecord } from '../../webhooks/webhooks.js';
import type { AuthenticatedClient } from '../client-auth.service.js';
import { revokeGrant } from '../grants.repository.js';
import { createIncomingWebhook, prepareIncomingWebhook } from '../incoming-webhook.service.js';
import { isValidPkceValue, verifyPkce } from '../pkce.js';
import { redeemCodeForTokens } from '../token-writes.repository.js';
import { findCodeToRedeem } from '../tokens.repository.js';
import type { GrantType, TokenParams } from './grant.js';
import { requireSameResource, RESOURCE_PARAMETER } from './resource.js';
import { accessTokenLifetime, presentedAccessToken } from './jwt-access-token.js';
import { resourceServerById } from '../../resource-servers/resource-servers.service.js';
import { drawTokenPair, pairToStore, tokenResponse, withIdToken, type TokenResponse } from './issuance.js';

/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6). Every check that needs
 * only the presented values happens before the code is consumed, so a request with a wrong
 * verifier or from the wrong client neither uses up the code nor, for a replay, ends the grant
 * (OAUTH-CHECKLIST C5). A replay of a used code after an otherwise valid request ends the whole
 * grant (C3, RFC 6749 §4.1.2).
 */
async function redeemCode(deps: Deps, acting: Acting<Who>, { app }: AuthenticatedClient, p: TokenParams): Promise<TokenResponse> {
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

  // RFC 8707 §2.2: a resource named here must be the one the authorization was for.
  if (p['resource'] !== undefined) await requireSameResource(deps, p['resource'], stored.grant?.resourceServerId ?? null);

  const now = deps.clock.now();
  if (stored.usedAt !== null) return replayedCode(deps, acting, app.id, stored, now);
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
  // Issue #41: a resource server's grant; its format decides the access token's shape and lifetime.
  const resource = grant?.resourceServerId ? await resourceServerById(deps, grant.resourceServerId) : undefined;
  const accessLifetimeMs = accessTokenLifetime(resource);
  const { access, refresh: refreshToken } = drawTokenPair(deps);
  const pair = pairToStore(deps, {
    grantId: stored.grantId,
    applicationId: app.id,
    userId: stored.userId,
    accessHash: access.hash,
    accessScopes: stored.scopes,
    refreshHash: refreshToken.hash,
    refreshScopes: stored.scopes,
    now,
    resourceServerId: grant?.resourceServerId ?? null,
    accessLifetimeMs,
  });
  // With nothing to write beside the tokens, PostgreSQL redeems in one statement (token-writes.repository.ts).
  // Issue #37 §1: the bot install and the webhook are the authorizing person's; their events are
  // recorded in the redemption's transaction and delivered after it commits. Built only when
  // there is such a write: a plain exchange allocates nothing for them (issue #37: the grants keep their instruction count).
  let authored: { authorizer: Acting<PersonActor>; events: DomainEvent[] } | undefined;
  let alongside: Parameters<typeof redeemCodeForTokens>[3];
  if (install || incoming) {
    const by = { authorizer: actingAs(acting, person(stored.userId)), events: [] as DomainEvent[] };
    authored = by;
    alongside = {
      beforeTokens: install
        ? async (trx: Parameters<typeof writeServerInstall>[2]) => {
            by.events.push(...(await writeServerInstall(deps, by.authorizer, trx, install)));
          }
        : undefined,
      afterTokens: incoming
        ? async (trx: Parameters<typeof createIncomingWebhook>[2]) => {
            const created = await createIncomingWebhook(deps, by.authorizer, trx, incoming);
            webhook = created.record;
            by.events.push(...created.events);
          }
        : undefined,
    };
  }
  const consumed = (await redeemCodeForTokens(deps.db, codeHash, pair, alongside)) === 'redeemed';
  // Lost the race to a concurrent exchange of the same code (C4): that is a replay too.
  if (!consumed) return replayedCode(deps, acting, app.id, stored, now);
  if (authored) for (const event of authored.events) deps.bus.deliver(authored.authorizer, event);
  const response = tokenResponse(access.plain, refreshToken.plain, accessLifetimeMs, stored.scopes);
  if (webhook) response.webhook = webhook;
  // Issue #4: the code of a bot install also carries the server the bot was added to.
  const server = grant?.serverId ? await getServer(deps, grant.serverId) : undefined;
  if (server) response.server = response.guild = presentGuild(server);
  // A token for another API is no sign-in to Gatehouse: its scopes are that API's (issue #41).
  if (pair.resourceServerId !== null) {
    const facts = { opaque: access.plain, clientId: app.id, subject: stored.userId, scope: response.scope, issuedAt: now, expiresAt: pair.accessExpiresAt };
    response.access_token = await presentedAccessToken(deps, resource, facts);
    return response;
  }
  return withIdToken(deps, response, { clientId: app.id, grantId: stored.grantId, userId: stored.userId, scopes: stored.scopes, withNonce: true, now });
}

/** C3: the grant ends, and issue #37 §2's code.replayed is recorded in the same transaction. */
async function replayedCode(deps: Deps, acting: Acting<Who>, applicationId: string, stored: { grantId: string; userId: string }, now: number): Promise<never> {
  await changing(deps, acting, async (trx, emit) => {
    await revokeGrant(trx, stored.grantId, now);
    emit({ type: 'code.replayed', applicationId, userId: stored.userId });
  });
  throw new OAuthError('invalid_grant', 'authorization code already used');
}

/** grant_type=authorization_code: the code from the authorization endpoint (authorize.service.ts). */
export const authorizationCodeGrant: GrantType = {
  parameters: {
    code: 'the code from the redirect',
    redirect_uri: 'required, and identical, when the authorization request carried it',
    code_verifier: 'the PKCE verifier when the authorization request had a code_challenge',
    resource: RESOURCE_PARAMETER,
  },
  exchange: redeemCode,
};

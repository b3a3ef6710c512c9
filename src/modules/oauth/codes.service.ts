import type { Acting } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import { DAY, MINUTE } from '../../core/clock.js';
import type { DomainEvent } from '../../events/domain-events.js';
import { issueSecret } from '../../core/secrets.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import type { Deps } from '../../deps.js';
import type { Application } from '../applications/applications.js';
import { writeInstall, type InstallWrite, type ServerInstallPlan } from '../applications/installs.service.js';
import { recordOpenIdGrant, type OpenIdGrantFacts } from '../oidc/oidc.service.js';
import { CODE_LIFETIME_MS, type AuthorizationRequest } from './authorize.js';
import { authorizationCodeUri, authorizationErrorUri } from './authorize-response.js';
import { challengeWasUsed, insertCode, purgeExpiredCodes } from './codes.repository.js';
import { saveConsent } from './consents.repository.js';
import { insertGrant } from './grants.repository.js';
import { WEBHOOK_INCOMING_SCOPE } from './incoming-webhook.js';
import { coversScopes, formatScopes, INSTALL_SCOPES } from '../../core/scopes.js';

/** One authorization to issue a code for: the validated request and what answering it adds. */
export interface CodeIssue {
  app: Application;
  request: AuthorizationRequest;
  /** The scopes the person consented to before, if any. */
  remembered: string[] | undefined;
  /** The bot install the consent form asked for. */
  plan?: ServerInstallPlan | undefined;
  /** webhook.incoming's channel (issue #23): the exchange creates the webhook. */
  webhookChannelId?: string | undefined;
  /** What the grant's ID tokens repeat (issue #22). */
  openId?: OpenIdGrantFacts | undefined;
  /** The person approved the consent screen just now (not a remembered consent): grant.created is recorded. */
  approved?: boolean | undefined;
}

/**
 * Codes one person may have issued to one app (issue #21 §2: one account once drew 746 codes a
 * second): by default 30 per 10 minutes (GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN), far above any
 * person's sign-ins, and a bound on what a script holding a session can write. 0 turns it off
 * (load generators that mint thousands of codes for one person).
 */
function codeIssuanceRule(deps: Deps): BucketRule | undefined {
  return deps.config.codesPerTenMinutes > 0 ? { limit: deps.config.codesPerTenMinutes, windowMs: 10 * MINUTE } : undefined;
}
/** Expired codes are kept this long for replay detection, then purged. */
export const CODE_RETENTION_MS = DAY;
const PURGE_EVERY_MS = 10 * MINUTE;
const PURGE_BATCH = 1000;
/** When each database was last purged by this process: purging rides on code issuance, at most once per PURGE_EVERY_MS. */
const lastPurge = new WeakMap<object, number>();

/**
 * Purges codes that expired over CODE_RETENTION_MS ago, in one bounded batch, at most every
 * PURGE_EVERY_MS per process: issuing codes is what fills the table, so issuing is what empties
 * it, and a quiet server has nothing to purge. A failure is logged and never fails the sign-in.
 */
async function purgeCodesNow(deps: Deps, now: number): Promise<void> {
  const last = lastPurge.get(deps.db);
  if (last !== undefined && now - last < PURGE_EVERY_MS && now >= last) return;
  lastPurge.set(deps.db, now);
  try {
    const purged = await purgeExpiredCodes(deps.db, now - CODE_LIFETIME_MS - CODE_RETENTION_MS, PURGE_BATCH);
    if (purged > 0) deps.logger.debug({ purged }, 'expired authorization codes purged');
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not purge expired authorization codes');
  }
}

/**
 * One authorization (SPEC §3, §8; OAUTH-CHECKLIST C1, C8, B6): a grant and its code — 256 random
 * bits, stored only as a SHA-256 hash, bound to the app, the redirect URI, the scopes, the PKCE
 * challenge and the person, valid 10 minutes — and the remembered consent, all or nothing. With
 * an install, its writes join the same transaction, the grant records the server and the granted
 * permissions, and the redirect carries them (issue #4). The person acting is the one who
 * authorizes. Issue #37 §2: a consent approved on the screen records grant.created with its
 * scopes in the same transaction; a code issued from a remembered consent records nothing (the
 * grant was recorded when it was approved).
 */
export async function issueCode(deps: Deps, acting: Acting<PersonActor>, issue: CodeIssue): Promise<{ kind: 'redirect'; location: string }> {
  const { app, request, remembered, plan, webhookChannelId, openId, approved } = issue;
  const userId = acting.actor.id;
  // RFC 9700 §2.1.1 (OAUTH-CHECKLIST B10): a challenge seen before means a reused verifier, which
  // would let whoever saw the first exchange redeem this code too.
  if (request.codeChallenge && (await challengeWasUsed(deps.db, app.id, userId, request.codeChallenge))) {
    const description = 'code_challenge was already used: make a new code_verifier for every authorization request';
    return { kind: 'redirect', location: authorizationErrorUri(request.redirectUri, 'invalid_request', description, request.state, deps.config.baseUrl) };
  }
  const now = deps.clock.now();
  const rule = codeIssuanceRule(deps);
  const issuance = rule ? await deps.buckets.take(`oauth-codes:${userId}:${app.id}`, rule, now) : undefined;
  if (issuance && !issuance.allowed) {
    // RFC 6749 §4.1.2.1: temporarily_unavailable is the authorization endpoint's "try later".
    const description = `too many authorization codes for this application; retry in ${Math.max(1, Math.ceil(issuance.resetAfterMs / 1000))} seconds`;
    return { kind: 'redirect', location: authorizationErrorUri(request.redirectUri, 'temporarily_unavailable', description, request.state, deps.config.baseUrl) };
  }
  await purgeCodesNow(deps, now);
  const code = issueSecret(deps.random, 'authorizationCode');
  const grantId = deps.ids.next();
  // Installs are presented afresh every time and are not remembered; the other scopes are.
  // So is webhook.incoming (issue #23): every authorization creates a webhook, so it is asked every time.
  // A resource server's scopes (issue #41) are asked every time, so they are not remembered either.
  const rememberable = request.resource ? [] : request.scopes.filter((s) => !INSTALL_SCOPES.includes(s) && s !== WEBHOOK_INCOMING_SCOPE);
  const consented = rememberable.length === 0 || (remembered !== undefined && coversScopes(remembered, rememberable));
  // Issue #21 §5: for an app that requires the code grant, the bot joins at the code exchange
  // (grants/authorization-code.ts), so a code never exchanged adds nothing; the grant records the plan.
  const install: InstallWrite | undefined =
    plan && !app.botRequireCodeGrant ? { kind: 'server', plan } : !plan && request.install?.commands ? { kind: 'user', applicationId: app.id, userId } : undefined;
  // The install's transaction is writeInstall's (applications/), so the event is recorded in it
  // here and delivered after it commits, as events/event-bus.ts `changing` does.
  const granted: DomainEvent | undefined = approved ? { type: 'grant.created', applicationId: app.id, userId, scopes: formatScopes(request.scopes) } : undefined;
  await writeInstall(deps, acting, install, async (trx) => {
    await insertGrant(trx, {
      id: grantId,
      applicationId: app.id,
      userId,
      scopes: request.scopes,
      createdAt: now,
      serverId: plan?.serverId ?? null,
      permissions: plan ? plan.granted.toString() : null,
      webhookChannelId: webhookChannelId ?? null,
      resourceServerId: request.resource?.id ?? null,
      // RFC 8693 (issue #41): the consent screen showed these beneath the API's scopes (consentView).
      delegatedScopes: request.resource?.delegatedScopes ?? [],
    });
    await insertCode(trx, {
      codeHash: code.hash,
      grantId,
      applicationId: app.id,
      userId,
      redirectUri: request.redirectUri,
      redirectUriSent: request.redirectUriSent,
      scopes: request.scopes,
      codeChallenge: request.codeChallenge ?? null,
      createdAt: now,
      expiresAt: now + CODE_LIFETIME_MS,
    });
    // Issue #22: what this grant's ID tokens repeat (auth_time, nonce).
    if (openId) await recordOpenIdGrant(trx, grantId, openId);
    if (!consented) {
      // Remember the union, so asking again for any part of it skips the screen.
      const union = formatScopes([...(remembered ?? []), ...rememberable]).split(' ');
      await saveConsent(trx, userId, app.id, union, now);
    }
    if (granted) await deps.bus.recordWith(trx, acting, [granted]);
  });
  if (granted) deps.bus.deliver(acting, granted);
  const server = plan ? { id: plan.serverId, permissions: plan.granted } : undefined;
  return { kind: 'redirect', location: authorizationCodeUri(request.redirectUri, code.plain, request.state, deps.config.baseUrl, server) };
}


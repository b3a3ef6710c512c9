import { DAY, MINUTE } from '../../core/clock.js';
import { PageError } from '../../core/errors.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import { Permission, has } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import { issueSecret } from '../../core/secrets.js';
import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { isUniqueViolation } from '../../storage/types.js';
import { getPerson } from '../accounts/accounts.service.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import type { Application } from '../applications/applications.js';
import { describeRequestedPermissions, grantedPermissions, permissionLabelList, tickedPermissions } from '../applications/installs.js';
import { writeServerInstall, writeUserInstall, type ServerInstallPlan } from '../applications/installs.service.js';
import { getServer, listServersForPerson, memberPermissions } from '../directory/servers.service.js';
import {
  AUTHORIZE_PARAMS,
  authorizationCodeUri,
  authorizationErrorUri,
  authorizationResponseUri,
  authorizeUrl,
  checkClientId,
  CODE_LIFETIME_MS,
  isPlainInstall,
  readAuthorizeParams,
  requestFields,
  resolveRedirectUri,
  unknownApplication,
  validateAuthorizeParams,
  validatePlainInstall,
  type AuthorizationRequest,
  type AuthorizeErrorCode,
  type AuthorizedApp,
  type ConsentRequest,
  type ConsentView,
  type InstallConsent,
  type InstalledView,
  type PageProblem,
  type RawAuthorizeParams,
  type RedirectTarget,
} from './authorize.js';
import { challengeWasUsed, insertCode, purgeExpiredCodes } from './codes.repository.js';
import { findConsentScopes, listAuthorizedApps, saveConsent } from './consents.repository.js';
import { insertGrant, revokeAllGrantsOf } from './grants.repository.js';
import { incomingWebhookScopeProblem, WEBHOOK_INCOMING_SCOPE, wantsIncomingWebhook } from './incoming-webhook.js';
import { chosenWebhookChannel, webhookConsent } from './incoming-webhook.service.js';
import { coversScopes, describeScope, formatScopes, INSTALL_SCOPES } from '../../core/scopes.js';
import { openIdGate, recordOpenIdGrant, type OpenIdGrantFacts } from '../oidc/oidc.service.js';
import { loginHintOf, withSignedInAfter } from '../oidc/oidc-request.js';

/** What the authorize route does next; it never decides anything itself. */
export type AuthorizeOutcome =
  /** To the client's redirect URI: a code, or an error (RFC 6749 §4.1.2, §4.1.2.1). */
  | { kind: 'redirect'; location: string }
  /** To sign-in, coming back to `next` afterwards (OAUTH-CHECKLIST A19: authenticate before redirecting). */
  | { kind: 'sign-in'; next: string; loginHint?: string | undefined }
  | { kind: 'consent'; view: ConsentView }
  /** A plain install is done: the confirmation page (issue #4). */
  | { kind: 'installed'; view: InstalledView }
  /** A plain install was cancelled and there is no redirect URI to tell: a page saying nothing was added. */
  | { kind: 'declined'; application: { id: string; name: string } };

interface ValidatedClient {
  app: Application;
  params: RawAuthorizeParams;
  /** Undefined only for a plain install without redirect_uri. */
  target: RedirectTarget | undefined;
  /** A plain install link (no response_type, only install scopes): no code, no redirect. */
  plain: boolean;
}

function pageError(problem: PageProblem): PageError {
  return new PageError(problem.status, problem.title, problem.detail);
}

/**
 * RFC 6749 §4.1.2.1, OAUTH-CHECKLIST A3/A4/A7: the client and its redirect URI come first, and
 * any failure there is a page (thrown), never a redirect.
 */
async function validateClient(deps: Deps, source: unknown): Promise<ValidatedClient> {
  const params = readAuthorizeParams(source);
  const client = checkClientId(params);
  if (!client.ok) throw pageError(client.problem);
  const app = await findApplicationByClientId(deps, client.clientId);
  if (!app) throw pageError(unknownApplication());
  const plain = isPlainInstall(params);
  // Issue #4: a plain install sends nothing back, so it needs no redirect URI; one that is sent
  // must still be registered, as in the code flow.
  const named = params.values.redirect_uri !== undefined || params.repeated.includes('redirect_uri');
  let target: RedirectTarget | undefined;
  if (!plain || named) {
    const redirect = resolveRedirectUri(params, app.redirectUris);
    if (!redirect.ok) throw pageError(redirect.problem);
    target = redirect.target;
  }
  // Issue #4, SPEC §4 notes: with "Require full OAuth2 authorization" a bot install link must
  // carry redirect_uri and response_type=code, else it is refused as a page.
  if (app.botRequireCodeGrant && requestsBot(params) && (plain || !target?.redirectUriSent)) {
    throw new PageError(
      400,
      'This install link is not complete',
      `${app.name} requires full OAuth2 authorization: its install link must include redirect_uri and response_type=code. If you followed a link from the app, tell its developer. Nothing was added.`,
    );
  }
  return { app, params, target, plain };
}

/** Whether the scope parameter names bot, before the scope is validated. */
function requestsBot(params: RawAuthorizeParams): boolean {
  return (params.values.scope ?? '').split(' ').includes('bot');
}

/** The request validated as what the link is: a plain install, or the code flow. */
function validateRequest(client: ValidatedClient): { ok: true; request: ConsentRequest } | { ok: false; error: AuthorizeErrorCode; description: string } {
  if (client.plain) return validatePlainInstall(client.params, client.app.id, client.target);
  // validateClient resolved the target for every link that is not a plain install.
  return validateAuthorizeParams(client.params, client.app.id, client.target as RedirectTarget, client.app);
}

/** State to echo on an error: as sent, and only when sent exactly once. */
function echoedState(params: RawAuthorizeParams): string | undefined {
  return params.repeated.includes('state') ? undefined : params.values.state;
}

/**
 * An error of a request whose client and redirect URI are trusted: redirected to the app
 * (RFC 6749 §4.1.2.1), or — for a plain install without redirect_uri — shown as a page.
 */
function errorRedirect(deps: Deps, client: ValidatedClient, error: AuthorizeErrorCode, description: string): AuthorizeOutcome {
  if (client.target === undefined) throw new PageError(400, 'This install link is not valid', `${capitalise(description)}. If you followed a link from an application, tell its developer.`);
  return { kind: 'redirect', location: authorizationErrorUri(client.target.redirectUri, error, description, echoedState(client.params), deps.config.baseUrl) };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * What only an install needs checked (issue #4): scope bot needs an app with a bot
 * (invalid_scope), and a private bot (bot_public off) is for its owner only — anyone else gets
 * a page and nothing is installed (SPEC §5.6 rule 6).
 */
function installProblem(deps: Deps, client: ValidatedClient, request: ConsentRequest, userId: string): AuthorizeOutcome | undefined {
  const install = request.install;
  if (!install?.bot) return undefined;
  if (client.app.botUserId === null) return errorRedirect(deps, client, 'invalid_scope', 'scope bot was requested, but this application has no bot');
  if (!client.app.botPublic && client.app.ownerId !== userId) {
    throw new PageError(403, 'This bot is private', `Only the owner of ${client.app.name} can add its bot to a server. Nothing was added.`);
  }
  return undefined;
}

/** The GET URL carrying the parameters as received, for coming back after sign-in. */
function rawAuthorizeUrl(params: RawAuthorizeParams): string {
  return authorizationResponseUri(
    '/app/oauth2/authorize',
    AUTHORIZE_PARAMS.map((name) => [name, params.values[name]] as const),
  );
}

export interface AuthorizeRequestInput {
  /** The parsed query string. */
  query: unknown;
  /** The signed-in person, if any. */
  userId: string | undefined;
  /** When they signed in to this session (OpenID Connect auth_time, max_age). */
  signedInAt?: number | undefined;
  /** The request's path and query exactly as received, to come back to after sign-in. */
  requestUrl: string;
}

/** The OpenID Connect step's result: an outcome that ends the request, or what the grant records. */
type OpenIdStep = { outcome: AuthorizeOutcome } | { outcome?: undefined; facts: OpenIdGrantFacts | undefined; formFields: [string, string][] };

/**
 * Issue #22: the OpenID Connect rules (prompt, max_age, login_hint, nonce, id_token_hint;
 * oidc/oidc.service.ts) for a code-flow request whose scope names openid. Every other request
 * passes through untouched. `requestUrl` is undefined for the consent form's POST.
 */
async function openIdStep(deps: Deps, client: ValidatedClient, source: unknown, userId: string | undefined, signedInAt: number | undefined, requestUrl: string | undefined): Promise<OpenIdStep> {
  const none: OpenIdStep = { facts: undefined, formFields: [] };
  if (client.plain || !(client.params.values.scope ?? '').split(' ').includes('openid')) return none;
  // OAUTH-CHECKLIST A19: a signed-out visitor signs in before anything else is checked, except
  // that prompt=none must answer login_required on the redirect (OpenID Connect Core §3.1.2.6).
  if (userId === undefined && requestUrl !== undefined && !(client.params.values.prompt ?? '').split(' ').includes('none')) {
    return { outcome: { kind: 'sign-in', next: withSignedInAfter(requestUrl, deps.clock.now()), loginHint: loginHintOf(source) } };
  }
  const checked = validateRequest(client);
  if (!checked.ok) return { outcome: errorRedirect(deps, client, checked.error, checked.description) };
  const session = userId !== undefined && signedInAt !== undefined ? { userId, signedInAt } : undefined;
  const gate = await openIdGate(deps, { source, scopes: checked.request.scopes, clientId: client.app.id, session, requestUrl });
  if (gate.kind === 'error') return { outcome: errorRedirect(deps, client, gate.error, gate.description) };
  if (gate.kind === 'sign-in') return { outcome: { kind: 'sign-in', next: gate.next, loginHint: gate.loginHint } };
  return { facts: gate.facts, formFields: gate.formFields };
}

/**
 * GET /app/oauth2/authorize (SPEC §2.1, issue #3): validate, make sure someone is signed in,
 * then either show the consent screen, or — when every requested scope was granted before and
 * `prompt` does not force the screen — issue a code at once.
 */
export async function startAuthorization(deps: Deps, input: AuthorizeRequestInput): Promise<AuthorizeOutcome> {
  const client = await validateClient(deps, input.query);
  const openId = await openIdStep(deps, client, input.query, input.userId, input.signedInAt, input.requestUrl);
  if (openId.outcome) return openId.outcome;
  if (input.userId === undefined) return { kind: 'sign-in', next: input.requestUrl };
  const checked = validateRequest(client);
  if (!checked.ok) return errorRedirect(deps, client, checked.error, checked.description);
  const request = checked.request;
  // Issue #23: webhook.incoming always shows its channel picker, whatever prompt says.
  if (wantsIncomingWebhook(request)) {
    const problem = incomingWebhookScopeProblem(request.scopes);
    if (problem) return errorRedirect(deps, client, 'invalid_scope', problem);
    return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl, input.userId) };
  }
  if (request.install !== undefined || request.plain) {
    // Issue #4: the consent for an install is never skipped, whatever prompt says.
    const problem = installProblem(deps, client, request, input.userId);
    if (problem) return problem;
    return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl, input.userId, openId.formFields) };
  }

  const remembered = await findConsentScopes(deps.db, input.userId, client.app.id);
  const covered = remembered !== undefined && coversScopes(remembered, request.scopes) && identityAssured(client.app, request.redirectUri);
  if (request.prompt === 'none') {
    // OpenID Connect Core §3.1.2.6: no screen may be shown, so missing consent is an error.
    if (!covered) return errorRedirect(deps, client, 'consent_required', 'the person has not yet authorized this application for these scopes');
    return issueCode(deps, client.app, request, input.userId, remembered, undefined, undefined, openId.facts);
  }
  if (covered && request.prompt !== 'consent') return issueCode(deps, client.app, request, input.userId, remembered, undefined, undefined, openId.facts);
  return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl, input.userId, openId.formFields) };
}

/**
 * Whether a remembered consent may skip the screen for this request (RFC 8252 §8.6, issue #21 §5):
 * only when the client's identity is assured. A confidential client proves it at the token
 * endpoint; a public client only through an https redirect URI, which its domain's owner alone
 * can receive. Any program on the machine can listen on a loopback port or claim a private-use
 * scheme, so a public client redirecting there is shown the consent screen every time.
 */
function identityAssured(app: Application, redirectUri: string): boolean {
  return app.confidential || redirectUri.startsWith('https://');
}

export interface AuthorizeDecisionInput {
  /** The parsed form body: the hidden fields of the consent form, never trusted. */
  body: unknown;
  userId: string | undefined;
  /** When they signed in to this session (OpenID Connect auth_time). */
  signedInAt?: number | undefined;
  decision: unknown;
}

/**
 * POST /app/oauth2/authorize: the consent form's answer. Everything is validated again exactly as
 * on GET; the route's CSRF check has already passed (OAUTH-CHECKLIST A14).
 */
export async function decideAuthorization(deps: Deps, input: AuthorizeDecisionInput): Promise<AuthorizeOutcome> {
  const client = await validateClient(deps, input.body);
  if (input.userId === undefined) return { kind: 'sign-in', next: rawAuthorizeUrl(client.params) };
  if (input.decision !== 'authorize' && input.decision !== 'cancel') {
    throw new PageError(400, 'That did not work', 'Choose Authorize or Cancel on the consent screen.');
  }
  const checked = validateRequest(client);
  if (!checked.ok) return errorRedirect(deps, client, checked.error, checked.description);
  const request = checked.request;
  // RFC 6749 §4.1.2.1, OAUTH-CHECKLIST A9: nothing is stored when the person declines.
  if (input.decision === 'cancel') {
    if (client.target === undefined) return { kind: 'declined', application: { id: client.app.id, name: client.app.name } };
    return errorRedirect(deps, client, 'access_denied', 'the person declined to authorize the application');
  }
  const problem = installProblem(deps, client, request, input.userId);
  if (problem) return problem;
  // Issue #23: the channel of webhook.incoming, checked now; the exchange creates the webhook.
  const webhookScopeProblem = incomingWebhookScopeProblem(request.scopes);
  if (webhookScopeProblem) return errorRedirect(deps, client, 'invalid_scope', webhookScopeProblem);
  const webhookChannelId = !request.plain && wantsIncomingWebhook(request) ? await chosenWebhookChannel(deps, input.userId, input.body) : undefined;
  const plan = request.install?.bot ? await botInstallPlan(deps, client.app, request, input.userId, input.body) : undefined;
  if (request.plain) return completePlainInstall(deps, client.app, request.install.commands, input.userId, plan);
  const openId = await openIdStep(deps, client, input.body, input.userId, input.signedInAt, undefined);
  if (openId.outcome) return openId.outcome;
  const remembered = await findConsentScopes(deps.db, input.userId, client.app.id);
  return issueCode(deps, client.app, request, input.userId, remembered, plan, webhookChannelId, openId.facts);
}

/**
 * The bot install the consent form asks for, never trusting the form (issue #4): the chosen
 * server must be one where the person holds Manage server now, and the granted permissions are
 * recomputed from what they hold there — requested ∩ held ∩ still ticked, minus Administrator.
 */
async function botInstallPlan(deps: Deps, app: Application, request: ConsentRequest, userId: string, body: unknown): Promise<ServerInstallPlan> {
  const install = request.install;
  const serverId = install?.serverId;
  if (install === undefined || serverId === undefined) throw new PageError(400, 'Choose a server', 'Choose the server to add the bot to, then press Authorize. Nothing was added.');
  const held = await memberPermissions(deps, serverId, userId);
  // A server the person is not in and one where they lack Manage server look alike.
  if (held === undefined || !has(held, Permission.MANAGE_SERVER)) {
    throw new PageError(403, 'You cannot add bots to that server', 'Adding a bot to a server needs the Manage server permission there. Nothing was added.');
  }
  const ticked = tickedPermissions(body !== null && typeof body === 'object' ? (body as Record<string, unknown>)['permission'] : undefined);
  return {
    application: { id: app.id, name: app.name, botUserId: app.botUserId as string },
    serverId,
    installerId: userId,
    granted: grantedPermissions(install.permissions, held, ticked),
    commands: install.commands,
  };
}

/**
 * Runs an authorization's writes in one transaction, all or nothing. Two installs of the same
 * bot into the same server at once can both find it not yet a member; the loser fails on the
 * primary key and runs once more, now finding it.
 */
async function runInstall(deps: Deps, writes: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  try {
    await deps.db.transaction().execute(writes);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    await deps.db.transaction().execute(writes);
  }
}

/** A plain install (no code): the writes, then the confirmation page naming the server. */
async function completePlainInstall(deps: Deps, app: Application, commands: boolean, userId: string, plan: ServerInstallPlan | undefined): Promise<AuthorizeOutcome> {
  await runInstall(deps, async (trx) => {
    if (plan) await writeServerInstall(deps, trx, plan);
    else if (commands) await writeUserInstall(deps, trx, app.id, userId);
  });
  const server = plan ? await getServer(deps, plan.serverId) : undefined;
  return {
    kind: 'installed',
    view: {
      application: { id: app.id, name: app.name },
      kind: plan ? 'bot' : 'user',
      ...(plan && server ? { server: { id: server.id, name: server.name } } : {}),
      granted: plan ? permissionLabelList(plan.granted) : [],
      commands,
    },
  };
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
 * permissions, and the redirect carries them (issue #4).
 */
async function issueCode(
  deps: Deps,
  app: Application,
  request: AuthorizationRequest,
  userId: string,
  remembered: string[] | undefined,
  plan?: ServerInstallPlan,
  webhookChannelId?: string,
  openId?: OpenIdGrantFacts,
): Promise<AuthorizeOutcome> {
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
  const rememberable = request.scopes.filter((s) => !INSTALL_SCOPES.includes(s) && s !== WEBHOOK_INCOMING_SCOPE);
  const consented = rememberable.length === 0 || (remembered !== undefined && coversScopes(remembered, rememberable));
  await runInstall(deps, async (trx) => {
    // Issue #21 §5: for an app that requires the code grant, the bot joins at the code exchange
    // (token.service.ts), so a code never exchanged adds nothing; the grant records the plan.
    if (plan && !app.botRequireCodeGrant) await writeServerInstall(deps, trx, plan);
    else if (!plan && request.install?.commands) await writeUserInstall(deps, trx, app.id, userId);
    await insertGrant(trx, {
      id: grantId,
      applicationId: app.id,
      userId,
      scopes: request.scopes,
      createdAt: now,
      serverId: plan?.serverId ?? null,
      permissions: plan ? plan.granted.toString() : null,
      webhookChannelId: webhookChannelId ?? null,
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
  });
  const server = plan ? { id: plan.serverId, permissions: plan.granted } : undefined;
  return { kind: 'redirect', location: authorizationCodeUri(request.redirectUri, code.plain, request.state, deps.config.baseUrl, server) };
}

async function consentView(deps: Deps, app: Application, request: ConsentRequest, requestUrl: string, userId: string, openIdFields: [string, string][] = []): Promise<ConsentView> {
  const owner = await getPerson(deps, app.ownerId);
  const install = request.install ? await installConsent(deps, request.install, userId) : undefined;
  const redirect = request.plain ? request.redirect : request;
  return {
    application: { id: app.id, name: app.name, description: app.description, ownerUsername: owner?.username ?? null },
    scopes: request.scopes.filter((name) => install === undefined || !INSTALL_SCOPES.includes(name)).map((name) => ({ name, description: describeScope(name) })),
    fields: [...requestFields(request).flatMap(([name, value]) => (value === undefined ? [] : [[name, value] as [string, string]])), ...openIdFields],
    // A plain install sends nobody anywhere, even when the link named a redirect URI.
    redirectUri: request.plain ? undefined : redirect?.redirectUri,
    // The exact URL received on GET; rebuilt from the validated request otherwise.
    authorizeUrl: requestUrl.startsWith('/app/oauth2/authorize') ? requestUrl : authorizeUrl(request),
    ...(install ? { install } : {}),
    ...(wantsIncomingWebhook(request) ? { webhook: await webhookConsent(deps, userId) } : {}),
  };
}

/**
 * The install part of the consent screen (issue #4): for a bot, the servers where the person
 * holds Manage server (owners and Administrators hold it), the chosen one — the link's server_id
 * when it is among them, else the only one — and the requested permissions marked against what
 * the person holds there.
 */
async function installConsent(deps: Deps, install: NonNullable<ConsentRequest['install']>, userId: string): Promise<InstallConsent> {
  if (!install.bot) {
    return { kind: 'user', commands: install.commands, servers: [], chosenServer: undefined, locked: false, lockedUnavailable: false, permissions: [] };
  }
  const eligible = (await listServersForPerson(deps, userId)).filter((s) => has(s.permissions, Permission.MANAGE_SERVER));
  const named = install.serverId === undefined ? undefined : eligible.find((s) => s.id === install.serverId);
  const chosen = named ?? (!install.lockServer && eligible.length === 1 ? eligible[0] : undefined);
  return {
    kind: 'bot',
    commands: install.commands,
    servers: eligible.map((s) => ({ id: s.id, name: s.name })),
    chosenServer: chosen ? { id: chosen.id, name: chosen.name } : undefined,
    locked: install.lockServer,
    lockedUnavailable: install.lockServer && named === undefined,
    permissions: describeRequestedPermissions(install.permissions, chosen?.permissions),
  };
}

/** Every app the person has authorized and not deauthorized (OAUTH-CHECKLIST A18). */
export async function authorizedApps(deps: Deps, userId: string): Promise<AuthorizedApp[]> {
  const rows = await listAuthorizedApps(deps.db, userId);
  return rows.map((r) => ({
    ...r,
    scopes: formatScopes(r.scopes)
      .split(' ')
      .filter(Boolean)
      .map((name) => ({ name, description: describeScope(name) })),
  }));
}

/**
 * Deauthorize (issue #3: same effect as revocation): every grant the person gave the app ends —
 * its access and refresh tokens stop working at once — and the remembered consent is forgotten,
 * so the next request shows the screen again. Unknown ids change nothing.
 */
export async function deauthorizeApp(deps: Deps, userId: string, applicationId: string): Promise<void> {
  if (!isSnowflake(applicationId)) return;
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => revokeAllGrantsOf(trx, userId, applicationId, now));
}

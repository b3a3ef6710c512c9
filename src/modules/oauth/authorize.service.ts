import { PageError } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import { issueSecret } from '../../core/secrets.js';
import type { Deps } from '../../services.js';
import { getPerson } from '../accounts/accounts.service.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import type { Application } from '../applications/applications.js';
import {
  AUTHORIZE_PARAMS,
  authorizationCodeUri,
  authorizationErrorUri,
  authorizationResponseUri,
  authorizeUrl,
  checkClientId,
  CODE_LIFETIME_MS,
  readAuthorizeParams,
  requestFields,
  resolveRedirectUri,
  unknownApplication,
  validateAuthorizeParams,
  type AuthorizationRequest,
  type AuthorizedApp,
  type ConsentView,
  type PageProblem,
  type RawAuthorizeParams,
  type RedirectTarget,
} from './authorize.js';
import { insertCode } from './codes.repository.js';
import { findConsentScopes, listAuthorizedApps, saveConsent } from './consents.repository.js';
import { insertGrant, revokeAllGrantsOf } from './grants.repository.js';
import { coversScopes, describeScope, formatScopes } from './scopes.js';

/** What the authorize route does next; it never decides anything itself. */
export type AuthorizeOutcome =
  /** To the client's redirect URI: a code, or an error (RFC 6749 §4.1.2, §4.1.2.1). */
  | { kind: 'redirect'; location: string }
  /** To sign-in, coming back to `next` afterwards (OAUTH-CHECKLIST A19: authenticate before redirecting). */
  | { kind: 'sign-in'; next: string }
  | { kind: 'consent'; view: ConsentView };

interface ValidatedClient {
  app: Application;
  params: RawAuthorizeParams;
  target: RedirectTarget;
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
  const redirect = resolveRedirectUri(params, app.redirectUris);
  if (!redirect.ok) throw pageError(redirect.problem);
  return { app, params, target: redirect.target };
}

/** State to echo on an error: as sent, and only when sent exactly once. */
function echoedState(params: RawAuthorizeParams): string | undefined {
  return params.repeated.includes('state') ? undefined : params.values.state;
}

function errorRedirect(deps: Deps, client: ValidatedClient, error: Parameters<typeof authorizationErrorUri>[1], description: string): AuthorizeOutcome {
  return { kind: 'redirect', location: authorizationErrorUri(client.target.redirectUri, error, description, echoedState(client.params), deps.config.baseUrl) };
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
  /** The request's path and query exactly as received, to come back to after sign-in. */
  requestUrl: string;
}

/**
 * GET /app/oauth2/authorize (SPEC §2.1, issue #3): validate, make sure someone is signed in,
 * then either show the consent screen, or — when every requested scope was granted before and
 * `prompt` does not force the screen — issue a code at once.
 */
export async function startAuthorization(deps: Deps, input: AuthorizeRequestInput): Promise<AuthorizeOutcome> {
  const client = await validateClient(deps, input.query);
  if (input.userId === undefined) return { kind: 'sign-in', next: input.requestUrl };
  const checked = validateAuthorizeParams(client.params, client.app.id, client.target, client.app);
  if (!checked.ok) return errorRedirect(deps, client, checked.error, checked.description);
  const request = checked.request;

  const remembered = await findConsentScopes(deps.db, input.userId, client.app.id);
  const covered = remembered !== undefined && coversScopes(remembered, request.scopes);
  if (request.prompt === 'none') {
    // OpenID Connect Core §3.1.2.6: no screen may be shown, so missing consent is an error.
    if (!covered) return errorRedirect(deps, client, 'consent_required', 'the person has not yet authorized this application for these scopes');
    return issueCode(deps, client.app, request, input.userId, remembered);
  }
  if (covered && request.prompt !== 'consent') return issueCode(deps, client.app, request, input.userId, remembered);
  return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl) };
}

export interface AuthorizeDecisionInput {
  /** The parsed form body: the hidden fields of the consent form, never trusted. */
  body: unknown;
  userId: string | undefined;
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
  const checked = validateAuthorizeParams(client.params, client.app.id, client.target, client.app);
  if (!checked.ok) return errorRedirect(deps, client, checked.error, checked.description);
  // RFC 6749 §4.1.2.1, OAUTH-CHECKLIST A9: nothing is stored when the person declines.
  if (input.decision === 'cancel') return errorRedirect(deps, client, 'access_denied', 'the person declined to authorize the application');
  const remembered = await findConsentScopes(deps.db, input.userId, client.app.id);
  return issueCode(deps, client.app, checked.request, input.userId, remembered);
}

/**
 * One authorization (SPEC §3, §8; OAUTH-CHECKLIST C1, C8, B6): a grant and its code — 256 random
 * bits, stored only as a SHA-256 hash, bound to the app, the redirect URI, the scopes, the PKCE
 * challenge and the person, valid 10 minutes — and the remembered consent, all or nothing.
 */
async function issueCode(deps: Deps, app: Application, request: AuthorizationRequest, userId: string, remembered: string[] | undefined): Promise<AuthorizeOutcome> {
  const now = deps.clock.now();
  const code = issueSecret(deps.random, 'authorizationCode');
  const grantId = deps.ids.next();
  const consented = remembered !== undefined && coversScopes(remembered, request.scopes);
  await deps.db.transaction().execute(async (trx) => {
    await insertGrant(trx, { id: grantId, applicationId: app.id, userId, scopes: request.scopes, createdAt: now, serverId: null, permissions: null });
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
    if (!consented) {
      // Remember the union, so asking again for any part of it skips the screen.
      const union = formatScopes([...(remembered ?? []), ...request.scopes]).split(' ');
      await saveConsent(trx, userId, app.id, union, now);
    }
  });
  return { kind: 'redirect', location: authorizationCodeUri(request.redirectUri, code.plain, request.state, deps.config.baseUrl) };
}

async function consentView(deps: Deps, app: Application, request: AuthorizationRequest, requestUrl: string): Promise<ConsentView> {
  const owner = await getPerson(deps, app.ownerId);
  return {
    application: { id: app.id, name: app.name, description: app.description, ownerUsername: owner?.username ?? null },
    scopes: request.scopes.map((name) => ({ name, description: describeScope(name) })),
    fields: requestFields(request).flatMap(([name, value]) => (value === undefined ? [] : [[name, value] as [string, string]])),
    redirectUri: request.redirectUri,
    // The exact URL received on GET; rebuilt from the validated request otherwise.
    authorizeUrl: requestUrl.startsWith('/app/oauth2/authorize') ? requestUrl : authorizeUrl(request),
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

import type { Deps } from '../../deps.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import type { Application } from '../applications/applications.js';
import { openIdGate, type OpenIdGrantFacts } from '../oidc/oidc.service.js';
import { loginHintOf, withSignedInAfter } from '../oidc/oidc-request.js';
import {
  AUTHORIZE_PARAMS,
  checkClientId,
  isPlainInstall,
  readAuthorizeParams,
  resolveRedirectUri,
  unknownApplication,
  validateAuthorizeParams,
  validatePlainInstall,
  type AuthorizeErrorCode,
  type ConsentRequest,
  type PageProblem,
  type RawAuthorizeParams,
  type RedirectTarget,
} from './authorize.js';
import type { ConsentView, InstalledView } from './authorize.page.js';
import { authorizationErrorUri, authorizationResponseUri } from './authorize-response.js';
import { sessionMethods } from '../mfa/mfa.service.js';
import { resolveResource, type ResourceTarget } from '../resource-servers/resource-servers.service.js';
import { isUrlClientId } from '../client-metadata/client-metadata.js';
import { metadataDocumentUrl, resolveMetadataClient } from '../client-metadata/client-metadata.service.js';

/**
 * The authorization endpoint's checks, one step each (authorize.service.ts runs them in order):
 * the client and its redirect URI, the request, what only installs need, and OpenID Connect's rules.
 */

/** A request refused with a page rather than a redirect: the route shows it as an error page. */
export interface RefusedPage {
  kind: 'refused';
  problem: PageProblem;
}

export function refusedPage(status: number, title: string, detail: string): RefusedPage {
  return { kind: 'refused', problem: { status, title, detail } };
}

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
  | { kind: 'declined'; application: { id: string; name: string } }
  /** Refused with an error page, never a redirect (RFC 6749 §4.1.2.1; issue #4). */
  | RefusedPage;

export interface ValidatedClient {
  app: Application;
  params: RawAuthorizeParams;
  /** Undefined only for a plain install without redirect_uri. */
  target: RedirectTarget | undefined;
  /** A plain install link (no response_type, only install scopes): no code, no redirect. */
  plain: boolean;
  /** RFC 8707 (issue #41): what `resource` names, checked by validateRequest. */
  resource: ResourceTarget;
}

/**
 * RFC 6749 §4.1.2.1, OAUTH-CHECKLIST A3/A4/A7: the client and its redirect URI come first, and
 * any failure there is a page, never a redirect.
 */
export async function validateClient(deps: Deps, source: unknown): Promise<ValidatedClient | RefusedPage> {
  const params = readAuthorizeParams(source);
  const client = checkClientId(params);
  if (!client.ok) return { kind: 'refused', problem: client.problem };
  const app = await lookUpClient(deps, client.clientId);
  if (!app) return { kind: 'refused', problem: unknownApplication() };
  if ('kind' in app) return app;
  // Issue #39: a client the operator disabled is not a valid client identifier now, so, as for an
  // unknown one (RFC 6749 §4.1.2.1), the person is told on a page and never redirected: the app
  // was stopped, maybe for abuse, and its redirect URI is not sent anyone (docs/oauth.md).
  if (app.disabledAt !== null) {
    return refusedPage(403, `${app.name} is unavailable`, `The operator of this service has disabled ${app.name}, so it cannot ask for access or be added to servers now. Nothing was shared.`);
  }
  const plain = isPlainInstall(params);
  // Issue #4: a plain install sends nothing back, so it needs no redirect URI; one that is sent
  // must still be registered, as in the code flow.
  const named = params.values.redirect_uri !== undefined || params.repeated.includes('redirect_uri');
  let target: RedirectTarget | undefined;
  if (!plain || named) {
    const redirect = resolveRedirectUri(params, app.redirectUris);
    if (!redirect.ok) return { kind: 'refused', problem: redirect.problem };
    target = redirect.target;
  }
  // Issue #4, SPEC §4 notes: with "Require full OAuth2 authorization" a bot install link must
  // carry redirect_uri and response_type=code, else it is refused as a page.
  if (app.botRequireCodeGrant && requestsBot(params) && (plain || !target?.redirectUriSent)) {
    return refusedPage(
      400,
      'This install link is not complete',
      `${app.name} requires full OAuth2 authorization: its install link must include redirect_uri and response_type=code. If you followed a link from the app, tell its developer. Nothing was added.`,
    );
  }
  // RFC 8707: one resource per request here; several are refused by validateRequest (invalid_target).
  const resource: ResourceTarget = params.repeated.includes('resource')
    ? { kind: 'invalid', description: 'send one resource parameter: a token here is for one resource' }
    : await resolveResource(deps, params.values.resource);
  return { app, params, target, plain, resource };
}

/**
 * The application a client_id names: an application id, or (issue #41 §3) a client ID metadata
 * document's URL, fetched and checked here. A document that cannot be verified is a page, never a
 * redirect (RFC 6749 §4.1.2.1: its redirect URIs are not known to be the client's). An application
 * that stands for a document answers to its URL only, so the document is what is trusted.
 */
async function lookUpClient(deps: Deps, clientId: string): Promise<Application | RefusedPage | undefined> {
  if (isUrlClientId(clientId)) {
    const resolved = await resolveMetadataClient(deps, clientId);
    if (resolved.ok) return resolved.value;
    return refusedPage(400, 'This application could not be verified', `${capitalise(resolved.description)}. If you followed a link from an application, tell its developer. Nothing was shared.`);
  }
  const app = await findApplicationByClientId(deps, clientId);
  if (app && (await metadataDocumentUrl(deps, app)) !== undefined) return undefined;
  return app;
}

/** Whether the scope parameter names bot, before the scope is validated. */
function requestsBot(params: RawAuthorizeParams): boolean {
  return (params.values.scope ?? '').split(' ').includes('bot');
}

/** The request validated as what the link is: a plain install, or the code flow. */
export function validateRequest(client: ValidatedClient): { ok: true; request: ConsentRequest } | { ok: false; error: AuthorizeErrorCode; description: string } {
  if (client.plain) return validatePlainInstall(client.params, client.app.id, client.target);
  // RFC 8707 §2: an unknown, malformed or repeated resource is invalid_target, on the redirect.
  if (client.resource.kind === 'invalid') return { ok: false, error: 'invalid_target', description: client.resource.description };
  // The repeated-parameter check below is RFC 6749's; resource's own answer came first.
  const params = client.params.repeated.includes('resource') ? { ...client.params, repeated: client.params.repeated.filter((n) => n !== 'resource') } : client.params;
  const resource = client.resource.kind === 'resource' ? client.resource.server : undefined;
  // validateClient resolved the target for every link that is not a plain install.
  // A metadata document's client keeps its URL as client_id in the consent form (issue #41 §3).
  const sent = client.params.values.client_id;
  const clientId = sent !== undefined && isUrlClientId(sent) ? sent : client.app.id;
  return validateAuthorizeParams(params, clientId, client.target as RedirectTarget, client.app, resource);
}

/** State to echo on an error: as sent, and only when sent exactly once. */
function echoedState(params: RawAuthorizeParams): string | undefined {
  return params.repeated.includes('state') ? undefined : params.values.state;
}

/**
 * An error of a request whose client and redirect URI are trusted: redirected to the app
 * (RFC 6749 §4.1.2.1), or — for a plain install without redirect_uri — shown as a page.
 */
export function errorRedirect(deps: Deps, client: ValidatedClient, error: AuthorizeErrorCode, description: string): AuthorizeOutcome {
  if (client.target === undefined) return refusedPage(400, 'This install link is not valid', `${capitalise(description)}. If you followed a link from an application, tell its developer.`);
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
export function installProblem(deps: Deps, client: ValidatedClient, request: ConsentRequest, userId: string): AuthorizeOutcome | undefined {
  const install = request.install;
  if (!install?.bot) return undefined;
  if (client.app.botUserId === null) return errorRedirect(deps, client, 'invalid_scope', 'scope bot was requested, but this application has no bot');
  if (!client.app.botPublic && client.app.ownerId !== userId) {
    return refusedPage(403, 'This bot is private', `Only the owner of ${client.app.name} can add its bot to a server. Nothing was added.`);
  }
  return undefined;
}

/** The GET URL carrying the parameters as received, for coming back after sign-in. */
export function rawAuthorizeUrl(params: RawAuthorizeParams): string {
  return authorizationResponseUri(
    '/app/oauth2/authorize',
    AUTHORIZE_PARAMS.map((name) => [name, params.values[name]] as const),
  );
}

/** The OpenID Connect step's result: an outcome that ends the request, or what the grant records. */
type OpenIdStep = { outcome: AuthorizeOutcome } | { outcome?: undefined; facts: OpenIdGrantFacts | undefined; formFields: [string, string][] };

/**
 * Issue #22: the OpenID Connect rules (prompt, max_age, login_hint, nonce, id_token_hint;
 * oidc/oidc.service.ts) for a code-flow request whose scope names openid. Every other request
 * passes through untouched. `requestUrl` is undefined for the consent form's POST.
 */
export async function openIdStep(
  deps: Deps,
  client: ValidatedClient,
  source: unknown,
  browser: { userId: string | undefined; signedInAt: number | undefined; sessionToken: string | undefined },
  requestUrl: string | undefined,
): Promise<OpenIdStep> {
  const { userId, signedInAt } = browser;
  const none: OpenIdStep = { facts: undefined, formFields: [] };
  // A resource server's scopes are its API's, even one named openid (issue #41).
  if (client.plain || client.resource.kind === 'resource' || !(client.params.values.scope ?? '').split(' ').includes('openid')) return none;
  // OAUTH-CHECKLIST A19: a signed-out visitor signs in before anything else is checked, except
  // that prompt=none must answer login_required on the redirect (OpenID Connect Core §3.1.2.6).
  if (userId === undefined && requestUrl !== undefined && !(client.params.values.prompt ?? '').split(' ').includes('none')) {
    return { outcome: { kind: 'sign-in', next: withSignedInAfter(requestUrl, deps.clock.now()), loginHint: loginHintOf(source) } };
  }
  // Issue #36 §4: a signed-out visitor reaches this point only with prompt=none, where OpenID
  // Connect Core §3.1.2.6 requires the answer on the redirect; A19 still holds for any other URI:
  // only one the app registered character for character (no loopback port variant) is used.
  if (userId === undefined && !(client.target !== undefined && client.app.redirectUris.includes(client.target.redirectUri))) {
    return {
      outcome: refusedPage(400, 'Sign in first', `${client.app.name} asked to sign you in without showing any page (prompt=none), but you are not signed in. Sign in, then try again from the application.`),
    };
  }
  const checked = validateRequest(client);
  if (!checked.ok) return { outcome: errorRedirect(deps, client, checked.error, checked.description) };
  // Issue #38 §4: the session's amr travels into the grant's ID tokens.
  const session = userId !== undefined && signedInAt !== undefined ? { userId, signedInAt, amr: await sessionMethods(deps, browser.sessionToken) } : undefined;
  const gate = await openIdGate(deps, { source, scopes: checked.request.scopes, clientId: client.app.id, session, requestUrl });
  if (gate.kind === 'error') return { outcome: errorRedirect(deps, client, gate.error, gate.description) };
  if (gate.kind === 'sign-in') return { outcome: { kind: 'sign-in', next: gate.next, loginHint: gate.loginHint } };
  return { facts: gate.facts, formFields: gate.formFields };
}

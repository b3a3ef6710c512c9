import type { Transaction } from 'kysely';
import type { Acting, Who } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors, ApiError } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { getPerson, signOut } from '../accounts/accounts.service.js';
import type { Application } from '../applications/applications.js';
import { getManagedApplication } from '../applications/applications.service.js';
import { validateRedirectUri } from '../applications/redirect-uris.js';
import type { BearerToken } from '../oauth/identity.service.js';
import { INSTALL_SCOPES } from '../../core/scopes.js';
import { idTokenClaims, profileClaims, type ClaimsPerson, type IdTokenClaims } from './id-token.js';
import { DEFAULT_SIGNING_ALG, ID_TOKEN_LIFETIME_MS, isSigningAlg, SIGNING_ALGS, signJwt, verifyOwnJwt, type SigningAlg } from './oidc-keys.service.js';
import { findOidcClient, findOidcGrant, insertOidcGrant, saveOidcClient, type OidcClientSettings } from './oidc.repository.js';
import { ACR_VALUES_SUPPORTED, DISCOVERY_PATH } from './discovery.js';
import { needsFreshSignIn, readOidcRequest, withSignedInAfter, type OidcErrorCode } from './oidc-request.js';
import { applicationIdOf, oauthClientId } from '../client-metadata/client-metadata.service.js';

/** Whether a request or grant is an OpenID Connect one (Core §3.1.2.1: scope contains openid). */
export function isOpenIdScope(scopes: readonly string[]): boolean {
  return scopes.includes('openid');
}

/** The signed-in session an authorization request arrives with. */
export interface AuthorizeSession {
  userId: string;
  /** When the person signed in (Core §2 auth_time). */
  signedInAt: number;
  /** How they signed in (Core §2 amr; RFC 8176): mfa/mfa.service.ts sessionMethods. */
  amr: readonly string[];
}

/** What the grant of an `openid` authorization records for its ID tokens. */
export interface OpenIdGrantFacts {
  nonce: string | null;
  authTime: number;
  amr: string[];
  acr: string | null;
}

/** Core §3.1.2.1 acr_values is voluntary: the first asked value this sign-in meets, else none. */
function metAcr(asked: readonly string[], amr: readonly string[]): string | null {
  if (!amr.includes('mfa')) return null;
  return asked.find((value) => ACR_VALUES_SUPPORTED.includes(value)) ?? null;
}

function factsOf(request: { nonce: string | undefined; acrValues: string[] }, session: AuthorizeSession): OpenIdGrantFacts {
  return { nonce: request.nonce ?? null, authTime: session.signedInAt, amr: [...session.amr], acr: metAcr(request.acrValues, session.amr) };
}

export type OpenIdGate =
  /** Not an openid request, or every OpenID rule is met: carry on with the OAuth flow. */
  | { kind: 'continue'; facts: OpenIdGrantFacts | undefined; formFields: [string, string][] }
  | { kind: 'error'; error: OidcErrorCode | 'login_required' | 'interaction_required'; description: string }
  /** Sign in (again) first, then come back to `next`; `loginHint` prefills the username. */
  | { kind: 'sign-in'; next: string; loginHint: string | undefined };

/**
 * The OpenID Connect rules of an authorization request (issue #22 §2; Core §3.1.2.1–3.1.2.6),
 * applied only when the validated scopes include `openid`. `requestUrl` is the GET URL to come
 * back to after a sign-in; a consent form POST passes none and is not re-checked for freshness
 * (its GET was).
 */
export async function openIdGate(
  deps: Deps,
  input: { source: unknown; scopes: readonly string[]; clientId: string; session: AuthorizeSession | undefined; requestUrl: string | undefined },
): Promise<OpenIdGate> {
  if (!isOpenIdScope(input.scopes)) return { kind: 'continue', facts: undefined, formFields: [] };
  const read = readOidcRequest(input.source);
  if (!read.ok) return { kind: 'error', error: read.error, description: read.description };
  const request = read.request;
  const now = deps.clock.now();
  const formFields: [string, string][] = request.nonce === undefined ? [] : [['nonce', request.nonce]];
  // Issue #38 §4: the consent form's POST reads acr_values again, as it does the nonce.
  if (request.acrValues.length > 0) formFields.push(['acr_values', request.acrValues.join(' ')]);

  if (request.prompts.has('none')) {
    // Core §3.1.2.6: with prompt=none nothing may be shown.
    if (input.session === undefined) return { kind: 'error', error: 'login_required', description: 'the person is not signed in' };
    if (input.scopes.some((s) => INSTALL_SCOPES.includes(s))) return { kind: 'error', error: 'interaction_required', description: 'an install always needs the person to choose on the consent screen' };
    if (request.idTokenHint !== undefined) {
      const hint = await verifyOwnJwt(deps, request.idTokenHint);
      if (!hint || !(audienceIncludes(hint.aud, input.clientId) || audienceIncludes(hint.aud, await oauthClientId(deps, input.clientId)))) return { kind: 'error', error: 'invalid_request', description: 'id_token_hint is not an ID token this server issued to this application' };
      // Core §3.1.2.1: the hint names who the app expects; someone else is signed in.
      if (hint.sub !== input.session.userId) return { kind: 'error', error: 'login_required', description: 'the signed-in person is not the one id_token_hint names' };
    }
    if (request.maxAge !== undefined && now - input.session.signedInAt > request.maxAge * 1000) {
      return { kind: 'error', error: 'login_required', description: 'the sign-in is older than max_age allows' };
    }
    return { kind: 'continue', facts: factsOf(request, input.session), formFields };
  }

  if (input.requestUrl !== undefined && (input.session === undefined || needsFreshSignIn(request, input.session.signedInAt, now))) {
    return { kind: 'sign-in', next: withSignedInAfter(input.requestUrl, now), loginHint: request.loginHint };
  }
  if (input.session === undefined) return { kind: 'sign-in', next: input.requestUrl ?? '/', loginHint: request.loginHint };
  return { kind: 'continue', facts: factsOf(request, input.session), formFields };
}

function audienceIncludes(aud: unknown, clientId: string): boolean {
  return aud === clientId || (Array.isArray(aud) && aud.includes(clientId));
}

/** Records an openid grant's facts, in the transaction that creates the grant and its code. */
export async function recordOpenIdGrant(trx: Transaction<Database>, grantId: string, facts: OpenIdGrantFacts): Promise<void> {
  await insertOidcGrant(trx, { grantId, authTime: facts.authTime, nonce: facts.nonce, amr: facts.amr, acr: facts.acr });
}

function claimsPerson(person: { id: string; username: string; name: string; avatarUrl: string | null; email: string | null; emailVerified: boolean }): ClaimsPerson {
  return { id: person.id, username: person.username, name: person.name, avatarUrl: person.avatarUrl, email: person.email, emailVerified: person.emailVerified };
}

/** An app's OpenID settings, with the defaults for an app that never saved any. */
export async function openIdClientSettings(deps: Deps, applicationId: string): Promise<OidcClientSettings & { idTokenAlg: SigningAlg }> {
  const stored = await findOidcClient(deps.db, applicationId);
  const alg = stored && isSigningAlg(stored.idTokenAlg) ? stored.idTokenAlg : DEFAULT_SIGNING_ALG;
  return { idTokenAlg: alg, postLogoutRedirectUris: stored?.postLogoutRedirectUris ?? [] };
}

/**
 * The ID token of a token response (issue #22 §1): for the code exchange (`withNonce`) and for
 * a refresh of an openid grant (same sub and auth_time; Core §12.2). Undefined when the scopes
 * lack openid or the grant predates its facts.
 */
export async function idTokenFor(
  deps: Deps,
  input: { clientId: string; grantId: string; userId: string; scopes: readonly string[]; accessToken: string; withNonce: boolean; now: number },
): Promise<string | undefined> {
  if (!isOpenIdScope(input.scopes)) return undefined;
  const [facts, person, settings, audience] = await Promise.all([
    findOidcGrant(deps.db, input.grantId),
    getPerson(deps, input.userId),
    openIdClientSettings(deps, input.clientId),
    // Issue #41 §3: a metadata-document client is known by its URL, the ID token's audience (Core §2: aud is the client_id).
    oauthClientId(deps, input.clientId),
  ]);
  if (!facts || !person) return undefined;
  const claims = idTokenClaims({
    issuer: deps.config.baseUrl,
    clientId: audience,
    person: claimsPerson(person),
    scopes: input.scopes,
    issuedAt: input.now,
    lifetimeMs: ID_TOKEN_LIFETIME_MS,
    authTime: facts.authTime,
    nonce: input.withNonce ? facts.nonce : null,
    accessToken: input.accessToken,
    amr: facts.amr,
    acr: facts.acr,
  });
  return signJwt(deps, settings.idTokenAlg, claims);
}

/**
 * UserInfo (Core §5.3; issue #22 §5): `sub` and the claims the token's scopes allow. The caller
 * (requireBearer with scope openid) has answered 401/403 with RFC 6750 challenges already.
 */
export async function userInfo(deps: Deps, bearer: BearerToken): Promise<IdTokenClaims & { sub: string }> {
  const person = await getPerson(deps, bearer.userId);
  if (!person) throw ApiErrors.unauthorized();
  return { sub: person.id, ...profileClaims(claimsPerson(person), bearer.scopes) };
}

/** RP-Initiated Logout 1.0 §2–§3: what the end-session endpoint does next. */
export type EndSessionOutcome =
  /** Sign out now (a valid id_token_hint for the signed-in person, or confirmed), then go to `location` or the signed-out page. */
  | { kind: 'sign-out'; location: string | undefined }
  /** Ask first (§2: no or mismatching hint); the form re-sends `fields`. */
  | { kind: 'confirm'; fields: [string, string][]; applicationName: string | undefined }
  /**
   * Nobody is signed in: the signed-out page, with a link back to the app's registered URI when
   * there is one (issue #36 §4: a signed-out visitor never leaves for an app's URI without a page
   * of ours first; RP-Initiated Logout does not require the redirect).
   */
  | { kind: 'done'; returnTo: { url: string; applicationName: string } | undefined };

export interface EndSessionInput {
  idTokenHint: string | undefined;
  clientId: string | undefined;
  postLogoutRedirectUri: string | undefined;
  state: string | undefined;
  /** The browser's session cookie: ended when the outcome is to sign out. */
  sessionToken: string | undefined;
  /** The person already confirmed on our own page. */
  confirmed: boolean;
}

/**
 * GET /app/oauth2/logout (issue #22 §6). post_logout_redirect_uri must be registered by the app
 * the hint (or client_id) names, compared byte for byte; `state` is appended. A bad value is a
 * page, never a redirect (§3: the OP must not redirect to an unregistered URI). Issue #36 §6: a
 * post_logout_redirect_uri with neither hint nor client_id cannot be tied to any app, so it is
 * set aside: the person is asked, signed out, and stays on our signed-out page. `acting` is the
 * browser's request (its signed-in person, or nobody); a 'sign-out' outcome has ended its session
 * already (audited as session.ended: accounts/sessions.service.ts).
 */
export async function endSession(deps: Deps, acting: Acting<Who>, input: EndSessionInput, findApp: (id: string) => Promise<Application | undefined>): Promise<EndSessionOutcome> {
  const userId = acting.actor.kind === 'person' ? acting.actor.id : undefined;
  let clientId = input.clientId;
  let hintSub: string | undefined;
  if (input.idTokenHint !== undefined) {
    const hint = await verifyOwnJwt(deps, input.idTokenHint);
    if (!hint || typeof hint.iss !== 'string' || hint.iss !== deps.config.baseUrl) throw new ApiError(400, 0, 'id_token_hint is not an ID token this server issued');
    const aud = Array.isArray(hint.aud) ? hint.aud[0] : hint.aud;
    if (clientId !== undefined && !audienceIncludes(hint.aud, clientId)) throw new ApiError(400, 0, 'client_id does not match the audience of id_token_hint');
    clientId = aud;
    hintSub = typeof hint.sub === 'string' ? hint.sub : undefined;
  }
  let location: string | undefined;
  let app: Application | undefined;
  // A metadata-document client's ID tokens name its URL (oauthClientId): the app is the document's.
  if (clientId !== undefined) app = await findApp(await applicationIdOf(deps, clientId));
  // Only a URI some named client could have registered is considered at all.
  const returnUri = clientId === undefined ? undefined : input.postLogoutRedirectUri;
  if (returnUri !== undefined) {
    // §3: without the app there is no list to check the URI against.
    if (!app) throw new ApiError(400, 0, 'post_logout_redirect_uri needs id_token_hint or client_id naming the application that registered it');
    const settings = await openIdClientSettings(deps, app.id);
    // Exact string comparison, loopback included: RFC 8252 §7.3's any-port rule is for native
    // apps' redirect URIs, where a code is expected; a sign-out return gains nothing from it.
    if (!settings.postLogoutRedirectUris.includes(returnUri)) {
      throw new ApiError(400, 0, 'post_logout_redirect_uri is not registered for this application');
    }
    const url = new URL(returnUri);
    if (input.state !== undefined) url.searchParams.set('state', input.state);
    location = url.toString();
  }
  if (userId === undefined) return { kind: 'done', returnTo: location !== undefined && app ? { url: location, applicationName: app.name } : undefined };
  if (input.confirmed || (hintSub !== undefined && hintSub === userId)) {
    await signOut(deps, acting, input.sessionToken);
    return { kind: 'sign-out', location };
  }
  const fields: [string, string][] = [];
  if (clientId !== undefined) fields.push(['client_id', clientId]);
  if (returnUri !== undefined) fields.push(['post_logout_redirect_uri', returnUri]);
  if (returnUri !== undefined && input.state !== undefined) fields.push(['state', input.state]);
  return { kind: 'confirm', fields, applicationName: app?.name };
}

/**
 * The developer portal's and the CLI's save (issue #22 §3, §6): algorithm and post-logout URIs,
 * validated like redirect URIs. Only who may manage the app may (its owner, the operator): anyone
 * else is told the app is unknown (applications.service.ts getManagedApplication, 404 10002).
 */
export async function updateOpenIdClientSettings(
  deps: Deps,
  acting: Acting<Actor>,
  applicationId: string,
  input: { idTokenAlg?: string | undefined; postLogoutRedirectUris?: string[] | undefined },
): Promise<OidcClientSettings> {
  const app = await getManagedApplication(deps, acting.actor, applicationId);
  const current = await openIdClientSettings(deps, app.id);
  const alg = input.idTokenAlg ?? current.idTokenAlg;
  if (!isSigningAlg(alg)) throw invalidForm('idTokenAlg', `The ID token algorithm must be one of ${SIGNING_ALGS.join(', ')}.`);
  const uris = input.postLogoutRedirectUris ?? current.postLogoutRedirectUris;
  const unique = [...new Set(uris.map((u) => u.trim()).filter(Boolean))];
  if (unique.length > 10) throw invalidForm('postLogoutRedirectUris', 'At most 10 post-logout redirect URIs.');
  for (const uri of unique) {
    const problem = validateRedirectUri(uri, app.confidential);
    if (problem) throw invalidForm('postLogoutRedirectUris', `${uri}: ${problem}`);
  }
  const settings = { idTokenAlg: alg, postLogoutRedirectUris: unique };
  await saveOidcClient(deps.db, app.id, settings, deps.clock.now());
  return settings;
}

function invalidForm(field: string, message: string): ApiError {
  return new ApiError(400, 50035, 'Invalid Form Body', { [field]: { _errors: [{ code: 'INVALID', message }] } });
}

/** What the developer portal shows about an app's OpenID Connect use (issue #22 §7). */
export async function openIdPortalView(deps: Deps, applicationId: string): Promise<{ appId: string; issuer: string; discoveryUrl: string; idTokenAlg: string; postLogoutRedirectUris: string[] }> {
  const settings = await openIdClientSettings(deps, applicationId);
  return {
    appId: applicationId,
    issuer: deps.config.baseUrl,
    discoveryUrl: `${deps.config.baseUrl}${DISCOVERY_PATH}`,
    idTokenAlg: settings.idTokenAlg,
    postLogoutRedirectUris: settings.postLogoutRedirectUris,
  };
}

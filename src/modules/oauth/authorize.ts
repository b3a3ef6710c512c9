import { MINUTE } from '../../core/clock.js';
import { isSnowflake } from '../../core/snowflake.js';
import { matchRedirectUri } from '../applications/redirect-uris.js';
import { isValidPkceValue } from './pkce.js';
import { parseScope } from './scopes.js';

/**
 * The authorization request (SPEC §2.1) as pure checks, in the order RFC 6749 §4.1.2.1 demands:
 * first the client and its redirect URI (failures are shown as a page, never redirected), then
 * everything else (failures are redirected to the validated redirect URI with `error`).
 */

/** SPEC §8: an authorization code lives 10 minutes. */
export const CODE_LIFETIME_MS = 10 * MINUTE;

/** The parameters this endpoint reads; anything else is ignored (RFC 6749 §3.1). */
export const AUTHORIZE_PARAMS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt'] as const;
export type AuthorizeParam = (typeof AUTHORIZE_PARAMS)[number];

/** The request's parameters as sent: empty values dropped, repeated names noted. */
export interface RawAuthorizeParams {
  values: Partial<Record<AuthorizeParam, string>>;
  repeated: AuthorizeParam[];
}

/**
 * Reads the OAuth parameters from a parsed query string or form body (Fastify gives an array for a
 * repeated name). RFC 6749 §3.1: an empty value counts as absent; a parameter sent more than once
 * is an error (reported later, by the stage that owns it); unknown names are ignored.
 */
export function readAuthorizeParams(source: unknown): RawAuthorizeParams {
  const record = source !== null && typeof source === 'object' ? (source as Record<string, unknown>) : {};
  const values: Partial<Record<AuthorizeParam, string>> = {};
  const repeated: AuthorizeParam[] = [];
  for (const name of AUTHORIZE_PARAMS) {
    const value = record[name];
    if (Array.isArray(value)) {
      if (value.length > 1) repeated.push(name);
      else if (typeof value[0] === 'string' && value[0] !== '') values[name] = value[0];
    } else if (typeof value === 'string') {
      if (value !== '') values[name] = value;
    } else if (value !== undefined) {
      repeated.push(name);
    }
  }
  return { values, repeated };
}

/** A failure shown as an HTML page: the client or its redirect URI cannot be trusted. */
export interface PageProblem {
  status: number;
  title: string;
  detail: string;
}

/** The client_id, checked for shape only; existence is the caller's lookup. */
export function checkClientId(params: RawAuthorizeParams): { ok: true; clientId: string } | { ok: false; problem: PageProblem } {
  // RFC 6749 §4.1.2.1: without a trustworthy client there is nowhere safe to redirect to.
  if (params.repeated.includes('client_id')) return { ok: false, problem: badLink('The link names more than one application (client_id is repeated).') };
  const clientId = params.values.client_id;
  if (clientId === undefined) return { ok: false, problem: badLink('The link does not say which application is asking (client_id is missing).') };
  if (!isSnowflake(clientId)) return { ok: false, problem: unknownApplication() };
  return { ok: true, clientId };
}

/** The page for a client_id that names no application. */
export function unknownApplication(): PageProblem {
  return badLink('No application has this client_id. The link may be mistyped, or the application was deleted.');
}

/** Where the response goes, and whether the request named it (RFC 6749 §4.1.3 binds it to the code). */
export interface RedirectTarget {
  redirectUri: string;
  redirectUriSent: boolean;
}

/**
 * The redirect URI of the request, validated against the registered ones (OAUTH-CHECKLIST A4, A5,
 * A7). Byte-for-byte equality, except any port for the loopback addresses. redirect_uri may be
 * omitted only when exactly one URI is registered (OAuth 2.1 §2.3.2, RFC 6749 §3.1.2.3).
 */
export function resolveRedirectUri(params: RawAuthorizeParams, registered: readonly string[]): { ok: true; target: RedirectTarget } | { ok: false; problem: PageProblem } {
  if (params.repeated.includes('redirect_uri')) return { ok: false, problem: badRedirect('The link names more than one redirect URI (redirect_uri is repeated).') };
  const requested = params.values.redirect_uri;
  if (requested === undefined) {
    const only = registered.length === 1 ? registered[0] : undefined;
    if (only === undefined) {
      return { ok: false, problem: badRedirect('The link does not say where to send you back to (redirect_uri is missing), and the application has more than one redirect URI.') };
    }
    return { ok: true, target: { redirectUri: only, redirectUriSent: false } };
  }
  if (matchRedirectUri(registered, requested) === undefined) {
    return { ok: false, problem: badRedirect('The redirect URI in the link is not one the application registered, so you will not be sent there.') };
  }
  // The URI actually used: for a loopback URI it carries the port the native app listens on.
  return { ok: true, target: { redirectUri: requested, redirectUriSent: true } };
}

function badLink(detail: string): PageProblem {
  return { status: 400, title: 'This authorization link is not valid', detail };
}

function badRedirect(detail: string): PageProblem {
  return { status: 400, title: 'This authorization link is not valid', detail: `${detail} If you followed a link from an application, tell its developer.` };
}

/** RFC 6749 §4.1.2.1 error codes the authorization endpoint redirects with (plus OIDC's consent_required). */
export type AuthorizeErrorCode = 'invalid_request' | 'unsupported_response_type' | 'invalid_scope' | 'access_denied' | 'consent_required' | 'server_error';

/** `prompt` (Discord's, from OpenID Connect): `consent` always shows the screen, `none` never does. */
export type Prompt = 'consent' | 'none';

/** A fully validated authorization request. */
export interface AuthorizationRequest extends RedirectTarget {
  clientId: string;
  scopes: string[];
  state: string | undefined;
  /** S256 challenge, or undefined when the (confidential) client sent none. */
  codeChallenge: string | undefined;
  prompt: Prompt | undefined;
}

export type AuthorizeValidation = { ok: true; request: AuthorizationRequest } | { ok: false; error: AuthorizeErrorCode; description: string };

/**
 * Everything after client and redirect URI (OAUTH-CHECKLIST A2, A8, A10, B2–B5, I3). Each
 * failure is redirected, so it is returned as an error code and a description.
 */
export function validateAuthorizeParams(params: RawAuthorizeParams, clientId: string, target: RedirectTarget, client: { confidential: boolean }): AuthorizeValidation {
  const fail = (error: AuthorizeErrorCode, description: string): AuthorizeValidation => ({ ok: false, error, description });
  const v = params.values;

  // RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once."
  const repeated = params.repeated[0];
  if (repeated !== undefined) return fail('invalid_request', `the ${repeated} parameter is repeated`);

  // RFC 6749 §3.1.1; RFC 9700 §2.1.2: no implicit grant, so `token` is unsupported too.
  if (v.response_type === undefined) return fail('invalid_request', 'response_type is required; use response_type=code');
  if (v.response_type !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported');

  // SPEC §2.1: scope is required.
  if (v.scope === undefined) return fail('invalid_scope', 'scope is required: name at least one scope');
  const scope = parseScope(v.scope);
  if (!scope.ok) return fail('invalid_scope', scope.reason);

  // RFC 7636 §4.3 defaults a missing method to plain, which we do not support (OAUTH-CHECKLIST B4).
  const challenge = v.code_challenge;
  const method = v.code_challenge_method;
  if (method !== undefined && challenge === undefined) return fail('invalid_request', 'code_challenge_method was sent without code_challenge');
  if (challenge !== undefined) {
    if (method === undefined) return fail('invalid_request', 'code_challenge_method is required; use S256');
    // RFC 7636 §4.4.1: "transform algorithm not supported".
    if (method !== 'S256') return fail('invalid_request', 'transform algorithm not supported; use code_challenge_method=S256');
    if (!isValidPkceValue(challenge)) return fail('invalid_request', 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  } else if (!client.confidential) {
    // SPEC §1.1, §5.3; RFC 9700 §2.1.1: a client without a secret must use PKCE.
    return fail('invalid_request', 'code challenge required: this application has no client secret, so PKCE with S256 is mandatory');
  }

  const prompt = parsePrompt(v.prompt);
  if (prompt === 'invalid') return fail('invalid_request', 'prompt=none cannot be combined with other prompt values');

  return {
    ok: true,
    request: { clientId, ...target, scopes: scope.scopes, state: v.state, codeChallenge: challenge, prompt },
  };
}

/**
 * OpenID Connect Core §3.1.2.1: space-separated values; `none` must stand alone. Values other than
 * `consent` and `none` (such as `login`, `select_account`) are ignored, as unknown parameters are.
 */
function parsePrompt(raw: string | undefined): Prompt | undefined | 'invalid' {
  if (raw === undefined) return undefined;
  const values = raw.split(' ').filter(Boolean);
  if (values.includes('none')) return values.length === 1 ? 'none' : 'invalid';
  return values.includes('consent') ? 'consent' : undefined;
}

/**
 * RFC 6749 §4.1.2.1: error_description is limited to %x20-21 / %x23-5B / %x5D-7E; anything else
 * (quotes, backslashes, non-ASCII, controls) is replaced so no client can choke on it.
 */
export function safeErrorDescription(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '?');
}

/**
 * The authorization response URI: the redirect URI with the parameters appended, keeping a query
 * the registered URI already has (RFC 6749 §3.1.2, OAUTH-CHECKLIST A13). Values are encoded with
 * encodeURIComponent (space as %20), which every query parser decodes the same way, so `state`
 * arrives exactly as sent. Undefined values are left out (RFC 6749 §4.1.2: no state when none was sent).
 */
export function authorizationResponseUri(redirectUri: string, params: readonly (readonly [string, string | undefined])[]): string {
  const query = params
    .filter((p): p is readonly [string, string] => p[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  if (query === '') return redirectUri;
  if (!redirectUri.includes('?')) return `${redirectUri}?${query}`;
  return redirectUri.endsWith('?') || redirectUri.endsWith('&') ? `${redirectUri}${query}` : `${redirectUri}&${query}`;
}

/**
 * An error response (RFC 6749 §4.1.2.1) with `iss` (RFC 9207 §2, OAUTH-CHECKLIST H4). `state` is
 * echoed only when it was sent exactly once.
 */
export function authorizationErrorUri(redirectUri: string, error: AuthorizeErrorCode, description: string, state: string | undefined, issuer: string): string {
  return authorizationResponseUri(redirectUri, [
    ['error', error],
    ['error_description', safeErrorDescription(description)],
    ['state', state],
    ['iss', issuer],
  ]);
}

/** A successful response: `code`, `state` when sent, `iss` (RFC 6749 §4.1.2, RFC 9207 §2). */
export function authorizationCodeUri(redirectUri: string, code: string, state: string | undefined, issuer: string): string {
  return authorizationResponseUri(redirectUri, [
    ['code', code],
    ['state', state],
    ['iss', issuer],
  ]);
}

/**
 * The GET URL of a validated request, for coming back after sign-in from the consent form (the
 * hidden fields, re-validated) and for "Switch account".
 */
export function authorizeUrl(request: AuthorizationRequest): string {
  return authorizationResponseUri('/app/oauth2/authorize', requestFields(request));
}

/** The request as form fields, for the consent form's hidden inputs. */
export function requestFields(request: AuthorizationRequest): [AuthorizeParam, string | undefined][] {
  return [
    ['response_type', 'code'],
    ['client_id', request.clientId],
    ['redirect_uri', request.redirectUriSent ? request.redirectUri : undefined],
    ['scope', request.scopes.join(' ')],
    ['state', request.state],
    ['code_challenge', request.codeChallenge],
    ['code_challenge_method', request.codeChallenge !== undefined ? 'S256' : undefined],
  ];
}

/** Everything the consent screen shows, as plain data (authorize.page.ts renders it). */
export interface ConsentView {
  application: { id: string; name: string; description: string; ownerUsername: string | null };
  scopes: { name: string; description: string }[];
  /** The request, re-sent by the form and re-validated on POST. */
  fields: [string, string][];
  /** Where the person will be sent, shown so a look-alike app gives itself away. */
  redirectUri: string;
  /** The GET URL of this request: "Switch account" signs in and comes back here. */
  authorizeUrl: string;
}

/** One entry of Settings → Authorized apps. */
export interface AuthorizedApp {
  applicationId: string;
  name: string;
  description: string;
  ownerUsername: string | null;
  scopes: { name: string; description: string }[];
  authorizedAt: number;
}

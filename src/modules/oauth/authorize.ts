import { MINUTE } from '../../core/clock.js';
import { parsePermissions } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { InstallRequest } from '../applications/installs.js';
import { matchRedirectUri } from '../applications/redirect-uris.js';
import { isValidPkceValue } from './pkce.js';
import { INSTALL_SCOPES, parseScope } from '../../core/scopes.js';
import { parseResourceScope, type ResourceServer } from '../resource-servers/resource-servers.js';
import { isUrlClientId } from '../client-metadata/client-metadata.js';

/**
 * The authorization request (SPEC §2.1) as pure checks, in the order RFC 6749 §4.1.2.1 demands:
 * first the client and its redirect URI (failures are shown as a page, never redirected), then
 * everything else (failures are redirected to the validated redirect URI with `error`).
 */

/** SPEC §8: an authorization code lives 10 minutes. */
export const CODE_LIFETIME_MS = 10 * MINUTE;

/**
 * The parameters this endpoint reads; anything else is ignored (RFC 6749 §3.1). The last five
 * are bot installs' (SPEC §2.1 `permissions`; issue #4 `server_id`, `disable_server_select` and
 * Discord's names for them, `guild_id` and `disable_guild_select`).
 */
export const AUTHORIZE_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'prompt',
  'permissions',
  'server_id',
  'guild_id',
  'disable_server_select',
  'disable_guild_select',
  // RFC 8707 (issue #41): the API the token is for.
  'resource',
] as const;
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
  // Issue #41 §3: a URL names a client ID metadata document, resolved by the caller.
  if (!isSnowflake(clientId) && !isUrlClientId(clientId)) return { ok: false, problem: unknownApplication() };
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

/** RFC 6749 §4.1.2.1 error codes the authorization endpoint redirects with, plus OpenID Connect Core §3.1.2.6's (issue #22). */
export type AuthorizeErrorCode =
  | 'invalid_request'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'consent_required'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'login_required'
  | 'interaction_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'registration_not_supported'
  | 'invalid_target';

/** `prompt` (Discord's, from OpenID Connect): `consent` always shows the screen, `none` never does. */
export type Prompt = 'consent' | 'none';

/** A fully validated authorization request (the code flow). */
export interface AuthorizationRequest extends RedirectTarget {
  clientId: string;
  scopes: string[];
  state: string | undefined;
  /** S256 challenge, or undefined when the (confidential) client sent none. */
  codeChallenge: string | undefined;
  /** Always undefined for installs: their consent is never skipped (issue #4). */
  prompt: Prompt | undefined;
  /** Set when the scopes include bot or applications.commands. */
  install?: InstallRequest | undefined;
  plain?: undefined;
  /** RFC 8707 (issue #41): the resource server the token is for; undefined for Gatehouse's own API. */
  resource?: ResourceServer | undefined;
}

/**
 * A plain install (issue #4): a link with only bot and/or applications.commands and no
 * response_type. Nothing goes back to the app — no code, no redirect — so redirect_uri is
 * optional; when sent it is validated, and errors are redirected to it.
 */
export interface PlainInstallRequest {
  plain: true;
  clientId: string;
  scopes: string[];
  state: string | undefined;
  redirect: RedirectTarget | undefined;
  install: InstallRequest;
}

/** Either kind of request the consent screen can answer. */
export type ConsentRequest = AuthorizationRequest | PlainInstallRequest;

export type AuthorizeValidation = { ok: true; request: AuthorizationRequest } | { ok: false; error: AuthorizeErrorCode; description: string };

/**
 * Everything after client and redirect URI (OAUTH-CHECKLIST A2, A8, A10, B2–B5, I3). Each
 * failure is redirected, so it is returned as an error code and a description.
 */
export function validateAuthorizeParams(
  params: RawAuthorizeParams,
  clientId: string,
  target: RedirectTarget,
  client: { confidential: boolean },
  resource?: ResourceServer,
): AuthorizeValidation {
  const fail = (error: AuthorizeErrorCode, description: string): AuthorizeValidation => ({ ok: false, error, description });
  const v = params.values;

  // RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once."
  const repeated = params.repeated[0];
  if (repeated !== undefined) return fail('invalid_request', `the ${repeated} parameter is repeated`);

  // RFC 6749 §3.1.1; RFC 9700 §2.1.2: no implicit grant, so `token` is unsupported too.
  if (v.response_type === undefined) return fail('invalid_request', 'response_type is required; use response_type=code');
  if (v.response_type !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported');

  // SPEC §2.1: scope is required — except for a resource server, whose scopes are the default (RFC 6749 §3.3).
  if (v.scope === undefined && resource === undefined) return fail('invalid_scope', 'scope is required: name at least one scope');
  // RFC 8707 (issue #41): a resource's request names that resource's scopes only.
  const scope = resource ? parseResourceScope(resource, v.scope) : parseScope(v.scope ?? '');
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

  // A resource's scopes are its API's, whatever their names: never an install.
  const install = resource ? ({ ok: true, value: undefined } as const) : readInstallParams(params, scope.scopes);
  if (!install.ok) return fail('invalid_request', install.description);
  if (install.value !== undefined) {
    // Issue #4: consent for an install is never skipped, so prompt does not apply.
    return { ok: true, request: { clientId, ...target, scopes: scope.scopes, state: v.state, codeChallenge: challenge, prompt: undefined, install: install.value } };
  }

  const prompt = parsePrompt(v.prompt);
  if (prompt === 'invalid') return fail('invalid_request', 'prompt=none cannot be combined with other prompt values');

  return {
    ok: true,
    request: { clientId, ...target, scopes: scope.scopes, state: v.state, codeChallenge: challenge, prompt, ...(resource ? { resource } : {}) },
  };
}

/**
 * True for a plain install link (issue #4): no response_type, and a scope made only of bot and
 * applications.commands. Anything else is the code flow and needs response_type=code.
 */
export function isPlainInstall(params: RawAuthorizeParams): boolean {
  if (params.values.response_type !== undefined || params.repeated.includes('response_type')) return false;
  const raw = params.values.scope;
  if (raw === undefined || params.repeated.includes('scope')) return false;
  const scope = parseScope(raw);
  return scope.ok && scope.scopes.every((s) => INSTALL_SCOPES.includes(s));
}

export type PlainInstallValidation = { ok: true; request: PlainInstallRequest } | { ok: false; error: AuthorizeErrorCode; description: string };

/**
 * A plain install request (isPlainInstall already holds): no parameter repeated, and the install
 * parameters well formed. PKCE parameters and prompt mean nothing without a code and are ignored.
 */
export function validatePlainInstall(params: RawAuthorizeParams, clientId: string, redirect: RedirectTarget | undefined): PlainInstallValidation {
  const repeated = params.repeated[0];
  if (repeated !== undefined) return { ok: false, error: 'invalid_request', description: `the ${repeated} parameter is repeated` };
  const scope = parseScope(params.values.scope ?? '');
  if (!scope.ok) return { ok: false, error: 'invalid_scope', description: scope.reason };
  const install = readInstallParams(params, scope.scopes);
  if (!install.ok) return { ok: false, error: 'invalid_request', description: install.description };
  if (install.value === undefined) return { ok: false, error: 'invalid_request', description: 'response_type is required; use response_type=code' };
  return { ok: true, request: { plain: true, clientId, scopes: scope.scopes, state: params.values.state, redirect, install: install.value } };
}

/** DESIGN §1: query booleans accept true/false/1/0 in any case. */
function queryBoolean(value: string | undefined): boolean {
  return value !== undefined && (value.toLowerCase() === 'true' || value === '1');
}

/**
 * The install parameters of a request whose scopes include bot or applications.commands
 * (undefined otherwise: they are ignored then, like any unknown parameter). `permissions` is a
 * decimal bitfield with Discord's bit positions (SPEC §2.1); unknown bits are dropped.
 */
export function readInstallParams(params: RawAuthorizeParams, scopes: readonly string[]): { ok: true; value: InstallRequest | undefined } | { ok: false; description: string } {
  const bot = scopes.includes('bot');
  const commands = scopes.includes('applications.commands');
  if (!bot && !commands) return { ok: true, value: undefined };
  const v = params.values;
  let permissions = 0n;
  if (bot && v.permissions !== undefined) {
    const parsed = parsePermissions(v.permissions);
    if (parsed === undefined) return { ok: false, description: 'permissions must be a permission bitfield as a decimal number' };
    permissions = parsed;
  }
  const serverId = bot ? (v.server_id ?? v.guild_id) : undefined;
  const lock = queryBoolean(v.disable_server_select) || queryBoolean(v.disable_guild_select);
  return { ok: true, value: { bot, commands, permissions, serverId, lockServer: bot && lock && serverId !== undefined } };
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

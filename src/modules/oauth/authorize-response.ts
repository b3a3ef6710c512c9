import type { AuthorizeErrorCode, AuthorizeParam, ConsentRequest } from './authorize.js';

/**
 * The authorization endpoint's responses (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207 §2) and the
 * request written back as a URL or as form fields, as pure functions.
 */

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

/**
 * A successful response: `code`, `state` when sent, `iss` (RFC 6749 §4.1.2, RFC 9207 §2). A bot
 * install adds the chosen server as `server_id` and, for Discord clients, `guild_id`, and the
 * granted permissions as a decimal string (issue #4; docs/bot-installs.md).
 */
export function authorizationCodeUri(redirectUri: string, code: string, state: string | undefined, issuer: string, server?: { id: string; permissions: bigint }): string {
  return authorizationResponseUri(redirectUri, [
    ['code', code],
    ['state', state],
    ['iss', issuer],
    ['server_id', server?.id],
    ['guild_id', server?.id],
    ['permissions', server?.permissions.toString()],
  ]);
}

/**
 * The GET URL of a validated request, for coming back after sign-in from the consent form (the
 * hidden fields, re-validated) and for "Switch account".
 */
export function authorizeUrl(request: ConsentRequest): string {
  const serverId = request.install?.serverId;
  return authorizationResponseUri('/app/oauth2/authorize', [...requestFields(request), ['server_id', serverId]]);
}

/**
 * The request as form fields, for the consent form's hidden inputs. The server is not among
 * them: the picker sends it (or, when locked, the page adds it).
 */
export function requestFields(request: ConsentRequest): [AuthorizeParam, string | undefined][] {
  const redirect = request.plain ? request.redirect : request;
  const install = request.install;
  return [
    ['response_type', request.plain ? undefined : 'code'],
    ['client_id', request.clientId],
    ['redirect_uri', redirect?.redirectUriSent ? redirect.redirectUri : undefined],
    ['scope', request.scopes.join(' ')],
    ['state', request.state],
    ['code_challenge', request.plain ? undefined : request.codeChallenge],
    ['code_challenge_method', !request.plain && request.codeChallenge !== undefined ? 'S256' : undefined],
    ['permissions', install?.bot ? install.permissions.toString() : undefined],
    ['disable_server_select', install?.lockServer ? 'true' : undefined],
    ['resource', request.plain ? undefined : request.resource?.identifier],
  ];
}

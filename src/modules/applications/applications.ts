import { checkHttpsImageUrl, codePoints, fail, type Checked } from '../../core/checked.js';
import { actorNameProblem } from '../../core/names.js';
import { matchesHash } from '../../core/secrets.js';
import { validateRedirectUri } from './redirect-uris.js';

/** An OAuth2 application as the domain sees it (client_id = id). */
export interface Application {
  id: string;
  ownerId: string;
  name: string;
  description: string;
  iconUrl: string | null;
  /** Confidential apps authenticate with a client secret; public apps must use PKCE S256. */
  confidential: boolean;
  clientSecretHash: string | null;
  redirectUris: string[];
  botPublic: boolean;
  botRequireCodeGrant: boolean;
  botUserId: string | null;
  createdAt: number;
  updatedAt: number;
  /**
   * Issue #39: when the operator disabled the app, or null. A disabled app's grants were revoked
   * then; its bot token, its consent screen and the token endpoint refuse until it is enabled.
   */
  disabledAt: number | null;
  disabledReason: string | null;
}

export const APP_NAME_MIN = 2;
export const APP_NAME_MAX = 32;
export const APP_DESCRIPTION_MAX = 400;
export const REDIRECT_URIS_MAX = 10;
export const APP_ICON_URL_MAX = 2048;


const INVISIBLE_EXCEPT_NEWLINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/;

/**
 * An application name: 2–32 characters after trimming, nothing invisible, and not one that passes
 * for the platform — the consent screen shows it to people deciding whether to trust it, and its
 * bot speaks under it (OAUTH-CHECKLIST A18 "consent phishing"; DESIGN §8: the service name is
 * protected). Issue #21 §4: the same actor-name rule as webhooks and people (core/names.ts), so a
 * Cyrillic "Gаtеhоusе" or a U+202E-reversed name is refused too.
 */
export function checkAppName(raw: string, serviceName: string): Checked<string> {
  const value = raw.trim();
  const length = codePoints(value);
  if (length < APP_NAME_MIN || length > APP_NAME_MAX) return fail('BASE_TYPE_BAD_LENGTH', `Must be between ${APP_NAME_MIN} and ${APP_NAME_MAX} characters long.`);
  const problem = actorNameProblem(value, serviceName);
  if (problem?.kind === 'invisible') return fail('BASE_TYPE_INVALID', problem.message);
  if (problem !== undefined) return fail('APPLICATION_NAME_RESERVED', `${problem.message}: people would take the app for the platform itself.`);
  return { ok: true, value };
}

/** A description of at most 400 characters; line breaks are kept, other controls refused. */
export function checkAppDescription(raw: string | null | undefined): Checked<string> {
  const value = (raw ?? '').replace(/\r\n?/g, '\n').trim();
  if (codePoints(value) > APP_DESCRIPTION_MAX) return fail('BASE_TYPE_MAX_LENGTH', `Must be ${APP_DESCRIPTION_MAX} or fewer in length.`);
  if (INVISIBLE_EXCEPT_NEWLINES.test(value)) return fail('BASE_TYPE_INVALID', 'Must not contain control or invisible characters.');
  return { ok: true, value };
}

/** An optional icon URL: the https image rule of core/checked.ts (the consent screen may load it). Empty means none. */
export function checkAppIconUrl(raw: string | null | undefined): Checked<string | null> {
  return checkHttpsImageUrl(raw, APP_ICON_URL_MAX);
}

/** One problem in a list of redirect URIs; `index` is undefined for the list as a whole. */
export interface RedirectUriProblem {
  index: number | undefined;
  code: string;
  message: string;
}

/**
 * Checks a list of redirect URIs for registration: at most 10, no duplicates, each acceptable to
 * validateRedirectUri for this client type. URIs are kept exactly as given (they are compared
 * byte for byte later), so nothing is trimmed here.
 */
export function checkRedirectUris(uris: readonly string[], confidential: boolean): RedirectUriProblem[] {
  const problems: RedirectUriProblem[] = [];
  if (uris.length > REDIRECT_URIS_MAX) problems.push({ index: undefined, code: 'BASE_TYPE_MAX_LENGTH', message: `An application can have at most ${REDIRECT_URIS_MAX} redirect URIs.` });
  const seen = new Set<string>();
  uris.forEach((uri, index) => {
    const message = validateRedirectUri(uri, confidential);
    if (message !== undefined) problems.push({ index, code: 'REDIRECT_URI_INVALID', message: `${shorten(uri)}: ${message}` });
    else if (seen.has(uri)) problems.push({ index, code: 'REDIRECT_URI_DUPLICATE', message: `${shorten(uri)} is listed twice.` });
    seen.add(uri);
  });
  return problems;
}

function shorten(uri: string): string {
  const flat = uri.replace(/[\u0000-\u001f\u007f]/g, '?');
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}

/**
 * Splits the portal's textarea into redirect URIs: one per line, surrounding whitespace and empty
 * lines dropped (a URI itself may hold no whitespace, so nothing meaningful is lost).
 */
export function redirectUrisFromText(text: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

/**
 * True when `presented` is this app's client secret. Constant time and length-independent
 * (OAUTH-CHECKLIST D8, I1): only hashes are compared. Always false for public apps, which have
 * no secret to present.
 */
export function verifyClientSecret(app: Application, presented: string): boolean {
  if (!app.confidential || app.clientSecretHash === null) return false;
  return matchesHash(presented, app.clientSecretHash);
}

export interface AuthorizeLinkInput {
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  state?: string | undefined;
}

/**
 * The authorization link the portal's URL generator produces (SPEC §2.1):
 * `{baseUrl}/app/oauth2/authorize?client_id=…&response_type=code&redirect_uri=…&scope=…[&state=…]`,
 * each value percent-encoded (spaces in `scope` as %20). PKCE parameters are per request and so
 * are never part of a stored link: the client adds code_challenge and code_challenge_method.
 */
export function authorizeLink(baseUrl: string, input: AuthorizeLinkInput): string {
  const params: [string, string][] = [
    ['client_id', input.clientId],
    ['response_type', 'code'],
    ['redirect_uri', input.redirectUri],
    ['scope', input.scopes.join(' ')],
  ];
  if (input.state) params.push(['state', input.state]);
  const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `${baseUrl.replace(/\/+$/, '')}/app/oauth2/authorize?${query}`;
}

export interface GeneratorRequest {
  scopes: readonly string[];
  redirectUri: string | undefined;
  state: string | undefined;
}

export interface GeneratorResult {
  /** The ticked scopes that exist, in the order offered. */
  scopes: string[];
  /** The chosen redirect URI; the only one when exactly one is registered and none was chosen. */
  redirectUri: string | undefined;
  link: string | undefined;
  problems: string[];
}

/**
 * The portal's URL generator: checks a selection against what the app and the server offer and,
 * when complete, builds the authorization link. The redirect URI must be one of the app's own,
 * exactly (it is offered as a list; anything else was typed into the URL).
 */
export function generateAuthorizeLink(baseUrl: string, app: Pick<Application, 'id' | 'redirectUris'>, offered: readonly string[], request: GeneratorRequest): GeneratorResult {
  const problems: string[] = [];
  const ticked = new Set(request.scopes);
  const scopes = offered.filter((s) => ticked.has(s));
  if (scopes.length === 0) problems.push('Tick at least one scope.');
  if ([...ticked].some((s) => !offered.includes(s))) problems.push('Some of the scopes are not offered and were left out.');

  let redirectUri = request.redirectUri === '' ? undefined : request.redirectUri;
  if (redirectUri === undefined && app.redirectUris.length === 1) redirectUri = app.redirectUris[0];
  if (app.redirectUris.length === 0) problems.push('Add a redirect URI to the application first.');
  else if (redirectUri === undefined) problems.push('Choose a redirect URI.');
  else if (!app.redirectUris.includes(redirectUri)) {
    problems.push('That redirect URI is not registered for this application.');
    redirectUri = undefined;
  }

  const link = scopes.length > 0 && redirectUri !== undefined ? authorizeLink(baseUrl, { clientId: app.id, redirectUri, scopes, state: request.state }) : undefined;
  return { scopes, redirectUri, link, problems };
}

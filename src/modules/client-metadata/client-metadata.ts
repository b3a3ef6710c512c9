/**
 * Client ID metadata documents (issue #41 §3; draft-ietf-oauth-client-id-metadata-document, the MCP
 * authorization spec's preferred client identification): a `client_id` that is an https URL names
 * a JSON document of RFC 7591 client metadata published at that URL. Pure: which client ids are
 * URLs, which URLs may be fetched, what a document must say, and how long it is kept.
 */
import { checkRegistration, type RegistrationMetadata } from '../client-registration/client-registration.js';

/** The largest document read (the draft suggests a small limit; 5 KiB holds ten redirect URIs with room). */
export const DOCUMENT_MAX_BYTES = 5 * 1024;
/** The fetch's whole deadline, connection to last byte. */
export const FETCH_TIMEOUT_MS = 5000;
/** How long a document is used without Cache-Control max-age, and the bounds on the one it sends. */
export const DEFAULT_LIFETIME_MS = 5 * 60_000;
export const MIN_LIFETIME_MS = 60_000;
export const MAX_LIFETIME_MS = 24 * 60 * 60_000;
/** New document URLs (new applications) one host may bring in an hour; known ones are not counted. */
export const NEW_DOCUMENTS_PER_HOST_PER_HOUR = 20;
/** Documents kept per instance; the oldest goes first. */
export const CACHE_ENTRIES_MAX = 500;
const URL_MAX = 2048;
const CODE_FLOW = ['authorization_code', 'refresh_token'];

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True when a client_id is meant as a metadata document's URL rather than an application id. */
export function isUrlClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

export type Checked<T> = { ok: true; value: T } | { ok: false; description: string };

/**
 * The draft's client identifier rules (§3): an https URL with a path, no fragment, no user
 * information and no dot segments, compared as a string (so it is taken exactly as sent). Plain
 * http only for a loopback host, and only when the operator lets outbound requests reach private
 * addresses (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE, as for development redirect URIs).
 */
export function checkMetadataUrl(clientId: string, allowLoopbackHttp: boolean): Checked<URL> {
  if (clientId.length > URL_MAX) return { ok: false, description: `a client_id URL is at most ${URL_MAX} characters` };
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return { ok: false, description: 'the client_id is not a valid URL' };
  }
  const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname) && allowLoopbackHttp;
  if (url.protocol !== 'https:' && !loopbackHttp) return { ok: false, description: 'a client_id URL must use https' };
  if (url.username !== '' || url.password !== '') return { ok: false, description: 'a client_id URL must not contain a user name or password' };
  if (clientId.includes('#')) return { ok: false, description: 'a client_id URL must not contain a fragment' };
  if (url.pathname === '/' || url.pathname === '') return { ok: false, description: 'a client_id URL must have a path' };
  // The parser resolves dot segments; a URL it changed had some, and two spellings would name one client.
  if (/\/\.{1,2}(\/|$)/.test(clientId.replace(/[?].*$/, '').replace(/^https?:\/\/[^/]*/i, ''))) {
    return { ok: false, description: 'a client_id URL must not contain . or .. path segments' };
  }
  return { ok: true, value: url };
}

/** The metadata a document gives, as Gatehouse uses it: a public client of the code grant. */
export type DocumentMetadata = Pick<RegistrationMetadata, 'redirect_uris' | 'client_name' | 'logo_uri'>;

/**
 * A fetched document's rules (draft §4): JSON object whose `client_id` equals the URL it was
 * fetched from, character for character; no `client_secret` or `client_secret_expires_at` (a
 * document is public); `token_endpoint_auth_method` absent or `none` (Gatehouse does not verify
 * private_key_jwt, so such a client cannot authenticate here); then RFC 7591's rules as for a
 * registration (checkRegistration): `redirect_uris` required, https, loopback http or a private-use
 * scheme (RFC 8252); `client_name` and `logo_uri` as the portal's. Unknown fields are ignored.
 */
export function checkMetadataDocument(body: Buffer, contentType: string | undefined, clientId: string, serviceName: string): Checked<DocumentMetadata> {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(mediaType)) {
    return { ok: false, description: `the client metadata document must be served as application/json (got ${mediaType === '' ? 'no content type' : mediaType})` };
  }
  let document: unknown;
  try {
    document = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, description: 'the client metadata document is not valid JSON' };
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return { ok: false, description: 'the client metadata document must be a JSON object' };
  const raw = document as Record<string, unknown>;
  if (raw.client_id !== clientId) return { ok: false, description: 'the client metadata document’s client_id does not equal the URL it was fetched from' };
  if (raw.client_secret !== undefined || raw.client_secret_expires_at !== undefined) {
    return { ok: false, description: 'a client metadata document must not contain client_secret or client_secret_expires_at' };
  }
  if (raw.token_endpoint_auth_method !== undefined && raw.token_endpoint_auth_method !== 'none') {
    return { ok: false, description: 'the document’s token_endpoint_auth_method must be none: a client identified by a metadata document is a public client here' };
  }
  // The document's grant_types and response_types describe the client; what it may do here is the
  // code flow of a public client, which the authorization and token endpoints enforce.
  const checked = checkRegistration({ ...raw, token_endpoint_auth_method: 'none', grant_types: CODE_FLOW, response_types: ['code'] }, serviceName, CODE_FLOW);
  if (!checked.ok) return { ok: false, description: `the client metadata document is not acceptable: ${checked.problem.description}` };
  if (checked.value.redirect_uris.length === 0) return { ok: false, description: 'the client metadata document must list redirect_uris' };
  const { redirect_uris, client_name, logo_uri } = checked.value;
  return { ok: true, value: { redirect_uris, client_name, ...(logo_uri !== undefined ? { logo_uri } : {}) } };
}

/**
 * How long a fetched document is used (draft §4.3: the server may cache it per its HTTP cache
 * headers): Cache-Control max-age within [MIN_LIFETIME_MS, MAX_LIFETIME_MS]; DEFAULT_LIFETIME_MS
 * without one. no-store and no-cache are held to the minimum, so a busy client does not make
 * Gatehouse fetch on every request.
 */
export function documentLifetimeMs(cacheControl: string | string[] | undefined): number {
  const text = (Array.isArray(cacheControl) ? cacheControl.join(',') : (cacheControl ?? '')).toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/.test(text)) return MIN_LIFETIME_MS;
  const maxAge = /(^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(,|$)/.exec(text);
  if (!maxAge) return DEFAULT_LIFETIME_MS;
  return Math.min(MAX_LIFETIME_MS, Math.max(MIN_LIFETIME_MS, Number(maxAge[2]) * 1000));
}

/** What the consent screen shows first: the host the document was fetched from. */
export function metadataHost(clientId: string): string {
  try {
    return new URL(clientId).host;
  } catch {
    return clientId;
  }
}

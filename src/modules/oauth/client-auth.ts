import { MINUTE } from '../../core/clock.js';
import type { BucketRule } from '../../rate-limit/bucket.js';

/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3), pure: which
 * credentials a request presents, before anything is looked up.
 */

/** What a request carries that may identify its client. Empty body values are already absent. */
export interface PresentedClientAuth {
  /** The Authorization header, if any. */
  authorization: string | undefined;
  /** client_id from the form body. */
  clientId: string | undefined;
  /** client_secret from the form body. */
  clientSecret: string | undefined;
}

/**
 * The form parameters client authentication reads at the token endpoint (RFC 6749 §2.3.1), with
 * what the API reference says of each (grants/registry.ts lists them among the endpoint's).
 */
export const CLIENT_AUTH_PARAMETERS: Readonly<Record<'client_id' | 'client_secret', string>> = {
  client_id: 'the application id (or use HTTP Basic)',
  client_secret: 'client_secret_post; confidential apps only (or use HTTP Basic)',
};

/** RFC 8414 token_endpoint_auth_methods_supported names. */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface ClientCredentials {
  method: ClientAuthMethod;
  clientId: string;
  /** Absent for `none` (public clients). */
  clientSecret?: string;
}

export type ReadClientAuth =
  | { ok: true; credentials: ClientCredentials }
  | {
      ok: false;
      /** invalid_request: the request is malformed (RFC 6749 §5.2); invalid_client: authentication failed. */
      error: 'invalid_request' | 'invalid_client';
      description: string;
      /** True when the failure concerns the Authorization header (RFC 6749 §5.2: 401 + WWW-Authenticate). */
      viaHeader: boolean;
    };

/**
 * application/x-www-form-urlencoded decoding of one value (RFC 6749 Appendix B): `+` is a space,
 * `%XX` a UTF-8 octet. Undefined when a percent escape is malformed.
 */
export function formUrlDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The inverse, as clients are told to encode (RFC 6749 §2.3.1): for tests and documentation. */
export function formUrlEncode(text: string): string {
  return encodeURIComponent(text)
    .replace(/%20/g, '+')
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const BASIC = /^basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i;

/**
 * HTTP Basic credentials per RFC 6749 §2.3.1: base64 of `id:secret` where each half was first
 * form-urlencoded, so each half is form-urldecoded here (`+` → space, `%3A` → `:`). The first
 * colon separates the halves (an encoded id has none). Undefined when the header is not Basic or
 * is malformed.
 */
export function parseBasicCredentials(header: string): { clientId: string; clientSecret: string } | undefined {
  const match = BASIC.exec(header.trim());
  if (!match) return undefined;
  const encoded = match[1] as string;
  if (encoded.replace(/=+$/, '').length % 4 === 1) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const clientId = formUrlDecode(decoded.slice(0, colon));
  const clientSecret = formUrlDecode(decoded.slice(colon + 1));
  if (clientId === undefined || clientSecret === undefined) return undefined;
  return { clientId, clientSecret };
}

/**
 * Which credentials a request presents (RFC 6749 §2.3, OAUTH-CHECKLIST D3–D7, D12):
 *  - an Authorization header must be Basic and well formed (else invalid_client via the header);
 *  - Basic together with client_secret in the body is two mechanisms at once (D5: invalid_request),
 *    and a body client_id that contradicts the header is malformed too;
 *  - client_id + client_secret in the body is client_secret_post;
 *  - client_id alone is a public client (`none`); whether that app may do so is decided later;
 *    so is HTTP Basic with an empty password (DESIGN §1);
 *  - no client_id at all is invalid_client (§3.2.1: a public client must identify itself).
 */
export function readClientCredentials(presented: PresentedClientAuth): ReadClientAuth {
  if (presented.authorization !== undefined && presented.authorization.trim() !== '') {
    const basic = parseBasicCredentials(presented.authorization);
    if (!basic) {
      return { ok: false, error: 'invalid_client', description: 'the Authorization header must carry HTTP Basic client credentials', viaHeader: true };
    }
    if (presented.clientSecret !== undefined) {
      return { ok: false, error: 'invalid_request', description: 'use one client authentication method: HTTP Basic or client_secret in the body, not both', viaHeader: true };
    }
    if (presented.clientId !== undefined && presented.clientId !== basic.clientId) {
      return { ok: false, error: 'invalid_request', description: 'client_id in the body differs from the one in the Authorization header', viaHeader: true };
    }
    if (basic.clientId === '') return { ok: false, error: 'invalid_client', description: 'the Authorization header carries no client_id', viaHeader: true };
    // DESIGN §1: Basic with an empty password is client_id alone, as an empty client_secret in the
    // body is (@discordjs/core's revokeToken sends `id:` for a public app). A confidential app
    // presenting it is then refused for lack of its secret.
    if (basic.clientSecret === '') return { ok: true, credentials: { method: 'none', clientId: basic.clientId } };
    return { ok: true, credentials: { method: 'client_secret_basic', clientId: basic.clientId, clientSecret: basic.clientSecret } };
  }
  if (presented.clientId === undefined) {
    if (presented.clientSecret !== undefined) return { ok: false, error: 'invalid_request', description: 'client_secret was sent without client_id', viaHeader: false };
    return { ok: false, error: 'invalid_client', description: 'client authentication required: send client_id (and the client secret for a confidential app)', viaHeader: false };
  }
  if (presented.clientSecret !== undefined) {
    return { ok: true, credentials: { method: 'client_secret_post', clientId: presented.clientId, clientSecret: presented.clientSecret } };
  }
  return { ok: true, credentials: { method: 'none', clientId: presented.clientId } };
}

/**
 * Throttling of failed client authentications (RFC 6749 §2.3.1 MUST; OAUTH-CHECKLIST D10), in the
 * shared bucket store so that every instance counts alike: per client address (IPv6 by /64), 20
 * failures per 10 minutes; while the limit is reached, every authentication from that address is
 * refused before any secret is checked (429 with Retry-After, error `temporarily_unavailable`),
 * until the window that started with the first failure ends.
 *
 * There is no per-client count (issue #21 §2): client secrets carry 256 random bits, so counting
 * per client protects nothing, and since client ids are public it would only let strangers on
 * other addresses lock an app out. A correct secret is never refused for failures made from
 * another address. A request that presents no secret at all (a public client probing HTTP Basic
 * with an empty password, as Go's x/oauth2 does, or a confidential client that forgot its
 * secret) guessed nothing and is never counted.
 */
export const CLIENT_ADDRESS_FAILURE_RULE: BucketRule = { limit: 20, windowMs: 10 * MINUTE };

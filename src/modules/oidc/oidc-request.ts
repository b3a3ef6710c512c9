/**
 * The OpenID Connect parameters of an authorization request (Core §3.1.2.1), read beside the
 * OAuth ones (oauth/authorize.ts) and only for requests whose scope includes `openid`: a request
 * without it behaves exactly as before (issue #22).
 */

/**
 * Not an OpenID parameter: added by this server to the URL it sends the person back to after a
 * sign-in that prompt=login, select_account or max_age forced, saying "a sign-in at or after this
 * time (ms) satisfies the request", so the request does not force sign-in forever. Anyone could
 * strip prompt=login from a URL just as well; max_age stays checkable by the app through auth_time.
 */
export const SIGNED_IN_AFTER_PARAM = 'signed_in_after';

export const OIDC_PARAMS = ['acr_values', 'nonce', 'prompt', 'max_age', 'login_hint', 'id_token_hint', 'claims', 'request', 'request_uri', 'response_mode', 'registration', SIGNED_IN_AFTER_PARAM] as const;
type OidcParam = (typeof OIDC_PARAMS)[number];

export type OidcErrorCode = 'invalid_request' | 'request_not_supported' | 'request_uri_not_supported' | 'registration_not_supported';

export interface OidcRequest {
  nonce: string | undefined;
  prompts: ReadonlySet<string>;
  /** Seconds (Core §3.1.2.1 max_age). */
  maxAge: number | undefined;
  loginHint: string | undefined;
  idTokenHint: string | undefined;
  signedInAfter: number | undefined;
  /** §3.1.2.1 acr_values, in order of preference (a voluntary claim: unmet values are not an error). */
  acrValues: string[];
}

export type OidcRequestResult = { ok: true; request: OidcRequest } | { ok: false; error: OidcErrorCode; description: string };

/** Core §3.1.2.1 nonce: any string; bounded so a link cannot make every ID token huge. */
export const NONCE_MAX_LENGTH = 512;
/** login_hint and ui_locales are kept to this many characters (also the end-session schema's cap). */
export const HINT_MAX_LENGTH = 256;

/** Reads and checks the OpenID parameters from a parsed query or form (a repeated name arrives as an array). */
export function readOidcRequest(source: unknown): OidcRequestResult {
  const record = source !== null && typeof source === 'object' ? (source as Record<string, unknown>) : {};
  const values: Partial<Record<OidcParam, string>> = {};
  for (const name of OIDC_PARAMS) {
    const value = record[name];
    if (value === undefined) continue;
    // RFC 6749 §3.1: parameters must not be repeated.
    if (typeof value !== 'string') return { ok: false, error: 'invalid_request', description: `the ${name} parameter is repeated` };
    if (value !== '') values[name] = value;
  }
  // Core §6.1, §6.2: request objects are not supported, and say so with their own codes.
  if (values.request !== undefined) return { ok: false, error: 'request_not_supported', description: 'request objects are not supported; send the parameters in the query' };
  if (values.request_uri !== undefined) return { ok: false, error: 'request_uri_not_supported', description: 'request_uri is not supported; send the parameters in the query' };
  // Core §7.2.1: no self-issued or dynamic registration at the authorization endpoint.
  if (values.registration !== undefined) return { ok: false, error: 'registration_not_supported', description: 'the registration parameter is not supported' };
  // Core §5.5: claims_parameter_supported is false (Discovery), so refuse rather than silently ignore.
  if (values.claims !== undefined) return { ok: false, error: 'invalid_request', description: 'the claims parameter is not supported; request claims with scopes' };
  // OAuth 2.0 Multiple Response Type Encoding Practices §2.1: only query is offered.
  if (values.response_mode !== undefined && values.response_mode !== 'query') {
    return { ok: false, error: 'invalid_request', description: 'response_mode is not supported; only response_mode=query is' };
  }
  if (values.nonce !== undefined && values.nonce.length > NONCE_MAX_LENGTH) return { ok: false, error: 'invalid_request', description: `nonce must be at most ${NONCE_MAX_LENGTH} characters` };
  let maxAge: number | undefined;
  if (values.max_age !== undefined) {
    if (!/^[0-9]{1,10}$/.test(values.max_age)) return { ok: false, error: 'invalid_request', description: 'max_age must be a whole number of seconds' };
    maxAge = Number(values.max_age);
  }
  const prompts = new Set((values.prompt ?? '').split(' ').filter(Boolean));
  if (prompts.has('none') && prompts.size > 1) return { ok: false, error: 'invalid_request', description: 'prompt=none cannot be combined with other prompt values' };
  const after = values.signed_in_after;
  return {
    ok: true,
    request: {
      nonce: values.nonce,
      prompts,
      maxAge,
      loginHint: values.login_hint?.slice(0, HINT_MAX_LENGTH),
      idTokenHint: values.id_token_hint,
      acrValues: (values.acr_values ?? '').split(' ').filter(Boolean).slice(0, 16),
      signedInAfter: after !== undefined && /^[0-9]{1,15}$/.test(after) ? Number(after) : undefined,
    },
  };
}

/**
 * Whether the person must sign in (again) before this request can be answered: prompt=login or
 * select_account (no account chooser: signing in again is how another account is chosen), or a
 * sign-in older than max_age — unless the sign-in this server forced has since happened.
 */
export function needsFreshSignIn(request: OidcRequest, signedInAt: number, now: number): boolean {
  if (request.signedInAfter !== undefined && signedInAt >= request.signedInAfter) return false;
  if (request.prompts.has('login') || request.prompts.has('select_account')) return true;
  return request.maxAge !== undefined && now - signedInAt > request.maxAge * 1000;
}

/** The request URL with the marker set, to come back to after the forced sign-in. */
export function withSignedInAfter(requestUrl: string, at: number): string {
  const url = new URL(requestUrl, 'http://gatehouse.invalid');
  url.searchParams.set(SIGNED_IN_AFTER_PARAM, String(at));
  return `${url.pathname}${url.search}`;
}

/** login_hint as sent once (Core §3.1.2.1), for prefilling the sign-in form before anything else is validated. */
export function loginHintOf(source: unknown): string | undefined {
  const value = source !== null && typeof source === 'object' ? (source as Record<string, unknown>)['login_hint'] : undefined;
  return typeof value === 'string' && value !== '' ? value.slice(0, HINT_MAX_LENGTH) : undefined;
}

/**
 * Registration and matching rules for OAuth redirect URIs (OAUTH-CHECKLIST A4–A6, issue #3).
 * Pure: no Fastify, no Kysely.
 */

/** RFC 9700 / browsers: longer URIs are truncated or refused somewhere along the way. */
export const REDIRECT_URI_MAX_LENGTH = 2048;

/**
 * The only hosts for which http is allowed and the port may vary (RFC 8252 §7.3, §8.3: the
 * literal loopback addresses; `localhost` is NOT RECOMMENDED, so it gets no exception).
 * Written exactly so: `http://0x7f.1/` or `HTTP://127.0.0.1/` are not this form.
 */
const LOOPBACK_PREFIXES = ['http://127.0.0.1', 'http://[::1]'] as const;

/** Schemes that would run code or read local data in the browser instead of reaching a client. */
const DANGEROUS_SCHEMES = new Set(['javascript', 'data', 'file', 'vbscript', 'blob', 'about', 'filesystem', 'view-source']);

interface LoopbackParts {
  /** `http://127.0.0.1` or `http://[::1]`. */
  prefix: string;
  /** Everything after the port: path and query, compared byte for byte. */
  rest: string;
}

/**
 * Splits `http://127.0.0.1[:port]<rest>` into prefix and rest, or undefined when the URI is not
 * exactly that form. The character after the address must end the authority (`:port`, `/`, `?`
 * or the end), so `http://127.0.0.1.evil.example/` and `http://127.0.0.1@evil.example/` are not
 * loopback URIs.
 */
function splitLoopback(uri: string): LoopbackParts | undefined {
  for (const prefix of LOOPBACK_PREFIXES) {
    if (!uri.startsWith(prefix)) continue;
    let rest = uri.slice(prefix.length);
    const port = /^:([0-9]{1,5})/.exec(rest);
    if (port) {
      const value = Number(port[1]);
      if (value < 1 || value > 65535) return undefined;
      rest = rest.slice(port[0].length);
    }
    if (rest !== '' && !rest.startsWith('/') && !rest.startsWith('?')) return undefined;
    return { prefix, rest };
  }
  return undefined;
}

/**
 * The registered redirect URI that `requested` designates, or undefined.
 *
 * RFC 9700 §4.1.3 and OAuth 2.1: simple string comparison (RFC 3986 §6.2.1), no normalisation
 * of any kind — a trailing slash, host case, default port, query, fragment, `%2F` for `/`,
 * dot segments or userinfo all make a different URI. The one exception (RFC 8252 §7.3,
 * OAUTH-CHECKLIST A5): for a registered `http://127.0.0.1…` or `http://[::1]…` URI the request
 * may name any port, or none, because native apps listen on whatever port the OS gives them;
 * scheme, address, path and query must still be identical.
 */
export function matchRedirectUri(registered: readonly string[], requested: string): string | undefined {
  for (const uri of registered) {
    if (uri === requested) return uri;
  }
  const wanted = splitLoopback(requested);
  if (!wanted) return undefined;
  for (const uri of registered) {
    const candidate = splitLoopback(uri);
    if (candidate && candidate.prefix === wanted.prefix && candidate.rest === wanted.rest) return uri;
  }
  return undefined;
}

/** True when `uri` is a loopback redirect URI that gets the any-port exception. */
export function isLoopbackRedirectUri(uri: string): boolean {
  return splitLoopback(uri) !== undefined;
}

/**
 * Why `uri` cannot be registered, or undefined when it can (OAUTH-CHECKLIST A6, issue #3):
 * an absolute URI of printable ASCII, at most 2048 characters, without fragment or userinfo,
 * using https; or http on the literal loopback addresses 127.0.0.1 and [::1]; or, for public
 * apps only, a private-use scheme named after a reverse domain (RFC 8252 §7.1,
 * `com.example.app:/callback`).
 */
export function validateRedirectUri(uri: string, confidential: boolean): string | undefined {
  if (uri.length === 0) return 'Enter a redirect URI.';
  if (uri.length > REDIRECT_URI_MAX_LENGTH) return `A redirect URI can be at most ${REDIRECT_URI_MAX_LENGTH} characters long.`;
  // Printable ASCII only: URL parsers silently drop tabs and newlines and trim spaces, so the
  // URI the browser reaches would differ from the one compared byte for byte.
  if (!/^[\x21-\x7e]+$/.test(uri)) return 'A redirect URI may not contain spaces, control characters or non-ASCII characters (percent-encode them).';
  // WHATWG parsers read "\" as "/" in http(s) URIs, another gap between comparison and navigation.
  if (uri.includes('\\')) return 'A redirect URI may not contain a backslash.';
  // RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment component."
  if (uri.includes('#')) return 'A redirect URI may not contain a fragment (#…).';

  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri);
  if (!schemeMatch) return 'A redirect URI must be absolute, starting with a scheme such as https://.';
  const scheme = schemeMatch[1] as string;
  if (DANGEROUS_SCHEMES.has(scheme.toLowerCase())) return `${scheme.toLowerCase()}: URIs can never be redirect URIs.`;
  if (scheme !== scheme.toLowerCase()) return 'Write the scheme of a redirect URI in lower case.';

  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return 'This is not a valid absolute URI.';
  }

  const afterScheme = uri.slice(scheme.length + 1);
  let authority: string | undefined;
  if (afterScheme.startsWith('//')) {
    const end = afterScheme.slice(2).search(/[/?]/);
    authority = end === -1 ? afterScheme.slice(2) : afterScheme.slice(2, 2 + end);
    // RFC 9700 §4.1.1: userinfo makes "https://good@evil" look like it belongs to "good".
    if (authority.includes('@')) return 'A redirect URI may not contain a user name or password (…@).';
  }

  if (scheme === 'https') {
    // Checked on the text as written: WHATWG parsers turn "https:host" and "https:///host" into
    // "https://host/", which is not the string that will be compared.
    if (!authority || parsed.hostname === '') return 'An https redirect URI needs a host: https://example.com/callback.';
    return undefined;
  }
  if (scheme === 'http') {
    // RFC 9700 §2.6: no http redirect URIs except loopback (RFC 8252 §7.3).
    if (splitLoopback(uri)) return undefined;
    return 'http is only allowed for the loopback addresses http://127.0.0.1 and http://[::1] (not localhost); use https.';
  }
  if (!scheme.includes('.') || !/^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/.test(scheme)) {
    return 'Use https, http on 127.0.0.1 or [::1], or (for public apps) a private-use scheme named after a domain you control, such as com.example.app:/callback.';
  }
  if (afterScheme === '' || afterScheme === '/' || afterScheme === '//') return 'Add a path after the scheme, such as com.example.app:/callback.';
  // RFC 8252 §7.1: private-use schemes are for native apps, which are public clients (§8.4).
  if (confidential) return 'Private-use schemes such as com.example.app:/callback are only for public (native) apps.';
  return undefined;
}

import { parseScope, SCOPE_ALIASES, SCOPES } from '../../core/scopes.js';
import { validateRedirectUri } from '../applications/redirect-uris.js';

/**
 * Resource servers as pure rules (issue #41 §1; RFC 8707): what an identifier and a scope may be.
 * Framework-free: the service and the authorization and token endpoints share these checks.
 */

/** A scope a resource server defines, with the line the consent screen shows for it. */
export interface ResourceScope {
  name: string;
  /** Completes "This app will be able to …"; the name itself when the app gave none. */
  description: string;
}

/** An API an application serves (RFC 8707 audience). */
export interface ResourceServer {
  id: string;
  applicationId: string;
  identifier: string;
  scopes: ResourceScope[];
  /** `jwt`: RFC 9068 access tokens the API can verify itself; `opaque` (the default): checked by introspection. */
  accessTokenFormat: 'opaque' | 'jwt';
  /**
   * RFC 8693 (issue #41): Gatehouse scopes the serving app may exchange a token for this API for,
   * to act for the same person on Gatehouse's own API (canonical names, DELEGABLE_SCOPES).
   */
  delegatedScopes: string[];
  createdAt: number;
}

export const RESOURCE_SERVERS_PER_APP_MAX = 10;
export const RESOURCE_SCOPES_MAX = 50;
const SCOPE_NAME_MAX = 64;
const SCOPE_DESCRIPTION_MAX = 200;
const IDENTIFIER_MAX = 512;
const RESERVED_SCOPES: ReadonlySet<string> = new Set([...SCOPES.map((s) => s.name), ...Object.keys(SCOPE_ALIASES)]);

/**
 * The identifier as stored and compared (WHATWG serialisation: `https://api.example` and
 * `https://api.example/` are one resource), or why it cannot be one. RFC 8707 §2: an absolute URI
 * without fragment (and here without query); https, or http only on the loopback addresses, as
 * for redirect URIs (RFC 8252 §7.3) — for development.
 */
export function checkIdentifier(raw: string): { ok: true; identifier: string } | { ok: false; reason: string } {
  if (raw.length > IDENTIFIER_MAX) return { ok: false, reason: `An identifier can be at most ${IDENTIFIER_MAX} characters long.` };
  if (!/^https?:\/\//.test(raw)) return { ok: false, reason: 'An identifier is an https URL (http only on 127.0.0.1 or [::1]), such as https://api.example/.' };
  const problem = validateRedirectUri(raw, true);
  if (problem !== undefined) return { ok: false, reason: problem.replace(/redirect URI/g, 'identifier') };
  // RFC 8707 §2: "SHOULD NOT include a query component"; Gatehouse compares whole URLs, so none.
  if (raw.includes('?')) return { ok: false, reason: 'An identifier may not contain a query (?…).' };
  return { ok: true, identifier: new URL(raw).href };
}

/**
 * The `resource` of a request in the form identifiers are stored in, or undefined when it is no
 * absolute URL without fragment (RFC 8707 §2: then invalid_target).
 */
export function canonicalResource(raw: string): string | undefined {
  if (raw.includes('#') || raw.length > IDENTIFIER_MAX) return undefined;
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The scopes as declared, or why not: each an RFC 6749 §3.3 scope-token (printable ASCII without
 * space, `"` or `\`), at most 64 characters, named once; descriptions pair with names in order.
 */
export function checkScopes(names: readonly string[], descriptions: readonly string[]): { ok: true; scopes: ResourceScope[] } | { ok: false; reason: string } {
  if (names.length === 0) return { ok: false, reason: 'Declare at least one scope.' };
  if (names.length > RESOURCE_SCOPES_MAX) return { ok: false, reason: `A resource server can define at most ${RESOURCE_SCOPES_MAX} scopes.` };
  if (descriptions.length > names.length) return { ok: false, reason: 'There are more scope descriptions than scopes.' };
  const seen = new Set<string>();
  const scopes: ResourceScope[] = [];
  for (const [index, name] of names.entries()) {
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(name) || name.length > SCOPE_NAME_MAX) {
      return { ok: false, reason: `Scope "${name.slice(0, 40)}" is not valid: 1 to ${SCOPE_NAME_MAX} printable characters, without spaces, quotes or backslashes.` };
    }
    if (seen.has(name)) return { ok: false, reason: `Scope ${name} is declared twice.` };
    // Gatehouse's own scope names mean something to the consent screen and the token endpoint
    // (an install, a webhook picker, an ID token), so no API may reuse them.
    if (RESERVED_SCOPES.has(name)) return { ok: false, reason: `Scope ${name} is one of this service's own scopes; choose another name, such as api:${name}.` };
    seen.add(name);
    const description = (descriptions[index] ?? '').trim();
    if (description.length > SCOPE_DESCRIPTION_MAX) return { ok: false, reason: `The description of ${name} can be at most ${SCOPE_DESCRIPTION_MAX} characters long.` };
    if (/[\x00-\x1f\x7f]/.test(description)) return { ok: false, reason: `The description of ${name} may not contain control characters.` };
    scopes.push({ name, description: description === '' ? name : description });
  }
  return { ok: true, scopes };
}

/**
 * The scopes of a request for `resource` (RFC 6749 §3.3, RFC 8707 §2): every name one the resource
 * defines, duplicates collapsed, in the resource's order. An absent scope means all of them.
 */
export function parseResourceScope(resource: ResourceServer, raw: string | undefined): { ok: true; scopes: string[] } | { ok: false; reason: string } {
  const defined = resource.scopes.map((s) => s.name);
  if (raw === undefined) return { ok: true, scopes: defined };
  const names = new Set(raw.split(' ').filter((n) => n.length > 0));
  if (names.size === 0) return { ok: false, reason: 'scope must name at least one scope' };
  for (const name of names) {
    if (!defined.includes(name)) return { ok: false, reason: `unknown scope for this resource: ${name.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '?').slice(0, 40)}` };
  }
  return { ok: true, scopes: defined.filter((n) => names.has(n)) };
}

/**
 * The Gatehouse scopes a resource server may be delegated (issue #41, RFC 8693): reading who the
 * person is and which servers they are in. Nothing that installs, posts or signs in.
 */
export const DELEGABLE_SCOPES: readonly string[] = ['identify', 'email', 'servers'];

/**
 * Delegated scopes as declared (`guilds` for `servers`, as everywhere: DESIGN §1), in canonical
 * order without duplicates, or why not. None is fine: the resource server then cannot exchange.
 */
export function checkDelegatedScopes(names: readonly string[]): { ok: true; scopes: string[] } | { ok: false; reason: string } {
  const wanted = names.map((n) => n.trim()).filter(Boolean);
  if (wanted.length === 0) return { ok: true, scopes: [] };
  const parsed = parseScope(wanted.join(' '));
  const allowed = `It can be ${DELEGABLE_SCOPES.join(', ')} (or guilds).`;
  if (!parsed.ok) return { ok: false, reason: `A delegated scope is not one of this service's scopes. ${allowed}` };
  const refused = parsed.scopes.find((s) => !DELEGABLE_SCOPES.includes(s));
  if (refused !== undefined) return { ok: false, reason: `${refused} cannot be delegated to a resource server. ${allowed}` };
  return { ok: true, scopes: parsed.scopes };
}

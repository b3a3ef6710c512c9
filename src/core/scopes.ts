/**
 * OAuth scopes (SPEC §5.2), in canonical order. Each has the plain-words line the consent screen
 * shows (OAUTH-CHECKLIST A18). `bot` and `applications.commands` are installs (issue #4): the
 * consent screen presents them itself (server picker, permissions, direct messages).
 */
export interface ScopeInfo {
  name: string;
  /** What the person allows, in plain words, completing "This app will be able to …". */
  description: string;
  /** False for scopes that exist in SPEC §5.2 but are not served yet. */
  accepted: boolean;
}

export const SCOPES: readonly ScopeInfo[] = [
  // Issue #22: OpenID Connect sign-in (an ID token beside the access token; docs/oidc.md).
  { name: 'openid', description: 'Sign you in with this account and know your account id', accepted: true },
  // OpenID Connect Core §5.4: the standard scope most OIDC clients ask for by default; it gives the ID
  // token and UserInfo what identify gives them, without access to the Discord-style API.
  { name: 'profile', description: 'Know your name, username and avatar', accepted: true },
  { name: 'identify', description: 'Know your name, username and avatar', accepted: true },
  { name: 'email', description: 'Know your e-mail address', accepted: true },
  { name: 'servers', description: 'See the list of servers you are in and your permissions there', accepted: true },
  { name: 'bot', description: 'Add a bot to a server you choose', accepted: true },
  { name: 'applications.commands', description: 'Use its commands', accepted: true },
  // Issue #23: the consent screen adds a channel picker (incoming-webhook.ts).
  { name: 'webhook.incoming', description: 'Post messages to a channel you choose, through a webhook', accepted: true },
];

/** The scopes that install something (issue #4); a link with only these may omit response_type. */
export const INSTALL_SCOPES: readonly string[] = ['bot', 'applications.commands'];

const BY_NAME = new Map(SCOPES.map((s, index) => [s.name, { ...s, index }]));

/**
 * DESIGN §1: Discord's scope names accepted for ours (passport-discord asks for `identify guilds`).
 * An alias is stored, granted and shown as the scope it names, so consent shows one permission.
 */
export const SCOPE_ALIASES: Readonly<Record<string, string>> = { guilds: 'servers' };

/** Names of the scopes a request may ask for today (RFC 8414 scopes_supported). */
export function supportedScopes(): string[] {
  return SCOPES.filter((s) => s.accepted).map((s) => s.name);
}

/** The consent-screen line for a scope; the name itself for anything unknown. */
export function describeScope(name: string): string {
  return BY_NAME.get(name)?.description ?? name;
}

export type ParsedScope = { ok: true; scopes: string[] } | { ok: false; reason: string };

/**
 * Parses an RFC 6749 §3.3 scope parameter (already URL-decoded): space-delimited names.
 * Empty → not ok; unknown or not-yet-served → not ok; aliases (`guilds`) become the scope they
 * name; duplicates collapse; result in canonical
 * order so that stored and compared scope lists are stable.
 */
export function parseScope(raw: string): ParsedScope {
  // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), delimited by single spaces.
  // Several spaces between names are tolerated (clients join arrays carelessly); other
  // whitespace is not a delimiter and makes the name unknown.
  const names = raw.split(' ').filter((n) => n.length > 0);
  if (names.length === 0) return { ok: false, reason: 'scope must name at least one scope' };
  const seen = new Set<string>();
  for (const name of names) {
    const canonical = Object.hasOwn(SCOPE_ALIASES, name) ? (SCOPE_ALIASES[name] as string) : name;
    const info = BY_NAME.get(canonical);
    if (!info || !info.accepted) return { ok: false, reason: `unknown scope: ${printable(name)}` };
    seen.add(canonical);
  }
  return { ok: true, scopes: canonicalOrder([...seen]) };
}

/** Space-separated, canonical order, no duplicates (the `scope` of responses and of stored rows). */
export function formatScopes(scopes: readonly string[]): string {
  return canonicalOrder([...new Set(scopes)]).join(' ');
}

/** True when every scope of `requested` is in `granted`. */
export function coversScopes(granted: readonly string[], requested: readonly string[]): boolean {
  const have = new Set(granted);
  return requested.every((s) => have.has(s));
}

function canonicalOrder(scopes: string[]): string[] {
  const rank = (s: string) => BY_NAME.get(s)?.index ?? Number.MAX_SAFE_INTEGER;
  return scopes.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * RFC 6749 §4.1.2.1: error_description may only hold %x20-21 / %x23-5B / %x5D-7E; an echoed
 * name is cut short and stripped of anything else.
 */
function printable(text: string): string {
  const cleaned = text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '?');
  return cleaned.length > 40 ? `${cleaned.slice(0, 40)}...` : cleaned;
}

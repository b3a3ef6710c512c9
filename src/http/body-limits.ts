/**
 * How much of a request body each family of routes reads, and the bounds every body parser keeps,
 * so that no request costs more than linear time in its size (issue #21 §1, docs/reliability.md
 * "Attack classes tried"). GATEHOUSE_BODY_LIMIT_BYTES caps every figure here: a route reads
 * the smaller of its own limit and the configured one.
 */

/**
 * Pages take only application/x-www-form-urlencoded bodies, written by people: the largest form
 * is an app's 10 redirect URIs of 2048 characters, percent-encoded (about 61 KiB at worst).
 */
export const PAGE_BODY_LIMIT = 128 * 1024;

/**
 * RFC 6749 §4.1.3 / §6, RFC 7009 §2.1: a handful of parameters, the longest a 2048-character
 * redirect URI (OAUTH-CHECKLIST A6), percent-encoded at most 3 bytes a character.
 */
export const TOKEN_BODY_LIMIT = 8 * 1024;

/**
 * Most fields one form may carry. The largest page form (an app's settings: scopes, permissions,
 * redirect URIs) has well under 200; the token endpoint has 7 parameters.
 */
export const FORM_FIELDS_MAX = 256;

/** Deepest JSON nesting accepted: Discord payloads nest at most 6 levels (message → components → … → emoji). */
export const JSON_DEPTH_MAX = 32;

/** A 4xx error in the shape Fastify's body parsers report, rendered by the one error handler. */
export class BodyRefused extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
    readonly code: string,
  ) {
    super(message);
    this.name = 'BodyRefused';
  }
}

/** Number of `&`-separated fields in a form body, in one pass without allocating. */
export function formFieldCount(text: string): number {
  let count = 1;
  let at = text.indexOf('&');
  while (at !== -1) {
    count += 1;
    at = text.indexOf('&', at + 1);
  }
  return count;
}

/** Refuses a form body with more than FORM_FIELDS_MAX fields (400), before anything parses it. */
export function assertFormFieldCount(text: string): void {
  if (formFieldCount(text) > FORM_FIELDS_MAX) {
    throw new BodyRefused(`The form has more than ${FORM_FIELDS_MAX} fields`, 400, 'FST_ERR_CTP_TOO_MANY_FIELDS');
  }
}

/**
 * application/x-www-form-urlencoded → record, in linear time with WHATWG URLSearchParams (the
 * parser browsers use). A name given more than once keeps every value, in order, so that the
 * caller can refuse it where a protocol forbids repeats (RFC 6749 §3.2). Null prototype, so a
 * field named `__proto__` or `constructor` is an ordinary field.
 */
export function parseForm(text: string): Record<string, string | string[]> {
  assertFormFieldCount(text);
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[name] = [prev, value];
  }
  return out;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests deeper than `max`, found in one pass over its bytes with a counter (no
 * recursion, no allocation), so a megabyte of `[[[[…` is refused before JSON.parse builds it.
 * Brackets inside strings do not count. Malformed input is left for the parser to refuse.
 */
export function jsonNestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i += 1;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

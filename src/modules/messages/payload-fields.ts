import { codePoints } from '../../core/checked.js';
import { addFieldError, type ErrorTree } from '../../core/errors.js';
import { MessageLimits } from './message-limits.js';

/**
 * The field checks shared by the message payload (message-payload.ts) and its embeds (embed.ts):
 * each reads one value, reports any problem at its path in the 50035 tree (DESIGN §1) with
 * Discord's error codes and texts, and returns the accepted value or undefined. Lengths count
 * Unicode code points, as Discord does. Tested through test/unit/message-payload.test.ts.
 */

type Key = string | number;
export type Path = Key[];
export type Obj = Record<string, unknown>;

export const messages = {
  string: 'Must be a string.',
  boolean: 'Must be a boolean.',
  object: 'Only dictionaries may be used in a DictType',
  array: 'Only iterables may be used in a ListType',
  maxLength: (max: number) => `Must be ${max} or fewer in length.`,
  between: (min: number, max: number) => `Must be between ${min} and ${max} in length.`,
  required: 'This field is required',
};

export function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Collects errors at their paths; one pass reports every problem at once. */
export class Errors {
  tree: ErrorTree | undefined;
  /**
   * An error at `path`, or at `key` under it. The validators take their field's parent path
   * and key rather than a path of their own: the path array is built only when there is an error,
   * not for every field of every valid payload (webhook execute is the hot path, DESIGN §5).
   */
  add(path: Path, code: string, message: string, key?: Key): void {
    this.tree ??= {};
    addFieldError(this.tree, key === undefined ? path : [...path, key], { code, message });
  }
}

/** The camelCase key, else its snake_case alias (DESIGN §1: Discord's names are accepted). */
export function pick(obj: Obj, camel: string, snake?: string): unknown {
  const value = obj[camel];
  if (value !== undefined || snake === undefined) return value;
  return obj[snake];
}

export function str(value: unknown, path: Path, key: Key | undefined, errors: Errors, max: number, required = false): string | undefined {
  if (value === undefined || value === null) {
    if (required) errors.add(path, 'BASE_TYPE_REQUIRED', messages.required, key);
    return undefined;
  }
  if (typeof value !== 'string') {
    errors.add(path, 'BASE_TYPE_BAD_TYPE', messages.string, key);
    return undefined;
  }
  if (required && value.trim().length === 0) {
    errors.add(path, 'BASE_TYPE_BAD_LENGTH', messages.between(1, max), key);
    return undefined;
  }
  if (value.length > max && codePoints(value) > max) {
    errors.add(path, 'BASE_TYPE_MAX_LENGTH', messages.maxLength(max), key);
    return undefined;
  }
  return value;
}

const CONTROL_OR_SPACE = /[\s\u0000-\u001f\u007f]/;

/** An absolute http(s) URL of at most MessageLimits.url characters; `httpsOnly` for avatars. */
interface UrlOptions {
  required?: boolean;
  httpsOnly?: boolean;
}

// Shared, so a call without options allocates none (every embed field is checked on execute).
const ANY_URL: UrlOptions = {};
export const REQUIRED_URL: UrlOptions = { required: true };
export const HTTPS_URL: UrlOptions = { httpsOnly: true };

export function url(value: unknown, path: Path, key: Key | undefined, errors: Errors, options: UrlOptions = ANY_URL): string | undefined {
  const s = str(value, path, key, errors, MessageLimits.url, options.required);
  if (s === undefined) return undefined;
  return checkUrl(s, path, key, errors, options.httpsOnly ?? false);
}

function checkUrl(s: string, path: Path, key: Key | undefined, errors: Errors, httpsOnly: boolean): string | undefined {
  let parsed: URL | undefined;
  if (!CONTROL_OR_SPACE.test(s)) {
    try {
      parsed = new URL(s);
    } catch {
      parsed = undefined;
    }
  }
  if (!parsed) {
    errors.add(path, 'URL_TYPE_INVALID_URL', 'Not a well formed URL.', key);
    return undefined;
  }
  const scheme = parsed.protocol.slice(0, -1);
  const allowed = httpsOnly ? ['https'] : ['http', 'https'];
  if (!allowed.includes(scheme)) {
    errors.add(path, 'URL_TYPE_INVALID_SCHEME', `Scheme "${scheme}" is not supported. Scheme must be one of (${allowed.map((a) => `'${a}'`).join(', ')}).`, key);
    return undefined;
  }
  if (parsed.hostname === '' || parsed.username !== '' || parsed.password !== '') {
    errors.add(path, 'URL_TYPE_INVALID_URL', 'Not a well formed URL.', key);
    return undefined;
  }
  return s;
}

// ISO 8601 date-time: date, optional time with optional fraction, optional zone.
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

export function timestamp(value: unknown, path: Path, key: Key, errors: Errors): string | undefined {
  if (value === undefined || value === null) return undefined;
  const match = typeof value === 'string' ? ISO_8601.exec(value) : null;
  if (!match) {
    errors.add(path, 'DATE_TIME_TYPE_PARSE', 'Could not parse the timestamp. It should be ISO 8601 (2026-01-02T03:04:05Z).', key);
    return undefined;
  }
  // A time without a zone is taken as UTC, not the server's local time.
  const text = value as string;
  const withZone = match[4] !== undefined && match[7] === undefined ? `${text}Z` : text;
  const ms = Date.parse(withZone.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(ms)) {
    errors.add(path, 'DATE_TIME_TYPE_PARSE', 'Could not parse the timestamp. It should be ISO 8601 (2026-01-02T03:04:05Z).', key);
    return undefined;
  }
  return new Date(ms).toISOString();
}

export function color(value: unknown, path: Path, key: Key, errors: Errors): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    errors.add(path, 'NUMBER_TYPE_COERCE', 'Must be an integer (0x000000 to 0xFFFFFF).', key);
    return undefined;
  }
  if (value < 0 || value > MessageLimits.color) {
    errors.add(path, value < 0 ? 'NUMBER_TYPE_MIN' : 'NUMBER_TYPE_MAX', `Must be between 0 and ${MessageLimits.color}.`, key);
    return undefined;
  }
  return value;
}

export function dict(value: unknown, path: Path, key: Key, errors: Errors): Obj | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    errors.add(path, 'DICT_TYPE_CONVERT', messages.object, key);
    return undefined;
  }
  return value;
}

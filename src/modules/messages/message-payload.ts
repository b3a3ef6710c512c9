import { codePoints } from '../../core/checked.js';
import { addFieldError, ApiErrors, type ApiError, type ErrorTree, type FieldError } from '../../core/errors.js';
import { actorNameProblem } from '../../core/names.js';

/**
 * The message payload of webhook execute and of bot messages (SPEC §2.9, issue #5 "Execute"),
 * parsed by hand rather than by a JSON schema: Discord clients send keys we must ignore (tts,
 * nonce, allowed_mentions, components…), snake_case aliases (avatar_url, icon_url), and limits that
 * count Unicode code points and sum over embeds, and every failure must land at its field path
 * in the 50035 error tree (DESIGN §1).
 *
 * Lengths are counted in Unicode code points (`[...s].length`), as Discord does: 😀 counts 1, but
 * an emoji with a variation selector (❤️ = 2), a ZWJ sequence (👩‍💻 = 3), a flag (🇫🇷 = 2) or a
 * letter with a combining mark (é written as e + U+0301 = 2) counts each of its code points.
 */

/** SPEC §8 and Discord's embed limits; all lengths in code points. */
export const MessageLimits = {
  content: 2000,
  embeds: 10,
  embedTotal: 6000,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footerText: 2048,
  authorName: 256,
  url: 2048,
  username: 80,
  color: 0xffffff,
} as const;

export interface EmbedField {
  name: string;
  value: string;
  inline: boolean;
}

/** An embed as stored and returned: camelCase, only the fields we know, absent ones left out. */
export interface Embed {
  title?: string;
  description?: string;
  url?: string;
  /** ISO 8601, normalised to UTC (`2026-01-02T03:04:05.000Z`). */
  timestamp?: string;
  color?: number;
  footer?: { text: string; iconUrl?: string };
  image?: { url: string };
  thumbnail?: { url: string };
  author?: { name: string; url?: string; iconUrl?: string };
  fields?: EmbedField[];
}

/**
 * A parsed payload. With `partial`, an absent key means "unchanged"; `content: ''` and
 * `embeds: []` mean "cleared" (sent as null or empty).
 */
export interface MessagePayload {
  content?: string;
  embeds?: Embed[];
  /** Display-name override for this message (identityOverride only), trimmed. */
  username?: string;
  /** Avatar override for this message (identityOverride only), https. */
  avatarUrl?: string;
}

export interface ParseOptions {
  /** Webhook execute: username/avatarUrl may override the author for this message. */
  identityOverride: boolean;
  /** GATEHOUSE_SERVICE_NAME, for the impersonation rule. */
  serviceName: string;
  /** Edits (PATCH): absent fields stay as they are, but the result must still not be empty. */
  partial?: boolean;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: ApiError };

type Key = string | number;
type Path = Key[];
type Obj = Record<string, unknown>;

const messages = {
  string: 'Must be a string.',
  boolean: 'Must be a boolean.',
  object: 'Only dictionaries may be used in a DictType',
  array: 'Only iterables may be used in a ListType',
  maxLength: (max: number) => `Must be ${max} or fewer in length.`,
  between: (min: number, max: number) => `Must be between ${min} and ${max} in length.`,
  required: 'This field is required',
};

/** Unicode code points in `s` (what every limit here counts). */
export function countCodePoints(s: string): number {
  return codePoints(s);
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Collects errors at their paths; one pass reports every problem at once. */
class Errors {
  tree: ErrorTree | undefined;
  /**
   * An error at `path`, or at `key` under it. The validators below take their field's parent path
   * and key rather than a path of their own: the path array is built only when there is an error,
   * not for every field of every valid payload (webhook execute is the hot path, DESIGN §5).
   */
  add(path: Path, code: string, message: string, key?: Key): void {
    this.tree ??= {};
    addFieldError(this.tree, key === undefined ? path : [...path, key], { code, message });
  }
}

/** The camelCase key, else its snake_case alias (DESIGN §1: Discord's names are accepted). */
function pick(obj: Obj, camel: string, snake?: string): unknown {
  const value = obj[camel];
  if (value !== undefined || snake === undefined) return value;
  return obj[snake];
}

function str(value: unknown, path: Path, key: Key | undefined, errors: Errors, max: number, required = false): string | undefined {
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

/** An absolute http(s) URL of at most 2048 characters; `httpsOnly` for avatars. */
interface UrlOptions {
  required?: boolean;
  httpsOnly?: boolean;
}

// Shared, so a call without options allocates none (every embed field is checked on execute).
const ANY_URL: UrlOptions = {};
const REQUIRED_URL: UrlOptions = { required: true };
const HTTPS_URL: UrlOptions = { httpsOnly: true };

function url(value: unknown, path: Path, key: Key | undefined, errors: Errors, options: UrlOptions = ANY_URL): string | undefined {
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

function timestamp(value: unknown, path: Path, key: Key, errors: Errors): string | undefined {
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

function color(value: unknown, path: Path, key: Key, errors: Errors): number | undefined {
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

function dict(value: unknown, path: Path, key: Key, errors: Errors): Obj | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    errors.add(path, 'DICT_TYPE_CONVERT', messages.object, key);
    return undefined;
  }
  return value;
}

interface EmbedResult {
  embed: Embed;
  /** Characters counted towards the 6000 over all embeds. */
  size: number;
  /** Whether it shows anything at all (an embed of only a color is empty). */
  visible: boolean;
}

function parseEmbed(raw: unknown, path: Path, errors: Errors): EmbedResult | undefined {
  if (!isObject(raw)) {
    errors.add(path, 'DICT_TYPE_CONVERT', messages.object);
    return undefined;
  }
  const embed: Embed = {};
  let size = 0;
  const title = str(raw['title'], path, 'title', errors, MessageLimits.title);
  if (title !== undefined) {
    embed.title = title;
    size += codePoints(title);
  }
  const description = str(raw['description'], path, 'description', errors, MessageLimits.description);
  if (description !== undefined) {
    embed.description = description;
    size += codePoints(description);
  }
  const link = url(raw['url'], path, 'url', errors);
  if (link !== undefined) embed.url = link;
  const time = timestamp(raw['timestamp'], path, 'timestamp', errors);
  if (time !== undefined) embed.timestamp = time;
  const c = color(raw['color'], path, 'color', errors);
  if (c !== undefined) embed.color = c;

  const footer = dict(raw['footer'], path, 'footer', errors);
  if (footer) {
    const footerPath = [...path, 'footer'];
    const text = str(footer['text'], footerPath, 'text', errors, MessageLimits.footerText, true);
    const iconUrl = url(pick(footer, 'iconUrl', 'icon_url'), footerPath, 'iconUrl', errors);
    if (text !== undefined) {
      embed.footer = iconUrl === undefined ? { text } : { text, iconUrl };
      size += codePoints(text);
    }
  }
  for (const key of ['image', 'thumbnail'] as const) {
    const media = dict(raw[key], path, key, errors);
    if (media) {
      const mediaUrl = url(media['url'], [...path, key], 'url', errors, REQUIRED_URL);
      if (mediaUrl !== undefined) embed[key] = { url: mediaUrl };
    }
  }
  const author = dict(raw['author'], path, 'author', errors);
  if (author) {
    const authorPath = [...path, 'author'];
    const name = str(author['name'], authorPath, 'name', errors, MessageLimits.authorName, true);
    const authorUrl = url(author['url'], authorPath, 'url', errors);
    const iconUrl = url(pick(author, 'iconUrl', 'icon_url'), authorPath, 'iconUrl', errors);
    if (name !== undefined) {
      embed.author = { name, ...(authorUrl !== undefined && { url: authorUrl }), ...(iconUrl !== undefined && { iconUrl }) };
      size += codePoints(name);
    }
  }

  const fieldsRaw = raw['fields'];
  if (fieldsRaw !== undefined && fieldsRaw !== null) {
    if (!Array.isArray(fieldsRaw)) {
      errors.add([...path, 'fields'], 'LIST_TYPE_CONVERT', messages.array);
    } else if (fieldsRaw.length > MessageLimits.fields) {
      errors.add([...path, 'fields'], 'BASE_TYPE_MAX_LENGTH', messages.maxLength(MessageLimits.fields));
    } else {
      const fields: EmbedField[] = [];
      fieldsRaw.forEach((f: unknown, i) => {
        const fieldPath = [...path, 'fields', i];
        if (!isObject(f)) {
          errors.add(fieldPath, 'DICT_TYPE_CONVERT', messages.object);
          return;
        }
        const name = str(f['name'], fieldPath, 'name', errors, MessageLimits.fieldName, true);
        const value = str(f['value'], fieldPath, 'value', errors, MessageLimits.fieldValue, true);
        const inline = f['inline'];
        if (inline !== undefined && inline !== null && typeof inline !== 'boolean') errors.add([...fieldPath, 'inline'], 'BASE_TYPE_BAD_TYPE', messages.boolean);
        if (name !== undefined && value !== undefined) {
          fields.push({ name, value, inline: inline === true });
          size += codePoints(name) + codePoints(value);
        }
      });
      if (fields.length > 0) embed.fields = fields;
    }
  }
  return { embed, size, visible: embedIsVisible(embed) };
}

/**
 * A display name (a webhook's name, or a message's username override): a string of 1–80 code
 * points after trimming, without control, invisible or text-direction characters, that does not
 * pass for the service (core/names.ts, core/impersonation.ts). Returns the trimmed name or the field error to report at its path.
 */
export function checkDisplayName(value: unknown, serviceName: string): { ok: true; value: string } | { ok: false; error: FieldError } {
  if (typeof value !== 'string') return { ok: false, error: { code: 'BASE_TYPE_BAD_TYPE', message: messages.string } };
  const name = value.trim();
  const length = codePoints(name);
  if (length < 1 || length > MessageLimits.username) return { ok: false, error: { code: 'BASE_TYPE_BAD_LENGTH', message: messages.between(1, MessageLimits.username) } };
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return { ok: false, error: { code: 'USERNAME_INVALID', message: 'Names cannot contain line breaks or control characters' } };
  // Issue #21 §4: invisible and text-direction characters too (core/names.ts).
  const problem = actorNameProblem(name, serviceName);
  if (problem !== undefined) return { ok: false, error: { code: 'USERNAME_INVALID', message: problem.message } };
  return { ok: true, value: name };
}

/**
 * An https avatar URL of at most 2048 characters, or the field error at its path. null and
 * undefined are "no avatar" and returned as null.
 */
export function checkAvatarUrl(value: unknown): { ok: true; value: string | null } | { ok: false; error: FieldError } {
  if (value === undefined || value === null) return { ok: true, value: null };
  const errors = new Errors();
  const result = url(value, [], undefined, errors, HTTPS_URL);
  if (result === undefined) {
    const first = errors.tree?.['_errors'];
    return { ok: false, error: Array.isArray(first) && first[0] ? first[0] : { code: 'URL_TYPE_INVALID_URL', message: 'Not a well formed URL.' } };
  }
  return { ok: true, value: result };
}

/**
 * Parses and validates a message payload (rules in docs/webhooks.md, "Execute"). Every problem
 * is reported at once in a 50035 tree; a payload with neither content nor a visible embed is 50006.
 */
export function parseMessagePayload(body: unknown, options: ParseOptions): ParseResult<MessagePayload> {
  const errors = new Errors();
  if (!isObject(body)) {
    errors.add([], 'DICT_TYPE_CONVERT', messages.object);
    return { ok: false, error: ApiErrors.invalidFormBody(errors.tree ?? {}) };
  }
  const partial = options.partial === true;
  const value: MessagePayload = {};

  const contentRaw = body['content'];
  let hasContent = false;
  if (contentRaw === null) {
    if (partial) value.content = '';
  } else if (contentRaw !== undefined) {
    const content = str(contentRaw, [], 'content', errors, MessageLimits.content);
    // PostgreSQL text cannot hold U+0000; refuse it rather than store something else.
    if (content?.includes('\u0000')) errors.add(['content'], 'BASE_TYPE_INVALID', 'Must not contain the NUL character (U+0000).');
    else if (content !== undefined) {
      value.content = content;
      hasContent = content.trim().length > 0;
    }
  }

  const embedsRaw = body['embeds'];
  let hasEmbed = false;
  if (embedsRaw === null) {
    if (partial) value.embeds = [];
  } else if (embedsRaw !== undefined) {
    if (!Array.isArray(embedsRaw)) {
      errors.add(['embeds'], 'LIST_TYPE_CONVERT', messages.array);
    } else if (embedsRaw.length > MessageLimits.embeds) {
      errors.add(['embeds'], 'BASE_TYPE_MAX_LENGTH', messages.maxLength(MessageLimits.embeds));
    } else {
      const embeds: Embed[] = [];
      let total = 0;
      embedsRaw.forEach((raw: unknown, i) => {
        const parsed = parseEmbed(raw, ['embeds', i], errors);
        if (!parsed) return;
        embeds.push(parsed.embed);
        total += parsed.size;
        hasEmbed ||= parsed.visible;
      });
      if (total > MessageLimits.embedTotal) {
        errors.add(['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', `Embed size exceeds maximum size of ${MessageLimits.embedTotal}`);
      }
      value.embeds = embeds;
    }
  }

  // SPEC §2.9: the identity override exists for webhook execute only; edits cannot change it.
  if (options.identityOverride && !partial) {
    const username = body['username'];
    if (username !== undefined && username !== null) {
      const checked = checkDisplayName(username, options.serviceName);
      if (checked.ok) value.username = checked.value;
      else errors.add(['username'], checked.error.code, checked.error.message);
    }
    const avatarRaw = pick(body, 'avatarUrl', 'avatar_url');
    if (avatarRaw !== undefined && avatarRaw !== null) {
      const avatar = url(avatarRaw, [], 'avatarUrl', errors, HTTPS_URL);
      if (avatar !== undefined) value.avatarUrl = avatar;
    }
  }

  if (errors.tree) return { ok: false, error: ApiErrors.invalidFormBody(errors.tree) };
  // For an edit that leaves one side unchanged, the service decides emptiness against the stored
  // message (messageIsEmpty); here only what the body itself says.
  if (!partial && !hasContent && !hasEmbed) return { ok: false, error: ApiErrors.emptyMessage() };
  if (partial) {
    const nothingSent = value.content === undefined && value.embeds === undefined;
    const bothCleared = value.content !== undefined && value.embeds !== undefined && messageIsEmpty(value.content, value.embeds);
    if (nothingSent || bothCleared) return { ok: false, error: ApiErrors.emptyMessage() };
  }
  return { ok: true, value };
}

/** Whether an embed shows anything: one with only a color, url or timestamp does not. */
function embedIsVisible(e: Embed): boolean {
  return (
    (e.title?.trim().length ?? 0) > 0 ||
    (e.description?.trim().length ?? 0) > 0 ||
    e.fields !== undefined ||
    e.footer !== undefined ||
    e.author !== undefined ||
    e.image !== undefined ||
    e.thumbnail !== undefined
  );
}

/**
 * True when a message with this content and these embeds would show nothing (50006). Edits call
 * it on the stored message merged with the partial payload.
 */
export function messageIsEmpty(content: string, embeds: readonly Embed[]): boolean {
  return content.trim().length === 0 && !embeds.some(embedIsVisible);
}

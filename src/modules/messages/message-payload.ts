import { codePoints } from '../../core/checked.js';
import { ApiErrors, type ApiError, type FieldError } from '../../core/errors.js';
import { actorNameProblem } from '../../core/names.js';
import { messageIsEmpty, parseEmbed, type Embed } from './embed.js';
import { MessageLimits } from './message-limits.js';
import { Errors, HTTPS_URL, isObject, messages, pick, str, url, type Obj } from './payload-fields.js';

/**
 * The message payload of webhook execute and of bot messages (SPEC §2.9, issue #5 "Execute"),
 * parsed by hand rather than by a JSON schema: Discord clients send keys we must ignore (tts,
 * nonce, allowed_mentions, components…), snake_case aliases (avatar_url, icon_url), and limits that
 * count Unicode code points and sum over embeds, and every failure must land at its field path
 * in the 50035 error tree (DESIGN §1). Embeds are parsed by embed.ts; the limits are
 * message-limits.ts, the table the OpenAPI schemas read too.
 *
 * Lengths are counted in Unicode code points (`[...s].length`), as Discord does: 😀 counts 1, but
 * an emoji with a variation selector (❤️ = 2), a ZWJ sequence (👩‍💻 = 3), a flag (🇫🇷 = 2) or a
 * letter with a combining mark (é written as e + U+0301 = 2) counts each of its code points.
 * Tested by test/unit/message-payload.test.ts.
 */

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
  /**
   * Issue #42 §2: the names of the files this message carries (uploaded with it, or kept by an
   * edit), which an embed's image or thumbnail may name as `attachment://name`; a message with
   * files is not empty without content or embeds.
   */
  attachmentNames?: ReadonlySet<string>;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/** Unicode code points in `s` (what every limit here counts). */
export function countCodePoints(s: string): number {
  return codePoints(s);
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
  const hasContent = parseContent(body['content'], partial, errors, value);
  const hasEmbed = parseEmbeds(body['embeds'], partial, errors, value, options.serviceName, options.attachmentNames);
  const hasFiles = options.attachmentNames !== undefined && options.attachmentNames.size > 0;
  // SPEC §2.9: the identity override exists for webhook execute only; edits cannot change it.
  if (options.identityOverride && !partial) parseIdentity(body, options.serviceName, errors, value);

  if (errors.tree) return { ok: false, error: ApiErrors.invalidFormBody(errors.tree) };
  if (!hasFiles && isEmptyPayload(value, partial, hasContent || hasEmbed)) return { ok: false, error: ApiErrors.emptyMessage() };
  return { ok: true, value };
}

/** Sets value.content; true when it shows something. null clears it in an edit. */
function parseContent(contentRaw: unknown, partial: boolean, errors: Errors, value: MessagePayload): boolean {
  if (contentRaw === null) {
    if (partial) value.content = '';
    return false;
  }
  if (contentRaw === undefined) return false;
  const content = str(contentRaw, [], 'content', errors, MessageLimits.content);
  // PostgreSQL text cannot hold U+0000; refuse it rather than store something else.
  if (content?.includes('\u0000')) {
    errors.add(['content'], 'BASE_TYPE_INVALID', 'Must not contain the NUL character (U+0000).');
    return false;
  }
  if (content === undefined) return false;
  value.content = content;
  return content.trim().length > 0;
}

/** Sets value.embeds; true when one of them is visible. null clears them in an edit. */
function parseEmbeds(embedsRaw: unknown, partial: boolean, errors: Errors, value: MessagePayload, serviceName: string, attachmentNames: ReadonlySet<string> | undefined): boolean {
  if (embedsRaw === null) {
    if (partial) value.embeds = [];
    return false;
  }
  if (embedsRaw === undefined) return false;
  if (!Array.isArray(embedsRaw)) {
    errors.add(['embeds'], 'LIST_TYPE_CONVERT', messages.array);
    return false;
  }
  if (embedsRaw.length > MessageLimits.embeds) {
    errors.add(['embeds'], 'BASE_TYPE_MAX_LENGTH', messages.maxLength(MessageLimits.embeds));
    return false;
  }
  const embeds: Embed[] = [];
  let total = 0;
  let visible = false;
  embedsRaw.forEach((raw: unknown, i) => {
    const parsed = parseEmbed(raw, ['embeds', i], errors, serviceName, attachmentNames);
    if (!parsed) return;
    embeds.push(parsed.embed);
    total += parsed.size;
    visible ||= parsed.visible;
  });
  if (total > MessageLimits.embedTotal) {
    errors.add(['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', `Embed size exceeds maximum size of ${MessageLimits.embedTotal}`);
  }
  value.embeds = embeds;
  return visible;
}

/** The per-message username and avatar of webhook execute (SPEC §2.9). */
function parseIdentity(body: Obj, serviceName: string, errors: Errors, value: MessagePayload): void {
  const username = body['username'];
  if (username !== undefined && username !== null) {
    const checked = checkDisplayName(username, serviceName);
    if (checked.ok) value.username = checked.value;
    else errors.add(['username'], checked.error.code, checked.error.message);
  }
  const avatarRaw = pick(body, 'avatarUrl', 'avatar_url');
  if (avatarRaw !== undefined && avatarRaw !== null) {
    const avatar = url(avatarRaw, [], 'avatarUrl', errors, HTTPS_URL);
    if (avatar !== undefined) value.avatarUrl = avatar;
  }
}

/**
 * 50006. For an edit that leaves one side unchanged, the service decides emptiness against the
 * stored message (messageIsEmpty); here only what the body itself says.
 */
function isEmptyPayload(value: MessagePayload, partial: boolean, showsSomething: boolean): boolean {
  if (!partial) return !showsSomething;
  const nothingSent = value.content === undefined && value.embeds === undefined;
  const bothCleared = value.content !== undefined && value.embeds !== undefined && messageIsEmpty(value.content, value.embeds);
  return nothingSent || bothCleared;
}

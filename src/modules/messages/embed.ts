import { codePoints } from '../../core/checked.js';
import { actorNameProblem } from '../../core/names.js';
import { MessageLimits } from './message-limits.js';
import { color, dict, isObject, messages, pick, REQUIRED_URL, str, timestamp, url, type Errors, type Obj, type Path } from './payload-fields.js';

/**
 * One embed of a message payload (SPEC §2.9, Discord's embed object): parsed field by field into
 * the stored camelCase shape, with the code points it adds to the 6000 shared by all embeds of a
 * message. Every problem is reported at its path (embeds.N.field…) in the one 50035 tree.
 * Tested by test/unit/message-payload.test.ts and test/http/webhook-execute.test.ts.
 */

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

interface EmbedResult {
  embed: Embed;
  /** Characters counted towards the 6000 over all embeds. */
  size: number;
  /** Whether it shows anything at all (an embed of only a color is empty). */
  visible: boolean;
}

/**
 * Parses `raw` at `path` (['embeds', i]); undefined when it is not an object at all. `serviceName`
 * (GATEHOUSE_SERVICE_NAME) is for the author name's rule (parseAuthor). `attachmentNames`: the
 * files uploaded with this message, which image and thumbnail may name as `attachment://name`.
 */
export function parseEmbed(raw: unknown, path: Path, errors: Errors, serviceName: string, attachmentNames?: ReadonlySet<string>): EmbedResult | undefined {
  if (!isObject(raw)) {
    errors.add(path, 'DICT_TYPE_CONVERT', messages.object);
    return undefined;
  }
  const embed: Embed = {};
  // Each part sets its keys on `embed` and returns the code points it counts towards the total.
  const size =
    parseTopLevel(raw, path, errors, embed) +
    parseFooter(raw, path, errors, embed) +
    parseMedia(raw, path, errors, embed, attachmentNames) +
    parseAuthor(raw, path, errors, embed, serviceName) +
    parseFields(raw, path, errors, embed);
  return { embed, size, visible: embedIsVisible(embed) };
}

function parseTopLevel(raw: Obj, path: Path, errors: Errors, embed: Embed): number {
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
  return size;
}

function parseFooter(raw: Obj, path: Path, errors: Errors, embed: Embed): number {
  const footer = dict(raw['footer'], path, 'footer', errors);
  if (!footer) return 0;
  const footerPath = [...path, 'footer'];
  const text = str(footer['text'], footerPath, 'text', errors, MessageLimits.footerText, true);
  const iconUrl = url(pick(footer, 'iconUrl', 'icon_url'), footerPath, 'iconUrl', errors);
  if (text === undefined) return 0;
  embed.footer = iconUrl === undefined ? { text } : { text, iconUrl };
  return codePoints(text);
}

/** Discord's reference to a file of the same message (issue #42 §2). */
export const ATTACHMENT_SCHEME = 'attachment://';

/**
 * image and thumbnail: an object with a required http(s) url, or `attachment://name` naming a file
 * uploaded with the message (kept as written: the signed URL is made when it is shown, files.service.ts);
 * they count nothing.
 */
function parseMedia(raw: Obj, path: Path, errors: Errors, embed: Embed, attachmentNames: ReadonlySet<string> | undefined): number {
  for (const key of ['image', 'thumbnail'] as const) {
    const media = dict(raw[key], path, key, errors);
    const given = media?.['url'];
    if (typeof given === 'string' && given.startsWith(ATTACHMENT_SCHEME)) {
      if (attachmentNames?.has(given.slice(ATTACHMENT_SCHEME.length))) embed[key] = { url: given };
      else errors.add([...path, key], 'ATTACHMENT_NOT_FOUND', `No file named "${given.slice(ATTACHMENT_SCHEME.length, 200)}" was uploaded with this message.`, 'url');
      continue;
    }
    if (media) {
      const mediaUrl = url(media['url'], [...path, key], 'url', errors, REQUIRED_URL);
      if (mediaUrl !== undefined) embed[key] = { url: mediaUrl };
    }
  }
  return 0;
}

/**
 * The author line is drawn at the top of the embed, bold and with its own icon, as who is
 * speaking: issue #36 §5 holds its name to the actor-name rule of webhook names and usernames
 * (core/names.ts: no control, invisible or text-direction characters; nothing that passes for the
 * service or is a reserved word such as "System"), so an app cannot dress a notice as the
 * platform's own inside its message.
 */
function parseAuthor(raw: Obj, path: Path, errors: Errors, embed: Embed, serviceName: string): number {
  const author = dict(raw['author'], path, 'author', errors);
  if (!author) return 0;
  const authorPath = [...path, 'author'];
  let name = str(author['name'], authorPath, 'name', errors, MessageLimits.authorName, true);
  const authorUrl = url(author['url'], authorPath, 'url', errors);
  const iconUrl = url(pick(author, 'iconUrl', 'icon_url'), authorPath, 'iconUrl', errors);
  const problem = name === undefined ? undefined : actorNameProblem(name.trim(), serviceName);
  if (problem !== undefined) {
    errors.add(authorPath, 'USERNAME_INVALID', problem.kind === 'invisible' ? problem.message : `${problem.message}.`, 'name');
    name = undefined;
  }
  if (name === undefined) return 0;
  embed.author = { name, ...(authorUrl !== undefined && { url: authorUrl }), ...(iconUrl !== undefined && { iconUrl }) };
  return codePoints(name);
}

function parseFields(raw: Obj, path: Path, errors: Errors, embed: Embed): number {
  const fieldsRaw = raw['fields'];
  if (fieldsRaw === undefined || fieldsRaw === null) return 0;
  if (!Array.isArray(fieldsRaw)) {
    errors.add([...path, 'fields'], 'LIST_TYPE_CONVERT', messages.array);
    return 0;
  }
  if (fieldsRaw.length > MessageLimits.fields) {
    errors.add([...path, 'fields'], 'BASE_TYPE_MAX_LENGTH', messages.maxLength(MessageLimits.fields));
    return 0;
  }
  let size = 0;
  const fields: EmbedField[] = [];
  fieldsRaw.forEach((f: unknown, i) => {
    const field = parseField(f, [...path, 'fields', i], errors);
    if (field === undefined) return;
    fields.push(field);
    size += codePoints(field.name) + codePoints(field.value);
  });
  if (fields.length > 0) embed.fields = fields;
  return size;
}

function parseField(f: unknown, fieldPath: Path, errors: Errors): EmbedField | undefined {
  if (!isObject(f)) {
    errors.add(fieldPath, 'DICT_TYPE_CONVERT', messages.object);
    return undefined;
  }
  const name = str(f['name'], fieldPath, 'name', errors, MessageLimits.fieldName, true);
  const value = str(f['value'], fieldPath, 'value', errors, MessageLimits.fieldValue, true);
  const inline = f['inline'];
  if (inline !== undefined && inline !== null && typeof inline !== 'boolean') errors.add([...fieldPath, 'inline'], 'BASE_TYPE_BAD_TYPE', messages.boolean);
  if (name === undefined || value === undefined) return undefined;
  return { name, value, inline: inline === true };
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

import { MessageLimits } from '../messages/message-limits.js';

/**
 * Slack's incoming-webhook payload (https://api.slack.com/messaging/webhooks) mapped to the
 * payload plain execute validates (SPEC §2.9, Discord's field names), so POST …/{token}/slack
 * goes through exactly the rules of POST …/{token}: limits, impersonation, emptiness. Pure: no
 * Fastify, no Kysely. docs/webhooks.md "Slack-compatible execute" shows every mapping.
 *
 * The mapping never produces something the execute rules refuse for being too long or for a bad
 * URL: texts are cut to their limits (ending in "…"), URLs that are not absolute http(s) are
 * dropped, at most 10 embeds with 25 fields each and 6000 characters over all are kept. What
 * the sender chose (`username`, `icon_url`) is passed as is, so the impersonation rule and the
 * avatar's https rule answer exactly as on plain execute.
 */

/** Slack's attachment colours by name (Slack's own palette). */
export const SLACK_COLORS: Readonly<Record<string, number>> = { good: 0x2eb886, warning: 0xdaa038, danger: 0xa30200 };

/** The execute payload this produces (Discord's names; message-payload.ts validates it). */
export interface MappedEmbed {
  title?: string;
  description?: string;
  url?: string;
  timestamp?: string;
  color?: number;
  author?: { name: string; url?: string; icon_url?: string };
  footer?: { text: string; icon_url?: string };
  image?: { url: string };
  thumbnail?: { url: string };
  fields?: { name: string; value: string; inline: boolean }[];
}

export interface MappedPayload {
  content?: string;
  embeds?: MappedEmbed[];
  username?: unknown;
  avatar_url?: unknown;
}

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Cut to `max` code points, ending in "…" when cut. */
export function cut(value: string, max: number): string {
  if (value.length <= max) return value;
  const points = [...value];
  return points.length <= max ? value : `${points.slice(0, max - 1).join('')}…`;
}

function codePoints(value: string): number {
  return [...value].length;
}

/** An absolute http(s) URL, or undefined (execute would refuse anything else). */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MessageLimits.url || /[\s\u0000-\u001f\u007f]/.test(value)) return undefined;
  try {
    const parsed = new URL(value);
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '' || parsed.username !== '' || parsed.password !== '') return undefined;
    return value;
  } catch {
    return undefined;
  }
}

/** Slack escapes exactly these three in text (https://api.slack.com/reference/surfaces/formatting#escaping). */
function unescapeSlack(value: string): string {
  return value.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * A Slack `<…>` token as plain text: links become Markdown links, mentions and special commands
 * become their visible label. Webhook messages never mention anyone (SPEC §2.10), so `@here`
 * stays literal text that notifies nobody.
 */
function slackToken(inner: string): string {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : inner.slice(bar + 1);
  if (target.startsWith('!')) {
    const command = target.slice(1).split('^')[0] ?? '';
    // <!here>, <!channel>, <!everyone>: shown as the words Slack shows, inert here.
    if (command === 'here' || command === 'channel' || command === 'everyone') return `@${command}`;
    if (command === 'subteam') return label === undefined ? '@team' : label.startsWith('@') ? label : `@${label}`;
    // <!date^…|fallback> and other commands: their fallback text.
    return label ?? command;
  }
  if (target.startsWith('@')) return `@${label ?? target.slice(1)}`;
  if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
  const url = httpUrl(unescapeSlack(target)) ?? (target.startsWith('mailto:') ? target : undefined);
  if (url === undefined) return unescapeSlack(label ?? target);
  return label === undefined || label === url ? url : `[${unescapeSlack(label).replace(/[[\]]/g, '')}](${url})`;
}

/**
 * Slack mrkdwn → Gatehouse markdown (messages/markdown.ts): `*bold*` → `**bold**`, `_italic_`
 * stays, `~strike~` → `~~strike~~`, `<url|label>` → `[label](url)`, `<!here>`/`<@U…>`/`<#C…>` →
 * inert `@here`/`@U…`/`#C…`, `&lt; &gt; &amp;` unescaped. Code spans and blocks are kept as they
 * are. Each pattern scans to the next delimiter on its line at most once, so the cost grows
 * linearly with the text (DESIGN §5).
 */
export function mrkdwnToMarkdown(source: string): string {
  // Placeholders keep converted <…> tokens out of the emphasis rules; the input cannot contain them.
  const parts = source.replace(/[\u0000\u0001]/g, '').split(/(```[\s\S]*?```|`[^`\n]+`)/);
  return parts
    .map((part, index) => {
      // Odd indexes are the code spans captured by the split: nothing inside code is converted.
      if (index % 2 === 1) return unescapeSlack(part);
      const tokens: string[] = [];
      const converted = part
        .replace(/<([^<>\n]+)>/g, (_m, inner: string) => `\u0000${tokens.push(slackToken(inner)) - 1}\u0001`)
        .replace(/(^|[^\w*\\])\*([^*\n]+)\*(?![\w*])/g, (_m, before: string, inner: string) => `${before}**${inner}**`)
        .replace(/(^|[^\w~\\])~([^~\n]+)~(?![\w~])/g, (_m, before: string, inner: string) => `${before}~~${inner}~~`);
      return unescapeSlack(converted).replace(/\u0000(\d+)\u0001/g, (_m, i: string) => tokens[Number(i)] ?? '');
    })
    .join('');
}

/** Slack `color`: a hex (`#36a64f`, `36a64f`, `#fff`) or good/warning/danger. */
export function slackColor(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const named = SLACK_COLORS[value.toLowerCase()];
  if (named !== undefined) return named;
  const hex = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(value.trim())?.[1];
  if (hex === undefined) return undefined;
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
  return Number.parseInt(full, 16);
}

/** Slack `ts`: epoch seconds as a number or a string ("1503435956" or "1503435956.000200"). */
function slackTimestamp(value: unknown): string | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,12}(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 253402300799) return undefined;
  return new Date(Math.round(seconds * 1000)).toISOString();
}

/** A Slack text object (`{type: 'mrkdwn'|'plain_text', text}`) or a plain string, as markdown. */
function textObject(value: unknown): string | undefined {
  if (typeof value === 'string') return text(value) === undefined ? undefined : mrkdwnToMarkdown(value);
  if (!isObject(value)) return undefined;
  const t = text(value['text']);
  if (t === undefined) return undefined;
  return value['type'] === 'mrkdwn' ? mrkdwnToMarkdown(t) : t;
}

function field(name: string | undefined, value: string | undefined, inline: boolean): { name: string; value: string; inline: boolean } | undefined {
  if (name === undefined && value === undefined) return undefined;
  // An embed field needs a name and a value; Slack's may lack either (Discord's zero-width convention).
  return { name: cut(name ?? '\u200b', MessageLimits.fieldName), value: cut(value ?? '\u200b', MessageLimits.fieldValue), inline };
}

/** One Slack attachment as an embed (plus its `pretext`, which Slack shows above it). */
function attachmentEmbed(a: Obj): { embed: MappedEmbed; pretext: string | undefined } {
  const embed: MappedEmbed = {};
  const color = slackColor(a['color']);
  if (color !== undefined) embed.color = color;
  const authorName = text(a['author_name']);
  if (authorName !== undefined) {
    const url = httpUrl(a['author_link']);
    const icon = httpUrl(a['author_icon']);
    embed.author = { name: cut(authorName, MessageLimits.authorName), ...(url && { url }), ...(icon && { icon_url: icon }) };
  }
  const title = text(a['title']);
  if (title !== undefined) embed.title = cut(unescapeSlack(title), MessageLimits.title);
  const titleLink = httpUrl(a['title_link']);
  if (titleLink !== undefined && title !== undefined) embed.url = titleLink;
  const body = text(a['text']);
  if (body !== undefined) embed.description = cut(mrkdwnToMarkdown(body), MessageLimits.description);
  if (Array.isArray(a['fields'])) {
    const fields = a['fields']
      .filter(isObject)
      .map((f) => field(text(f['title']), textObject(text(f['value'])), f['short'] === true))
      .filter((f) => f !== undefined)
      .slice(0, MessageLimits.fields);
    if (fields.length > 0) embed.fields = fields;
  }
  const image = httpUrl(a['image_url']);
  if (image !== undefined) embed.image = { url: image };
  const thumb = httpUrl(a['thumb_url']);
  if (thumb !== undefined) embed.thumbnail = { url: thumb };
  const footer = text(a['footer']);
  if (footer !== undefined) {
    const icon = httpUrl(a['footer_icon']);
    embed.footer = { text: cut(footer, MessageLimits.footerText), ...(icon && { icon_url: icon }) };
  }
  const ts = slackTimestamp(a['ts']);
  if (ts !== undefined) embed.timestamp = ts;
  // `fallback` is Slack's plain-text summary: shown when the attachment has nothing else to show.
  const fallback = text(a['fallback']);
  if (!isVisible(embed) && fallback !== undefined) embed.description = cut(fallback, MessageLimits.description);
  const pretext = text(a['pretext']);
  return { embed, pretext: pretext === undefined ? undefined : mrkdwnToMarkdown(pretext) };
}

function isVisible(e: MappedEmbed): boolean {
  return Boolean(e.title || e.description || e.fields || e.footer || e.author || e.image || e.thumbnail);
}

/**
 * Block Kit's common blocks as embeds: `header` → title (a new embed), `section` → description
 * lines and inline fields (an image accessory → thumbnail), `context` → a footer-like line,
 * `divider` → a new embed, `image` → the embed's image (a new embed if it already has one).
 * Other blocks (actions, input, rich_text…) have no equivalent and are left out.
 */
function blockEmbeds(blocks: unknown[]): MappedEmbed[] {
  const embeds: MappedEmbed[] = [];
  let current: MappedEmbed = {};
  const flush = () => {
    if (isVisible(current)) embeds.push(current);
    current = {};
  };
  const describe = (line: string) => {
    current.description = current.description === undefined ? line : `${current.description}\n${line}`;
  };
  for (const block of blocks) {
    if (!isObject(block)) continue;
    switch (block['type']) {
      case 'header': {
        const t = textObject(block['text']);
        if (t === undefined) break;
        flush();
        current.title = cut(t, MessageLimits.title);
        break;
      }
      case 'section': {
        const t = textObject(block['text']);
        if (t !== undefined) describe(t);
        if (Array.isArray(block['fields'])) {
          const fields = block['fields'].map((f) => field(undefined, textObject(f), true)).filter((f) => f !== undefined);
          current.fields = [...(current.fields ?? []), ...fields].slice(0, MessageLimits.fields);
        }
        const accessory = block['accessory'];
        if (isObject(accessory) && accessory['type'] === 'image') {
          const url = httpUrl(accessory['image_url']);
          if (url !== undefined) current.thumbnail = { url };
        }
        break;
      }
      case 'context': {
        const elements = Array.isArray(block['elements']) ? block['elements'] : [];
        const line = elements
          .map((e) => (isObject(e) && e['type'] !== 'image' ? textObject(e) : undefined))
          .filter((e) => e !== undefined)
          .join(' · ');
        if (line !== '') describe(line);
        break;
      }
      case 'divider':
        flush();
        break;
      case 'image': {
        const url = httpUrl(block['image_url']);
        if (url === undefined) break;
        if (current.image !== undefined) flush();
        current.image = { url };
        const title = textObject(block['title']);
        if (title !== undefined && current.title === undefined) current.title = cut(title, MessageLimits.title);
        break;
      }
      default:
        break;
    }
  }
  flush();
  for (const e of embeds) if (e.description !== undefined) e.description = cut(e.description, MessageLimits.description);
  return embeds;
}

/** Characters an embed counts toward the 6000 over all embeds (message-payload.ts's rule). */
function embedSize(e: MappedEmbed): number {
  let size = 0;
  for (const t of [e.title, e.description, e.footer?.text, e.author?.name]) if (t !== undefined) size += codePoints(t);
  for (const f of e.fields ?? []) size += codePoints(f.name) + codePoints(f.value);
  return size;
}

/** Keeps embeds, in order, while they fit in 10 and 6000 characters together. */
function withinLimits(embeds: MappedEmbed[]): MappedEmbed[] {
  const kept: MappedEmbed[] = [];
  let total = 0;
  for (const e of embeds.slice(0, MessageLimits.embeds)) {
    const size = embedSize(e);
    if (total + size > MessageLimits.embedTotal) break;
    kept.push(e);
    total += size;
  }
  return kept;
}

export type SlackMapping = { ok: true; payload: MappedPayload } | { ok: false; message: string };

/**
 * Maps a Slack incoming-webhook body. `text` is the message (mrkdwn converted) unless `blocks`
 * are present: then Slack shows the blocks and uses `text` only for notifications, and so do we.
 * A body that maps to no visible content is refused with the reason.
 */
export function mapSlackPayload(body: unknown): SlackMapping {
  if (!isObject(body)) return { ok: false, message: 'The body must be a JSON object in Slack\'s incoming-webhook format (text, attachments, blocks).' };
  const blocks = Array.isArray(body['blocks']) ? body['blocks'] : [];
  const embeds: MappedEmbed[] = blockEmbeds(blocks);
  const lines: string[] = [];
  const messageText = text(body['text']);
  if (messageText !== undefined && (blocks.length === 0 || embeds.length === 0)) lines.push(mrkdwnToMarkdown(messageText));
  if (Array.isArray(body['attachments'])) {
    for (const a of body['attachments'].filter(isObject)) {
      const mapped = attachmentEmbed(a);
      if (mapped.pretext !== undefined) lines.push(mapped.pretext);
      if (isVisible(mapped.embed)) embeds.push(mapped.embed);
    }
  }
  const payload: MappedPayload = {};
  const content = lines.join('\n');
  if (content.trim() !== '') payload.content = cut(content, MessageLimits.content);
  const kept = withinLimits(embeds);
  if (kept.length > 0) payload.embeds = kept;
  if (payload.content === undefined && payload.embeds === undefined) {
    return { ok: false, message: 'Cannot send an empty message: the Slack payload has no text, attachment or block that shows anything (text, attachments[].text/title/fields, or section/header/context/image blocks).' };
  }
  // Passed as sent: execute applies its impersonation and https rules (SPEC §2.9).
  if (body['username'] !== undefined && body['username'] !== null) payload.username = body['username'];
  if (body['icon_url'] !== undefined && body['icon_url'] !== null) payload.avatar_url = body['icon_url'];
  return { ok: true, payload };
}

import { html, type SafeHtml } from '../../web/html.js';
import { renderMarkdown, safeHttpUrl } from './markdown.js';
import type { Embed, EmbedField } from './embed.js';

/**
 * Embeds as the channel view shows them, in Discord's arrangement: a colour bar on the left; the
 * author line, title (a link when the embed has a url), description, fields (up to three inline
 * fields share a row; a field that is not inline takes a whole row), image and footer with its
 * time; the thumbnail on the right.
 *
 * The colour bar is an inline SVG whose <rect> carries the colour as a `fill` presentation
 * attribute. The CSP allows no inline style attribute (style-src 'self'), and presentation
 * attributes are not style attributes, so every one of the 16,777,216 colours is shown exactly
 * without weakening the policy (no 'unsafe-inline', no 'unsafe-hashes', no palette rounding).
 *
 * External images (icons, image, thumbnail) are shown only for https URLs (the page's CSP allows
 * https: images; an http image would be mixed content), never send a referrer, and load lazily.
 * Links (title, author) may be http or https and open in a new tab without opener or referrer.
 * Stored embeds were validated when posted (message-payload.ts); this file still reads them
 * defensively, so a malformed stored value is left out rather than breaking the page.
 */

const LINK_ATTRS = html`target="_blank" rel="noopener noreferrer nofollow"`;

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** An image URL the page may load: https only. */
export function safeImageUrl(value: unknown): string | undefined {
  const href = typeof value === 'string' ? safeHttpUrl(value) : undefined;
  return href?.startsWith('https:') ? href : undefined;
}

/** `#rrggbb` for an embed colour (0–0xFFFFFF), undefined for anything else. */
export function embedColor(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffffff) return undefined;
  return `#${value.toString(16).padStart(6, '0')}`;
}

/** Reads one stored embed; undefined when nothing of it can be shown. */
export function readEmbed(value: unknown): Embed | undefined {
  const e = record(value);
  if (!e) return undefined;
  const out: Embed = {};
  const title = str(e['title']);
  if (title) out.title = title;
  const description = str(e['description']);
  if (description) out.description = description;
  const url = str(e['url']);
  if (url) out.url = url;
  const timestamp = str(e['timestamp']);
  if (timestamp && !Number.isNaN(Date.parse(timestamp))) out.timestamp = timestamp;
  if (embedColor(e['color']) !== undefined) out.color = e['color'] as number;
  const footer = record(e['footer']);
  const footerText = str(footer?.['text']);
  if (footer && footerText) out.footer = { text: footerText, ...(str(footer['iconUrl']) ? { iconUrl: footer['iconUrl'] as string } : {}) };
  const image = str(record(e['image'])?.['url']);
  if (image) out.image = { url: image };
  const thumbnail = str(record(e['thumbnail'])?.['url']);
  if (thumbnail) out.thumbnail = { url: thumbnail };
  const author = record(e['author']);
  const authorName = str(author?.['name']);
  if (author && authorName) {
    out.author = { name: authorName, ...(str(author['url']) ? { url: author['url'] as string } : {}), ...(str(author['iconUrl']) ? { iconUrl: author['iconUrl'] as string } : {}) };
  }
  if (Array.isArray(e['fields'])) {
    const fields: EmbedField[] = [];
    for (const f of e['fields']) {
      const field = record(f);
      const name = str(field?.['name']);
      const fieldValue = str(field?.['value']);
      if (field && name && fieldValue) fields.push({ name, value: fieldValue, inline: field['inline'] === true });
    }
    if (fields.length) out.fields = fields;
  }
  const shown = out.title ?? out.description ?? out.author ?? out.footer ?? out.fields ?? safeImageUrl(out.image?.url) ?? safeImageUrl(out.thumbnail?.url);
  return shown === undefined ? undefined : out;
}

function icon(url: string | undefined, size: number): SafeHtml {
  const src = safeImageUrl(url);
  return src ? html`<img class="embed-icon" src="${src}" alt="" width="${size}" height="${size}" loading="lazy" referrerpolicy="no-referrer">` : html``;
}

function linkOrText(text: string, url: string | undefined, className: string): SafeHtml {
  const href = url ? safeHttpUrl(url) : undefined;
  return href ? html`<a class="${className}" href="${href}" ${LINK_ATTRS}>${text}</a>` : html`<span class="${className}">${text}</span>`;
}

function timestamp(iso: string): SafeHtml {
  const date = new Date(iso);
  const full = date.toISOString();
  return html`<time datetime="${full}">${full.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function bar(color: number | undefined): SafeHtml {
  const fill = embedColor(color);
  // No colour: the stylesheet fills the bar (.embed-bar rect.default) so it follows the theme.
  const rect = fill ? html`<rect width="1" height="1" fill="${fill}"/>` : html`<rect class="default" width="1" height="1"/>`;
  return html`<svg class="embed-bar" viewBox="0 0 1 1" preserveAspectRatio="none" aria-hidden="true" focusable="false">${rect}</svg>`;
}

function field(f: EmbedField): SafeHtml {
  return html`<div class="embed-field${f.inline ? ' inline' : ''}"><div class="embed-field-name">${renderMarkdown(f.name)}</div><div class="embed-field-value">${renderMarkdown(f.value)}</div></div>`;
}

/** One embed; undefined values render as nothing. */
export function embedBlock(embed: Embed): SafeHtml {
  const image = safeImageUrl(embed.image?.url);
  const thumbnail = safeImageUrl(embed.thumbnail?.url);
  const footerParts: SafeHtml[] = [];
  if (embed.footer) footerParts.push(html`<span>${embed.footer.text}</span>`);
  if (embed.timestamp) footerParts.push(timestamp(embed.timestamp));
  return html`<div class="embed${thumbnail ? ' has-thumbnail' : ''}">
${bar(embed.color)}
<div class="embed-main">
${embed.author ? html`<div class="embed-author">${icon(embed.author.iconUrl, 24)}${linkOrText(embed.author.name, embed.author.url, 'embed-author-name')}</div>` : ''}
${embed.title ? html`<div class="embed-title">${linkOrText(embed.title, embed.url, 'embed-title-text')}</div>` : ''}
${embed.description ? html`<div class="embed-description">${renderMarkdown(embed.description)}</div>` : ''}
${embed.fields?.length ? html`<div class="embed-fields">${embed.fields.map(field)}</div>` : ''}
${image ? html`<a class="embed-image" href="${image}" ${LINK_ATTRS}><img src="${image}" alt="Image attached to the embed" loading="lazy" referrerpolicy="no-referrer"></a>` : ''}
${footerParts.length ? html`<div class="embed-footer">${embed.footer ? icon(embed.footer.iconUrl, 20) : ''}${footerParts.map((part, i) => (i === 0 ? part : html`<span aria-hidden="true"> • </span>${part}`))}</div>` : ''}
</div>
${thumbnail ? html`<img class="embed-thumbnail" src="${thumbnail}" alt="" width="80" height="80" loading="lazy" referrerpolicy="no-referrer">` : ''}
</div>`;
}

/** A message's embeds (stored JSON values), in order; nothing when none can be shown. */
export function embedsBlock(embeds: readonly unknown[]): SafeHtml {
  const readable = embeds.map(readEmbed).filter((e): e is Embed => e !== undefined);
  return readable.length ? html`<div class="embeds">${readable.map(embedBlock)}</div>` : html``;
}

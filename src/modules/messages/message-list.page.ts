import { DAY, MINUTE } from '../../core/clock.js';
import { hexColor, readableOn } from '../../core/contrast.js';
import { html, raw, type SafeHtml } from '../../web/html.js';
import { filesBlock } from '../files/files.page.js';
import { embedsBlock } from './embeds.page.js';
import { renderMarkdown } from './markdown.js';
import type { MessageView } from './messages.js';
import { messageActions } from './message-actions.page.js';
import type { MessageRights } from './message-rights.js';

/**
 * The markup of a conversation's messages (issue #24 "Reading"), shared by the channel view, the
 * Direct messages page and live updates (live.routes.ts): grouping, day separators, times, the
 * "New messages" marker. Times are rendered in UTC against the injected clock's `now`, so pages
 * are deterministic in tests; the exact instant is in <time datetime> and its title.
 */

/** Consecutive messages of one author within this long share one header (Discord groups for 7 minutes). */
const GROUP_WINDOW = 7 * MINUTE;

const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);
const dayOf = (ms: number): number => Math.floor(ms / DAY);

/** "Today", "Yesterday" or the date (UTC), for day separators and times older than an hour. */
function dayLabel(ms: number, now: number): string {
  const days = dayOf(now) - dayOf(ms);
  if (days === 0) return 'Today';
  if (days === 1) return 'Yesterday';
  return new Date(ms).toISOString().slice(0, 10);
}

/** "Just now", "2 minutes ago", "Today at 14:03", "Yesterday at 09:12", "2026-11-20 09:12" (UTC). */
function timeLabel(ms: number, now: number | undefined): string {
  if (now === undefined) return `${new Date(ms).toISOString().slice(0, 10)} ${hhmm(ms)}`;
  const ago = now - ms;
  if (ago >= 0 && ago < MINUTE) return 'Just now';
  if (ago >= 0 && ago < 60 * MINUTE) {
    const minutes = Math.floor(ago / MINUTE);
    return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  }
  const day = dayLabel(ms, now);
  return day === 'Today' || day === 'Yesterday' ? `${day} at ${hhmm(ms)}` : `${day} ${hhmm(ms)}`;
}

/**
 * A message's time: the relative label (or, `short`, the hour beside a grouped message), with
 * the exact instant in `datetime` and in the title shown on hover; focusable so keyboard users
 * reach the title too. `data-relative` lets history.js redo the label in the reader's time zone.
 */
function time(ms: number, now: number | undefined, short = false): SafeHtml {
  const iso = new Date(ms).toISOString();
  const exact = `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
  return html`<time datetime="${iso}" title="${exact}" tabindex="0" data-relative${short ? html` data-short` : ''}>${short ? hhmm(ms) : timeLabel(ms, now)}</time>`;
}

/**
 * The author's picture over their initial: when there is no picture, or it fails to load (a
 * broken image with empty alt text paints nothing), the initial shows. Only https pictures and
 * this site's own paths are loaded (the CSP allows no other), without a referrer.
 */
function messageAvatar(name: string, url: string | null): SafeHtml {
  const initial = [...name.trim()][0]?.toUpperCase() ?? '?';
  const src = url && (url.startsWith('https://') || (url.startsWith('/') && !url.startsWith('//'))) ? url : undefined;
  return html`<span class="avatar stacked" aria-hidden="true">${initial}${src ? html`<img src="${src}" alt="" width="40" height="40" loading="lazy" referrerpolicy="no-referrer">` : ''}</span>`;
}

export interface MessageItemOptions {
  /** The clock's now, for relative times; without it times are absolute (UTC). */
  now?: number;
  /** Continues the previous message's group: no avatar or name shown (the name stays for screen readers). */
  grouped?: boolean;
  /** What the reader may do to it (message-rights.ts): Edit and Delete links when allowed. */
  rights?: MessageRights;
}

/**
 * One message as a list item, the same markup for the page and for live updates (live.routes.ts
 * sends it over server-sent events): author, APP badge for webhooks and bots, time, content with
 * the Markdown subset of markdown.ts, and embeds.
 */
export function messageItem(m: MessageView, options: MessageItemOptions = {}): SafeHtml {
  return withActions(sharedMessageItem(m, options), options.rights);
}

/**
 * A message's list item without the reader's Edit and Delete: everything that is the same for
 * every reader, Markdown and embeds included. Issue #36 §1: a live update renders it once per
 * event and each stream adds its reader's actions with `withActions`, which does no Markdown work.
 */
export interface SharedMessageItem {
  readonly message: MessageView;
  /** The markup before the actions, and after them. */
  readonly before: string;
  readonly after: string;
}

export function sharedMessageItem(m: MessageView, options: Omit<MessageItemOptions, 'rights'> = {}): SharedMessageItem {
  const edited = m.editedAt !== null ? html` <span class="small">(edited)</span>` : '';
  const head = options.grouped
    ? html`<span class="gutter">${time(m.createdAt, options.now, true)}</span>`
    : messageAvatar(m.author.name, m.author.avatarUrl);
  const meta = options.grouped
    ? html`<span class="visually-hidden">${m.author.name}</span>${edited}`
    : html`<div class="meta"><span class="author">${m.author.name}</span>${m.author.app ? html`<span class="badge" title="Sent by an app">APP</span>` : ''}${time(m.createdAt, options.now)}${edited}</div>`;
  const before = html`<li class="message${options.grouped ? ' grouped' : ''}${m.ephemeral ? ' ephemeral' : ''}" id="m${m.id}" data-id="${m.id}" data-author="${m.author.id}">
${head}
<div class="message-main">
${m.interaction && !options.grouped ? html`<p class="interaction-line small muted">${m.interaction.userName} used <span class="command-name">/${m.interaction.commandName}</span></p>` : ''}
${meta}
${m.interaction?.loading ? html`<p class="body thinking" role="status">${m.author.name} is thinking…</p>` : ''}
${m.content ? html`<div class="body">${renderMarkdown(m.content)}</div>` : ''}
${embedsBlock(m.embeds)}
${filesBlock(m.attachments)}
${m.ephemeral ? html`<p class="ephemeral-note small muted">Only you can see this · <a href="/channels/${m.channelId}/messages/${m.id}/dismiss" data-dismiss>Dismiss message</a></p>` : ''}
</div>
`;
  return { message: m, before: before.value, after: '\n</li>' };
}

/** One reader's item: the shared markup around their Edit and Delete (message-actions.page.ts). */
export function withActions(item: SharedMessageItem, rights: MessageRights | undefined): SafeHtml {
  return raw(item.before + messageActions(item.message, rights).value + item.after);
}

const sameGroup = (a: MessageView, b: MessageView): boolean =>
  // Issue #40 §2: an answer to a command starts a group, so its "<person> used /name" line shows;
  // nothing joins an ephemeral one, which stands apart on its one reader's page.
  b.interaction === undefined && a.ephemeral !== true &&
  a.author.id === b.author.id && a.author.name === b.author.name && b.createdAt - a.createdAt >= 0 && b.createdAt - a.createdAt <= GROUP_WINDOW && dayOf(a.createdAt) === dayOf(b.createdAt);

/** The items of a list: messages with day separators, grouping and the "New messages" marker. */
function listItems(messages: readonly MessageView[], now: number | undefined, firstUnreadId: string | undefined, rights: MessageRights | undefined): SafeHtml[] {
  const items: SafeHtml[] = [];
  let previous: MessageView | undefined;
  for (const m of messages) {
    const newDay = previous === undefined || dayOf(previous.createdAt) !== dayOf(m.createdAt);
    if (newDay && now !== undefined) {
      // Plain list items: a role on the <li> would leave the list holding a non-item (axe "list").
      items.push(html`<li class="day-separator"><span>${dayLabel(m.createdAt, now)}</span></li>`);
    }
    const unread = m.id === firstUnreadId;
    if (unread) items.push(html`<li class="new-messages" id="new-messages"><span>New messages</span></li>`);
    items.push(messageItem(m, { grouped: previous !== undefined && !newDay && !unread && sameGroup(previous, m), ...(now === undefined ? {} : { now }), ...(rights ? { rights } : {}) }));
    previous = m;
  }
  return items;
}

export interface MessageListOptions {
  /** An event stream (live.routes.ts) the page script keeps the list up to date from. */
  liveUrl?: string;
  emptyText?: string;
  /** The clock's now: relative times and day separators. */
  now?: number;
  /** The first message the reader has not read: the "New messages" marker goes above it. */
  firstUnreadId?: string;
  /** What the reader may do to each message. */
  rights?: MessageRights;
  /** Name colours by author id (issue #24: the highest coloured role's). */
  authorColors?: ReadonlyMap<string, number>;
}

/** The panel behind messages in the light and dark themes (app.css --panel). */
const LIGHT_PANEL = 0xffffff;
const DARK_PANEL = 0x1f2227;

/**
 * Name colours as the page scripts apply them: `<author id>=<light>/<dark>` separated by spaces,
 * each colour made readable (4.5:1) on that theme's panel. The CSP allows no inline style
 * attribute (style-src 'self'), so history.js sets them through the CSSOM, on the names shown
 * now and on those that arrive live or with older pages; without JavaScript names keep the text colour.
 */
function colorsAttribute(colors: ReadonlyMap<string, number> | undefined): string {
  if (!colors) return '';
  return [...colors].map(([id, color]) => `${id}=${hexColor(readableOn(color, LIGHT_PANEL))}/${hexColor(readableOn(color, DARK_PANEL))}`).join(' ');
}

/**
 * A conversation's messages, oldest first. With `liveUrl` the page script keeps it up to date;
 * the empty-state text stays in the markup, hidden once a message arrives.
 */
export function messageList(messages: readonly MessageView[], options: MessageListOptions = {}): SafeHtml {
  const colors = colorsAttribute(options.authorColors);
  return html`<ol class="messages" aria-live="polite"${options.liveUrl ? html` data-live="${options.liveUrl}"` : ''}${colors ? html` data-author-colors="${colors}"` : ''}>${listItems(messages, options.now, options.firstUnreadId, options.rights)}</ol>
<p class="muted" data-empty${messages.length ? ' hidden' : ''}>${options.emptyText ?? 'No messages yet. Say hello!'}</p>`;
}

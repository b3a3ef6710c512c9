import { APP_LIVE_JS_PATH } from '../../web/assets.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import type { Channel } from '../directory/channels.js';
import { embedsBlock } from './embeds.page.js';
import { renderMarkdown } from './markdown.js';
import type { MessageView } from './messages.js';

export interface ChannelPageInput {
  ctx: { viewer: Viewer | undefined; csrfToken: string; serviceName: string };
  server: { id: string; name: string };
  channel: Channel;
  channels: Channel[];
  messages: MessageView[];
  /** Send messages: shows the post form. */
  canSend: boolean;
  /** Any of Manage server/channels/roles: shows the settings link. */
  canManage: boolean;
  /** Create invite or Manage server: shows the invite link. */
  canInvite: boolean;
  /** Manage webhooks: shows the link to Channel settings → Integrations (webhooks.page.ts). */
  canManageWebhooks?: boolean;
  error?: string;
  /** What was typed, when posting failed. */
  content?: string;
}

function time(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
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

/**
 * One message as a list item, the same markup for the page and for live updates (live.routes.ts
 * sends it over server-sent events): author, APP badge for webhooks and bots, time, content with
 * the Markdown subset of markdown.ts, and embeds.
 */
export function messageItem(m: MessageView): SafeHtml {
  return html`<li class="message" id="m${m.id}" data-id="${m.id}">
${messageAvatar(m.author.name, m.author.avatarUrl)}
<div class="message-main">
<div class="meta"><span class="author">${m.author.name}</span>${m.author.app ? html`<span class="badge" title="Sent by an app">APP</span>` : ''}${time(m.createdAt)}${m.editedAt !== null ? html` <span class="small">(edited)</span>` : ''}</div>
${m.content ? html`<div class="body">${renderMarkdown(m.content)}</div>` : ''}
${embedsBlock(m.embeds)}
</div>
</li>`;
}

/**
 * A conversation's messages, oldest first. With `liveUrl` (an event stream, live.routes.ts) the
 * page script keeps it up to date; the empty-state text stays in the markup, hidden once a
 * message arrives.
 */
export function messageList(messages: readonly MessageView[], options: { liveUrl?: string; emptyText?: string } = {}): SafeHtml {
  return html`<ol class="messages" aria-live="polite"${options.liveUrl ? html` data-live="${options.liveUrl}"` : ''}>${messages.map(messageItem)}</ol>
<p class="muted" data-empty${messages.length ? ' hidden' : ''}>${options.emptyText ?? 'No messages yet. Say hello!'}</p>`;
}

/** The channel view: channel list, messages with the newest at the bottom, and the post form. */
export function channelPage(input: ChannelPageInput): string {
  const { ctx, server, channel } = input;
  const sidebar = html`<nav class="sidebar card" aria-label="Channels of ${server.name}">
<p><strong>${server.name}</strong></p>
${input.channels.map((c) => html`<a href="/channels/${c.id}"${c.id === channel.id ? html` class="active" aria-current="page"` : ''}># ${c.name}</a>`)}
${input.canInvite ? html`<p class="small"><a href="/servers/${server.id}/settings/invites">Invite people</a></p>` : ''}
${input.canManage ? html`<p class="small"><a href="/servers/${server.id}/settings">Server settings</a></p>` : ''}
</nav>`;
  const form = input.canSend
    ? html`<form method="post" action="/channels/${channel.id}/messages" id="post" class="card">
${csrfField(ctx.csrfToken)}
${input.error ? html`<div class="error" role="alert">${input.error}</div>` : ''}
<label for="content">Message #${channel.name}</label>
<textarea id="content" name="content" required rows="3">${input.content ?? ''}</textarea>
<p class="hint">Up to 2000 characters. **bold**, *italics*, \`code\` and links work.</p>
<div class="actions"><button type="submit">Send</button></div>
</form>`
    : html`<p class="muted card" id="post">You do not have permission to send messages in this channel.</p>`;
  return layout({
    title: `#${channel.name} · ${server.name}`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    scripts: [APP_LIVE_JS_PATH],
    skipLinks: [{ href: '#post', label: 'Skip to the message box' }],
    body: html`<div class="layout">
${sidebar}
<section aria-label="#${channel.name}">
<h1># ${channel.name}</h1>
${input.canManageWebhooks ? html`<p class="small"><a href="/channels/${channel.id}/settings/integrations">Integrations (webhooks)</a></p>` : ''}
${channel.topic ? html`<p class="muted">${channel.topic}</p>` : ''}
<div class="card">
${messageList(input.messages, { liveUrl: `/channels/${channel.id}/events` })}
</div>
${form}
</section>
</div>`,
  });
}

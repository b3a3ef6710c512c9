import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import type { Channel } from '../directory/channels.js';
import { avatar } from '../directory/directory.page.js';
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
  error?: string;
  /** What was typed, when posting failed. */
  content?: string;
}

function time(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function message(m: MessageView): SafeHtml {
  return html`<li class="message" id="m${m.id}">
${avatar(m.author.name, m.author.avatarUrl)}
<div>
<div class="meta"><span class="author">${m.author.name}</span>${m.author.app ? html`<span class="badge" title="Sent by an app">APP</span>` : ''}${time(m.createdAt)}${m.editedAt !== null ? html` <span class="small">(edited)</span>` : ''}</div>
<div class="body">${m.content}</div>
</div>
</li>`;
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
<p class="hint">Plain text, up to 2000 characters.</p>
<div class="actions"><button type="submit">Send</button></div>
</form>`
    : html`<p class="muted card" id="post">You do not have permission to send messages in this channel.</p>`;
  return layout({
    title: `#${channel.name} · ${server.name}`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    body: html`<div class="layout">
${sidebar}
<section aria-label="#${channel.name}">
<h1># ${channel.name}</h1>
${channel.topic ? html`<p class="muted">${channel.topic}</p>` : ''}
<div class="card">
${input.messages.length ? html`<ol class="messages">${input.messages.map(message)}</ol>` : html`<p class="muted">No messages yet. Say hello!</p>`}
</div>
${form}
</section>
</div>`,
  });
}

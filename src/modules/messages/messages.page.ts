import { APP_COMMANDS_JS_PATH, APP_COMPOSER_JS_PATH, APP_HISTORY_JS_PATH, APP_LIVE_JS_PATH, APP_MESSAGE_ACTIONS_JS_PATH } from '../../web/assets.js';
import { html, type SafeHtml } from '../../web/html.js';
import type { PageCtx } from '../../web/components.js';
import { csrfField, layout } from '../../web/layout.js';
import type { Channel } from '../directory/channels.js';
import type { ComposerCommand } from '../interactions/interactions.js';
import { readableSize } from '../files/files.page.js';
import { messageList } from './message-list.page.js';
import type { MessageRights } from './message-rights.js';
import type { MessageView } from './messages.js';

export interface ChannelPageInput {
  ctx: PageCtx;
  server: { id: string; name: string };
  /** The person's servers (the sidebar's switcher). */
  servers: readonly { id: string; name: string }[];
  channel: Channel;
  channels: Channel[];
  /** One page of history, oldest first (messages.service.ts channelHistory). */
  messages: MessageView[];
  /** Older messages exist: the "Load older messages" link. */
  hasOlder: boolean;
  /** The page shows history older than this message id (`?before=`): no live updates, a link to the newest. */
  before?: string;
  /** The clock's now: relative times and day separators. */
  now: number;
  /** Channels with messages the reader has not read: bold in the list. */
  unreadChannelIds: ReadonlySet<string>;
  /** The first message the reader has not read yet: the "New messages" marker. */
  firstUnreadId?: string;
  /** Send messages: shows the post form. */
  canSend: boolean;
  /** Attach files (issue #42 §2): the composer takes files, up to these limits. */
  attach?: { maxBytes: number; maxFiles: number };
  /** Any of Manage server/channels/roles: shows the settings link. */
  canManage: boolean;
  /** Create invite or Manage server: shows the invite link. */
  canInvite: boolean;
  /** Manage webhooks: shows the link to Channel settings → Integrations (webhooks.page.ts). */
  canManageWebhooks?: boolean;
  error?: string;
  /** What was typed, when posting failed. */
  content?: string;
  /** Which messages the viewer may edit or delete (message-actions.page.ts). */
  rights?: MessageRights;
  /** The apps' commands the viewer reaches here: the composer's `/` list (commands.js). */
  commands?: readonly ComposerCommand[];
  /** Name colours by user id (their highest coloured role's, issue #24). */
  authorColors?: ReadonlyMap<string, number>;
}

/**
 * The history pane (issue #24 "Reading"): a scroller of its own that opens at its bottom by
 * layout (flex-direction: column-reverse in app.css), so the newest message and the composer
 * are in view without JavaScript. Above the messages, "Load older messages" is a plain link to
 * the previous page (`?before=` the first message shown); history.js fetches the same URL as you
 * scroll up. A `?before=` page links back to the present; live updates only join the newest page.
 */
function historyPane(input: ChannelPageInput): SafeHtml {
  const { channel, messages } = input;
  const base = `/channels/${channel.id}`;
  const first = messages[0];
  const top = input.hasOlder && first
    ? html`<p class="history-edge"><a href="${base}?before=${first.id}" rel="prev" data-older>Load older messages</a></p>`
    : html`<p class="history-edge muted">This is the start of #${channel.name}.</p>`;
  const live = input.before === undefined ? { liveUrl: `${base}/events` } : {};
  return html`<div class="card history-card">
<div class="history" id="history" tabindex="0" role="region" aria-label="Messages in #${channel.name}" data-history="${base}">
<div class="history-content">
${top}
${messageList(messages, { ...live, now: input.now, ...(input.authorColors ? { authorColors: input.authorColors } : {}), ...(input.firstUnreadId ? { firstUnreadId: input.firstUnreadId } : {}), ...(input.rights ? { rights: input.rights } : {}) })}
${input.before !== undefined ? html`<p class="history-edge"><a href="${base}#post" data-present>You are viewing older messages. Jump to present</a></p>` : ''}
</div>
</div>
<a class="jump-present" href="${base}#post" data-jump hidden>Jump to present ↓</a>
</div>`;
}

/** A channel in the list: bold with "(unread)" for screen readers when it has unread messages. */
function channelLink(c: Channel, current: boolean, unread: boolean): SafeHtml {
  const classes = [current ? 'active' : '', unread ? 'unread' : ''].filter(Boolean).join(' ');
  return html`<a href="/channels/${c.id}"${classes ? html` class="${classes}"` : ''}${current ? html` aria-current="page"` : ''}># ${c.name}${unread ? html`<span class="visually-hidden"> (unread)</span>` : ''}</a>`;
}

/** The person's servers, to switch between them (on a phone, part of the drawer with the channels). */
function serverList(servers: readonly { id: string; name: string }[], currentId: string): SafeHtml {
  if (servers.length < 2) return html``;
  return html`<nav class="server-list" aria-label="Your servers"><p class="small muted">Your servers</p>
${servers.map((s) => html`<a href="/servers/${s.id}"${s.id === currentId ? html` class="active" aria-current="true"` : ''}>${s.name}</a>`)}
</nav>`;
}

/**
 * The composer's `/` list data (issue #40 §2), embedded in the page as the textarea's
 * `data-commands` JSON rather than fetched: the page already knows who reads it, so no second
 * request, and the attribute is escaped like any other. Nothing when no command is reachable.
 */
export function commandsAttribute(commands: readonly ComposerCommand[] | undefined): SafeHtml {
  return commands && commands.length > 0 ? html` data-commands="${JSON.stringify(commands)}"` : html``;
}

/**
 * The composer's files (issue #42 §2): a plain multiple file input, which works without script;
 * composer.js puts an "Attach files" button in its place, lists the chosen files as chips (with
 * a description for images, their alt text), takes dropped and pasted files and shows progress.
 */
function attachFields(attach: { maxBytes: number; maxFiles: number }): SafeHtml {
  return html`<div class="attach" data-attach>
<p class="attach-field"><label for="files">Attach files</label> <input type="file" id="files" name="files" multiple aria-describedby="files-hint"></p>
<p class="hint" id="files-hint">Up to ${String(attach.maxFiles)} files, ${readableSize(attach.maxBytes)} in all.<span data-attach-more hidden> You can also drop files on the channel or paste an image.</span></p>
</div>`;
}

/** The channel view: channel list, messages with the newest at the bottom, and the post form. */
export function channelPage(input: ChannelPageInput): string {
  const { ctx, server, channel } = input;
  const sidebar = html`<nav class="sidebar card" aria-label="Channels of ${server.name}">
<p><strong>${server.name}</strong></p>
${input.channels.map((c) => channelLink(c, c.id === channel.id, input.unreadChannelIds.has(c.id)))}
${input.canInvite ? html`<p class="small"><a href="/servers/${server.id}/settings/invites">Invite people</a></p>` : ''}
${input.canManage ? html`<p class="small"><a href="/servers/${server.id}/settings">Server settings</a></p>` : ''}
${serverList(input.servers, server.id)}
</nav>`;
  const attach = input.attach;
  // Issue #42 §2: with files the form posts multipart/form-data, which streams to the route after
  // the CSRF check, so the token rides in the action URL (composer.js sends it as a header too).
  const action = attach ? `/channels/${channel.id}/messages?_csrf=${encodeURIComponent(ctx.csrfToken)}` : `/channels/${channel.id}/messages`;
  const form = input.canSend
    ? html`<form method="post" action="${action}" id="post" class="card"${attach ? html` enctype="multipart/form-data" data-max-bytes="${String(attach.maxBytes)}" data-max-files="${String(attach.maxFiles)}"` : ''}>
${csrfField(ctx.csrfToken)}
${input.error ? html`<div class="error" role="alert">${input.error}</div>` : ''}
<label for="content">Message #${channel.name}</label>
<textarea id="content" name="content"${attach ? '' : html` required`} rows="3" data-composer${commandsAttribute(input.commands)} aria-describedby="composer-hint">${input.content ?? ''}</textarea>
<p class="hint" id="composer-hint">Enter sends, Shift+Enter adds a line. Up to 2000 characters. **bold**, *italics*, \`code\` and links work.${input.commands?.length ? ' Type / for the apps’ commands.' : ''}</p>
${attach ? attachFields(attach) : ''}
<div class="actions"><button type="submit">Send</button></div>
</form>`
    : html`<p class="muted card" id="post">You do not have permission to send messages in this channel.</p>`;
  return layout({
    title: `#${channel.name} · ${server.name}`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    path: ctx.path,
    place: { label: server.name, href: `/servers/${server.id}` },
    scripts: [APP_LIVE_JS_PATH, APP_HISTORY_JS_PATH, APP_COMPOSER_JS_PATH, APP_COMMANDS_JS_PATH, APP_MESSAGE_ACTIONS_JS_PATH],
    skipLinks: [{ href: '#post', label: 'Skip to the message box' }],
    body: html`<div class="layout">
${sidebar}
<section aria-label="#${channel.name}">
<h1># ${channel.name}</h1>
${input.canManageWebhooks ? html`<p class="small"><a href="/channels/${channel.id}/settings/integrations">Integrations (webhooks)</a></p>` : ''}
${channel.topic ? html`<p class="muted">${channel.topic}</p>` : ''}
${historyPane(input)}
${form}
</section>
</div>`,
  });
}

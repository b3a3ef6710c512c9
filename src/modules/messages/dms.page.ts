import { APP_COMMANDS_JS_PATH, APP_COMPOSER_JS_PATH, APP_HISTORY_JS_PATH, APP_LIVE_JS_PATH, APP_MESSAGE_ACTIONS_JS_PATH } from '../../web/assets.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout } from '../../web/layout.js';
import type { ComposerCommand } from '../interactions/interactions.js';
import { avatar, type PageCtx } from '../../web/components.js';
import type { DmConversation, DmConversationSummary, DmParty } from './dms.js';
import { messageList } from './message-list.page.js';
import { commandsAttribute } from './messages.page.js';

export type DmPageCtx = PageCtx;

/** How long a preview of the newest message is, in code points. */
const PREVIEW_LENGTH = 80;

function preview(text: string): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length > PREVIEW_LENGTH ? `${chars.slice(0, PREVIEW_LENGTH - 1).join('')}…` : chars.join('');
}

function when(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** BOT for a bot account: the other party of a DM is an app's bot, never a person pretending. */
function badge(party: DmParty): SafeHtml {
  return party.bot ? html`<span class="badge" title="An app’s bot">BOT</span>` : html``;
}

/** /messages: the person's direct-message conversations, most recently active first. */
export function dmListPage(input: { ctx: DmPageCtx; conversations: DmConversationSummary[] }): string {
  const { ctx, conversations } = input;
  const list = conversations.length
    ? html`<ol class="messages dm-list">${conversations.map(
        (c) => html`<li class="message">
${avatar(c.other.name, c.other.avatarUrl)}
<div>
<div class="meta"><a class="author" href="/messages/${c.channelId}">${c.other.name}</a>${badge(c.other)}<span class="small">@${c.other.username}</span>${c.last ? html` · ${when(c.last.at)}` : ''}</div>
<div class="small muted">${c.last ? (c.last.content ? preview(c.last.content) : c.last.hasEmbeds ? 'Sent an embed' : '') : 'No messages yet.'}</div>
</div>
</li>`,
      )}</ol>`
    : html`<p>No direct messages yet.</p>
<p class="hint">Apps you install for yourself (Settings → <a href="/settings/apps">Installed apps</a>), and the bots of servers you are in, can send you direct messages. They appear here.</p>`;
  return layout({
    title: 'Direct messages',
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    path: ctx.path,
    body: html`<h1>Direct messages</h1>
<div class="card">${list}</div>`,
  });
}

/** Above the messages: "Load older messages" (`?before=`, 50 a page) or the conversation's start. */
function historyEdge(conversation: DmConversation): SafeHtml {
  const first = conversation.messages[0];
  return conversation.hasOlder && first
    ? html`<p class="history-edge"><a href="/messages/${conversation.channelId}?before=${first.id}" rel="prev">Load older messages</a></p>`
    : html`<p class="history-edge muted">This is the start of your conversation.</p>`;
}

/**
 * The composer of a DM with an app's bot whose app the person user-installed (issue #40 §2): it
 * takes that app's commands only, as bots receive no messages here.
 */
export interface DmComposer {
  commands: readonly ComposerCommand[];
  error?: string;
  /** What was typed, when the command was refused. */
  content?: string;
}

function commandForm(ctx: DmPageCtx, conversation: DmConversation, composer: DmComposer): SafeHtml {
  const other = conversation.other;
  return html`<form method="post" action="/messages/${conversation.channelId}" id="reply" class="card">
${csrfField(ctx.csrfToken)}
${composer.error ? html`<div class="error" role="alert">${composer.error}</div>` : ''}
<label for="content">Use a command of ${other.name}</label>
<textarea id="content" name="content" required rows="2" data-composer="commands"${commandsAttribute(composer.commands)} aria-describedby="composer-hint">${composer.content ?? ''}</textarea>
<p class="hint" id="composer-hint">Type / for its commands, written /name option:value. ${other.name} is an app’s bot: it receives commands here, not messages.</p>
<div class="actions"><button type="submit">Send</button></div>
</form>`;
}

/**
 * /messages/:channelId: one conversation, newest message at the bottom, kept up to date by the
 * channel view's live stream. Read only, but for the commands of a bot whose app the person
 * user-installed (`composer`; docs/user-installs.md, docs/interactions.md).
 * `now`: the clock's time, for relative times and day separators (message-list.page.ts).
 */
export function dmConversationPage(input: { ctx: DmPageCtx; conversation: DmConversation; now: number; composer?: DmComposer }): string {
  const { ctx, conversation } = input;
  const other = conversation.other;
  const readOnly = other.bot
    ? html`<p class="muted card" id="reply">You can’t reply here: ${other.name} is an app’s bot, and bots receive no messages on ${ctx.serviceName}.${
        conversation.botMayStillMessage
          ? ''
          : html` It can no longer message you either: you removed it from <a href="/settings/apps">Installed apps</a> and share no server with it.`
      }</p>`
    : html`<p class="muted card" id="reply">Replies are not available in direct messages.</p>`;
  const footer =
    input.composer && input.composer.commands.length > 0
      ? commandForm(ctx, conversation, input.composer)
      : html`${input.composer?.error ? html`<div class="error" role="alert">${input.composer.error}</div>` : ''}${readOnly}`;
  return layout({
    title: `${other.name} · Direct messages`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    path: ctx.path,
    scripts: [APP_LIVE_JS_PATH, APP_HISTORY_JS_PATH, APP_MESSAGE_ACTIONS_JS_PATH, ...(input.composer?.commands.length ? [APP_COMPOSER_JS_PATH, APP_COMMANDS_JS_PATH] : [])],
    body: html`<p class="small"><a href="/messages">← Direct messages</a></p>
<h1>${other.name} ${badge(other)}</h1>
<p class="muted small">@${other.username}</p>
<div class="card">
${historyEdge(conversation)}
${messageList(conversation.messages, {
  // An older page (?before=) is history: no live updates, and a way back to the present.
  ...(conversation.before === undefined ? { liveUrl: `/channels/${conversation.channelId}/events` } : {}),
  emptyText: 'No messages yet.',
  now: input.now,
  rights: { viewerId: ctx.viewer?.id ?? '', manageMessages: false },
})}
${conversation.before !== undefined ? html`<p class="history-edge"><a href="/messages/${conversation.channelId}" data-present>You are viewing older messages. Jump to present</a></p>` : ''}
</div>
${footer}`,
  });
}

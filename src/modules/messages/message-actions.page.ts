import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { dangerForm, formError, page, type FormError, type PageCtx } from '../../web/components.js';
import type { Channel } from '../directory/channels.js';
import { mayDelete, mayEdit, type MessageRights } from './message-rights.js';
import { renderMarkdown } from './markdown.js';
import type { MessageView } from './messages.js';

/**
 * A message's Edit and Delete (issue #24 "Writing"). Without JavaScript they are links to the
 * edit form and to the delete confirmation below (POST → 303 → GET); message-actions.js turns
 * them into an inline editor (Enter saves, Escape cancels) and an inline "Delete this message?".
 */

/** Where a conversation is read: a server channel's view, or a DM's page. */
export function conversationUrl(channel: Pick<Channel, 'id' | 'serverId'>): string {
  return channel.serverId === null ? `/messages/${channel.id}` : `/channels/${channel.id}`;
}

function messageUrl(m: Pick<MessageView, 'id' | 'channelId'>): string {
  return `/channels/${m.channelId}/messages/${m.id}`;
}

/** The actions the viewer may take on one message; nothing when none. */
export function messageActions(m: MessageView, rights: MessageRights | undefined): SafeHtml {
  if (!rights) return html``;
  const edit = mayEdit(rights, m);
  const remove = mayDelete(rights, m);
  if (!edit && !remove) return html``;
  return html`<div class="message-actions" data-message-actions>${edit ? html`<a href="${messageUrl(m)}/edit" data-edit aria-label="Edit message">Edit</a>` : ''}${
    remove ? html`<a href="${messageUrl(m)}/delete" data-delete aria-label="Delete message">Delete</a>` : ''
  }</div>`;
}

/** The message's text as the confirmation quotes it (an embed-only message says so). */
function shown(m: MessageView): SafeHtml {
  return html`<blockquote class="message-quote">${m.content ? renderMarkdown(m.content) : html`<em>An embed without text</em>`}</blockquote>`;
}

export interface MessageScreenInput {
  ctx: PageCtx;
  channel: Channel;
  message: MessageView;
}

/** GET /channels/:channelId/messages/:messageId/edit: the message's text in a form. */
export function editMessagePage(input: MessageScreenInput & { error?: FormError; content?: string }): string {
  const { ctx, channel, message } = input;
  const back = `${conversationUrl(channel)}#m${message.id}`;
  return page(
    ctx,
    'Edit message',
    html`<div class="card">
<h1>Edit message</h1>
${formError(input.error, 'edit')}
<form method="post" action="${messageUrl(message)}/edit">
${csrfField(ctx.csrfToken)}
<label for="content">Message</label>
<textarea id="content" name="content" required rows="4">${input.content ?? message.content}</textarea>
<p class="hint">Up to 2000 characters. **bold**, *italics*, \`code\` and links work.</p>
<div class="actions"><button type="submit">Save</button><a class="button secondary" href="${back}">Cancel</a></div>
</form>
</div>`,
  );
}

/** GET /channels/:channelId/messages/:messageId/delete: asks once, showing what goes. */
export function confirmDeleteMessagePage(input: MessageScreenInput): string {
  const { ctx, channel, message } = input;
  const own = message.author.id === ctx.viewer?.id;
  return page(
    ctx,
    'Delete message',
    html`<div class="card">
<h1>Delete this message?</h1>
<p>${own ? 'Your message' : html`This message by <strong>${message.author.name}</strong>`} is removed for everyone. This cannot be undone.</p>
${shown(message)}
${dangerForm(ctx.csrfToken, `${messageUrl(message)}/delete`, 'Delete message', `${conversationUrl(channel)}#m${message.id}`)}
</div>`,
  );
}

/**
 * GET /channels/:channelId/messages/:messageId/dismiss (issue #40 §2): without JavaScript, the
 * ephemeral message's reader confirms Discord's "Dismiss message" (message-actions.js posts at once).
 */
export function confirmDismissPage(input: MessageScreenInput): string {
  const { ctx, channel, message } = input;
  return page(
    ctx,
    'Dismiss message',
    html`<div class="card">
<h1>Dismiss this message?</h1>
<p>Only you can see this answer of <strong>${message.author.name}</strong>. Dismissed, it is gone from your view.</p>
${shown(message)}
<form method="post" action="${messageUrl(message)}/dismiss">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit">Dismiss message</button><a class="button secondary" href="${conversationUrl(channel)}#m${message.id}">Cancel</a></div>
</form>
</div>`,
  );
}

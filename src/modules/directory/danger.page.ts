import { confirmationPage } from '../../web/confirm.page.js';
import { page, type PageCtx } from '../../web/components.js';
import { html } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import type { Channel } from './channels.js';
import type { Person } from './people.js';

/** The confirmations of server settings (issue #24): each says what goes before anything does. */

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** "Delete # general?": the channel and every message in it, with their number. */
export function confirmChannelDeletePage(ctx: PageCtx, serverId: string, preview: { channel: Channel; messages: number }): string {
  const { channel, messages } = preview;
  const here = `/servers/${serverId}/channels/${channel.id}/delete`;
  return confirmationPage(ctx, {
    question: `Delete # ${channel.name}?`,
    consequence: html`This cannot be undone. <strong>${messages === 0 ? 'The channel is empty.' : `All ${plural(messages, 'message', 'messages')} in it are deleted with it.`}</strong> Its webhooks are deleted too, so their URLs stop working.`,
    action: here,
    button: 'Delete channel',
    cancel: `/servers/${serverId}/settings/channels`,
  });
}

/** "Remove … from …?": they lose access at once; their messages stay. */
export function confirmMemberRemovePage(ctx: PageCtx, serverId: string, preview: { person: Person; serverName: string }): string {
  const { person, serverName } = preview;
  return confirmationPage(ctx, {
    question: `Remove ${person.name} from ${serverName}?`,
    consequence: html`<strong>${person.name}</strong> (@${person.username}) loses access to every channel at once, and their roles here. Their messages stay. They can come back only with a new invite.`,
    action: `/servers/${serverId}/members/${person.id}/remove`,
    button: 'Remove member',
    cancel: `/servers/${serverId}/settings/members`,
  });
}

/** One member the owner may hand the server to. */
export interface TransferCandidate {
  id: string;
  username: string;
  name: string;
}

/**
 * Server settings → Danger zone → "Transfer ownership of …" (issue #39): a picker of the members
 * who can own it (people, not bots) and an acknowledgement, as Discord asks for one. Without
 * another member there is nobody to choose, and the page says so.
 */
export function transferOwnershipPage(ctx: PageCtx, server: { id: string; name: string }, candidates: readonly TransferCandidate[], problem?: { message: string; chosen: string }): string {
  const cancel = `/servers/${server.id}/settings`;
  const body =
    candidates.length === 0
      ? html`<p>Only a member of the server can become its owner, and it has no other member who is a person. Invite the new owner first.</p>
<div class="actions"><a class="button secondary" href="${cancel}">Back to settings</a></div>`
      : html`${problem ? html`<div class="error" role="alert" id="transfer-error" tabindex="-1" data-error-summary>${problem.message}</div>` : ''}
<form method="post" action="/servers/${server.id}/transfer">${csrfField(ctx.csrfToken)}
<label for="owner-id">New owner</label>
<select id="owner-id" name="owner_id" required${problem ? html` aria-describedby="transfer-error" aria-invalid="true"` : ''}>
<option value="">Choose a member…</option>
${candidates.map((c) => html`<option value="${c.id}"${problem?.chosen === c.id ? ' selected' : ''}>${c.name} (@${c.username})</option>`)}
</select>
<label class="check"><input name="acknowledge" type="checkbox" value="yes" required><span>I understand that the server will belong to them: only they can delete it or give it away, and I keep only the roles I have.</span></label>
<div class="actions"><button class="danger" type="submit">Transfer ownership</button><a class="button secondary" href="${cancel}">Cancel</a></div>
</form>`;
  return page(
    ctx,
    `Transfer ownership of ${server.name}`,
    html`<div class="card confirm">
<h1>Transfer ownership of <bdi>${server.name}</bdi></h1>
${body}
</div>`,
    { width: 'narrow' },
  );
}

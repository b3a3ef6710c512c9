import { page, type PageCtx } from '../../web/components.js';
import { html } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import type { ServerContents } from './servers.js';

/** "Leave <server>?": a member's way out (issue #21 §3). */
export function leaveServerPage(ctx: PageCtx, server: { id: string; name: string }, error?: string): string {
  return page(ctx, `Leave ${server.name}`, html`<div class="card">
<h1>Leave <bdi>${server.name}</bdi>?</h1>
${error ? html`<div class="error" role="alert">${error}</div>` : ''}
<p>You will no longer see its channels, and its bots can no longer send you direct messages because of it. To come back you need a new invitation or invite link.</p>
<form method="post" action="/servers/${server.id}/leave">${csrfField(ctx.csrfToken)}<div class="actions"><button class="danger" type="submit">Leave server</button><a class="button secondary" href="/servers/${server.id}">Cancel</a></div></form>
</div>`, { width: 'narrow' });
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** What deleting a server removes, counted, for its owner to confirm (issue #21 §3). */
export function deleteServerPage(ctx: PageCtx, server: { id: string; name: string }, contents: ServerContents): string {
  const items = [
    plural(contents.channels, 'channel', 'channels'),
    plural(contents.messages, 'message', 'messages'),
    plural(contents.webhooks, 'webhook', 'webhooks'),
    plural(contents.roles, 'role', 'roles'),
    plural(contents.members, 'member besides you', 'members besides you'),
    plural(contents.botInstalls, 'bot install', 'bot installs'),
    plural(contents.inviteLinks, 'invite link', 'invite links'),
    plural(contents.pendingInvitations, 'pending invitation', 'pending invitations'),
  ];
  return page(ctx, `Delete ${server.name}`, html`<div class="card">
<h1>Delete <bdi>${server.name}</bdi>?</h1>
<p>This cannot be undone. Deleting the server removes, for everyone:</p>
<ul class="deletion-summary">${items.map((item) => html`<li>${item}</li>`)}</ul>
<p>Webhook URLs of its channels stop working (404), and its members lose access at once.</p>
<form method="post" action="/servers/${server.id}/delete">${csrfField(ctx.csrfToken)}<div class="actions"><button class="danger" type="submit">Delete server</button><a class="button secondary" href="/servers/${server.id}/settings">Cancel</a></div></form>
</div>`, { width: 'narrow' });
}

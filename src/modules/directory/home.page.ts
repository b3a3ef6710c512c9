import { avatar, formCard, formError, formValue, notice, page, type FormError, type FormValues, type PageCtx } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import type { Channel } from './channels.js';
import type { MemberInvitation } from './members.js';
import { SERVER_NAME_MAX_LENGTH } from './servers.js';

/** Signed out: what this is and where to start. */
export function landingPage(ctx: PageCtx): string {
  return page(ctx, 'Welcome', html`<div class="card">
<h1>${ctx.serviceName}</h1>
<p>Servers with text channels for your team, and the doorway apps use to reach them: people sign in and approve apps with OAuth 2.0, bots join servers, and tools post into channels through webhooks.</p>
<div class="actions"><a class="button" href="/login">Sign in</a><a class="button secondary" href="/register">Create an account</a></div>
</div>
<p class="muted small">Building an app? Sign in and open <a href="/developers/applications">Developers</a>.</p>`, { width: 'narrow' });
}

export interface HomeServer {
  id: string;
  name: string;
  iconUrl: string | null;
  ownerId?: string;
  channels: Array<Pick<Channel, 'id' | 'name'>>;
}

export interface HomePageInput {
  ctx: PageCtx;
  servers: HomeServer[];
  /** Invitations waiting for the viewer's answer (issue #21 §3). */
  invitations?: MemberInvitation[];
  notice?: string | undefined;
  error?: FormError;
  values?: FormValues;
}

/** Pending invitations, each with Accept and Decline: joining a server is always the person's own act. */
function invitationsCard(ctx: PageCtx, invitations: readonly MemberInvitation[], error: FormError | undefined): SafeHtml {
  if (invitations.length === 0) return html`${formError(error, 'invitation')}`;
  return html`<div class="card invitations">
<h2>Invitations</h2>
${formError(error, 'invitation')}
<ul class="plain">${invitations.map(
    (i) => html`<li id="invitation-${i.id}"><p><bdi>${i.inviterName}</bdi> invited you to join <strong><bdi>${i.serverName}</bdi></strong>. <span class="small muted">Expires ${new Date(i.expiresAt).toISOString().slice(0, 16).replace('T', ' ')} UTC.</span></p>
<div class="actions">
<form method="post" action="/invitations/${i.id}/accept">${csrfField(ctx.csrfToken)}<button type="submit">Accept</button></form>
<form method="post" action="/invitations/${i.id}/decline">${csrfField(ctx.csrfToken)}<button class="secondary" type="submit">Decline</button></form>
</div></li>`,
  )}</ul>
<p class="hint">You become a member only if you accept. Bots in a server you join may then send you direct messages.</p>
</div>`;
}

/** Signed in: your servers and their channels, and a form to create one. */
export function homePage(input: HomePageInput): string {
  const { ctx, servers } = input;
  const list = servers.length
    ? html`<div class="grid2">${servers.map(
        (s) => html`<div class="card">
<h2>${avatar(s.name, s.iconUrl)} <a href="/servers/${s.id}"><bdi>${s.name}</bdi></a></h2>
${s.channels.length ? html`<ul class="plain">${s.channels.map((c) => html`<li><a href="/channels/${c.id}"># ${c.name}</a></li>`)}</ul>` : html`<p class="muted">No channels yet.</p>`}
${
  s.ownerId === undefined || !ctx.viewer
    ? ''
    : s.ownerId === ctx.viewer.id
      ? html`<p class="small"><a href="/servers/${s.id}/delete">Delete server</a></p>`
      : html`<p class="small"><a href="/servers/${s.id}/leave">Leave server</a></p>`
}
</div>`,
      )}</div>`
    : html`<p class="muted">You are not in any server yet. Create one below, or open an invite link someone sent you.</p>`;
  return page(ctx, 'Your servers', html`<h1>Your servers</h1>
${notice(input.notice)}
${invitationsCard(ctx, input.invitations ?? [], input.error)}
${list}
${formCard(ctx, input.error, { title: 'Create a server', form: 'create-server', action: '/servers', submit: 'Create server' }, html`<label for="server-name">Server name</label>
<input id="server-name" name="name" type="text" required maxlength="${SERVER_NAME_MAX_LENGTH}" value="${formValue(input.values, 'name')}">
<p class="hint">You become its owner. It starts with a #general channel.</p>`)}`);
}

/** A server without channels: nothing to show but a way to make one. */
export function emptyServerPage(ctx: PageCtx, server: { id: string; name: string }, canManageChannels: boolean): string {
  return page(ctx, server.name, html`<div class="card"><h1>${server.name}</h1><p>This server has no channels.</p>
${canManageChannels ? html`<p><a class="button" href="/servers/${server.id}/settings/channels">Create a channel</a></p>` : html`<p class="muted">Ask someone who manages channels to create one.</p>`}</div>`, { width: 'narrow' });
}

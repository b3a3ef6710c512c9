import { avatar, formError, page, type PageCtx } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import type { ServerInvitation } from './invitations.js';
import { inviteProblem } from './invites.js';
import type { InviteRow, SettingsPageInput } from './server-settings.js';

function whenText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * One listed invite (issue #24: "every active link listed with its code so it can be copied again
 * or revoked"): a usable link in a read-only field with its Copy button (app.js); an expired or
 * used-up one without its link (it would not work); one whose code was never kept says so.
 */
function inviteRow(input: SettingsPageInput, i: InviteRow): SafeHtml {
  const { server, ctx } = input;
  const created = whenText(i.createdAt);
  const problem = inviteProblem(i, input.now, i.creatorCanInvite);
  const who = `the link ${i.creatorName} created ${created}`;
  const link = problem
    ? html`<p class="muted">${problem === 'expired' ? 'Expired' : problem === 'used-up' ? 'Used up' : 'Its creator can no longer invite people here'}: this link no longer works.</p>`
    : i.url
      ? html`<div class="copyrow"><input id="invite-${i.id}" type="text" readonly data-select value="${i.url}" spellcheck="false" class="mono" aria-label="Invite link: ${who}"><button type="button" class="secondary" data-copy="invite-${i.id}" aria-label="Copy ${who}" hidden>Copy</button></div>`
      : html`<p class="muted">Link not shown: it was created before invite codes were kept, or under a server secret no longer configured. It still works; revoke it and create a new one to have a link to copy.</p>`;
  return html`<li>${link}
<p class="small muted">Created by ${i.creatorName}, ${created} · ${i.uses}${i.maxUses !== null ? html` of ${i.maxUses}` : ''} use${i.uses === 1 && i.maxUses === null ? '' : 's'} · ${
    i.expiresAt === null ? 'never expires' : problem === 'expired' ? 'expired' : html`expires ${whenText(i.expiresAt)}`
  }</p>
<form method="post" action="/servers/${server.id}/invites/${i.id}/delete">${csrfField(ctx.csrfToken)}<button class="secondary" type="submit" aria-label="Revoke ${who}">Revoke</button></form></li>`;
}

/**
 * One pending invitation by username (issue #36 §3): who sent it, when, what roles it offers and
 * when it expires, with Cancel; not to whom (docs/permissions.md, "No username oracle").
 */
function invitationRow(input: SettingsPageInput, i: ServerInvitation): SafeHtml {
  const { server, ctx } = input;
  const sent = whenText(i.createdAt);
  const roles = i.roleIds.map((id) => input.roles.find((r) => r.id === id)?.name).filter((name): name is string => name !== undefined);
  const who = `the invitation ${i.inviterName} sent ${sent}`;
  return html`<li>
<p>Sent by <bdi>${i.inviterName}</bdi>, ${sent}${roles.length ? html` · offers ${roles.map((name, n) => html`${n > 0 ? ', ' : ''}<bdi>${name}</bdi>`)}` : ''} · expires ${whenText(i.expiresAt)}</p>
${i.senderCanInvite ? '' : html`<p class="muted">No longer works: <bdi>${i.inviterName}</bdi> can no longer invite people here.</p>`}
<form method="post" action="/servers/${server.id}/invitations/${i.id}/cancel">${csrfField(ctx.csrfToken)}<button class="secondary" type="submit" aria-label="Cancel ${who}">Cancel invitation</button></form></li>`;
}

export function invitesSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx, can } = input;
  return html`${
    input.createdInviteUrl
      ? html`<div class="notice" role="status"><p><strong>Your invite link.</strong> Copy it and send it to the people you invite.${can.manageServer ? ' It stays listed under Active links, to copy again or revoke, until it expires.' : ' People with Manage server can list and revoke it.'}</p>
<label for="invite-url">Invite link</label>
<div class="copyrow"><input id="invite-url" type="text" readonly data-select value="${input.createdInviteUrl}" spellcheck="false" class="mono"><button type="button" class="secondary" data-copy="invite-url" hidden>Copy</button></div></div>`
      : ''
  }
<div class="card">
<h1>Invites</h1>
${formError(input.error, 'create-invite')}
<form method="post" action="/servers/${server.id}/invites">
${csrfField(ctx.csrfToken)}
<label for="invite-expires">Expire after</label>
<select id="invite-expires" name="expiresIn">
<option value="1800">30 minutes</option><option value="3600">1 hour</option><option value="21600">6 hours</option><option value="43200">12 hours</option><option value="86400">1 day</option><option value="604800" selected>7 days</option><option value="never">Never</option>
</select>
<label for="invite-max">Maximum uses</label>
<select id="invite-max" name="maxUses">
<option value="" selected>No limit</option><option value="1">1 use</option><option value="5">5 uses</option><option value="10">10 uses</option><option value="25">25 uses</option><option value="50">50 uses</option><option value="100">100 uses</option>
</select>
<div class="actions"><button type="submit">Create invite link</button></div>
</form>
</div>
${
  can.manageServer
    ? html`<div class="card"><h2>Active links</h2>
${
  input.invites.length
    ? html`<ul class="invite-rows">${input.invites.map((i) => inviteRow(input, i))}</ul>`
    : html`<p class="muted">No invite links.</p>`
}</div>
<div class="card"><h2>Pending invitations</h2>
<p class="hint">Invitations sent by username from <a href="/servers/${server.id}/settings/members">Members</a>, until they are answered or expire. Who was invited is not shown.</p>
${
  input.invitations?.length
    ? html`<ul class="invite-rows">${input.invitations.map((i) => invitationRow(input, i))}</ul>`
    : html`<p class="muted">No pending invitations.</p>`
}</div>`
    : ''
}`;
}

/** Server settings: one section per page, a sidebar of the sections the viewer may open. */

export interface InvitePageInput {
  ctx: PageCtx;
  code: string;
  server: { id: string; name: string; iconUrl: string | null };
  alreadyMember: boolean;
}

/** "Join <server>": a button for the signed-in, sign-in links that come back here for others. */
export function invitePage(input: InvitePageInput): string {
  const { ctx, server, code } = input;
  const here = `/invite/${code}`;
  const action = input.alreadyMember
    ? html`<p>You are already a member.</p><div class="actions"><a class="button" href="/servers/${server.id}">Open ${server.name}</a></div>`
    : ctx.viewer
      ? html`<form method="post" action="${here}">${csrfField(ctx.csrfToken)}<div class="actions"><button type="submit">Join ${server.name}</button><a class="button secondary" href="/">Not now</a></div></form>`
      : html`<p>Sign in to join.</p><div class="actions"><a class="button" href="/login?next=${encodeURIComponent(here)}">Sign in</a><a class="button secondary" href="/register?next=${encodeURIComponent(here)}">Create an account</a></div>`;
  return page(ctx, `Join ${server.name}`, html`<div class="card">
<p class="muted">You have been invited to join</p>
<h1>${avatar(server.name, server.iconUrl)} ${server.name}</h1>
${action}
</div>`, { width: 'narrow' });
}

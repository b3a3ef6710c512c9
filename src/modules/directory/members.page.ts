import { avatar, formCard, formError, formList, formValue } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { isEveryoneRole, ungrantableBits, type Role } from './roles.js';
import { roleDot } from './roles.page.js';
import type { SettingsPageInput } from './server-settings.js';

function rolePills(roleIds: readonly string[], roles: readonly Role[]): SafeHtml {
  const named = roleIds.map((id) => roles.find((r) => r.id === id)).filter((r): r is Role => r !== undefined);
  return named.length ? html`${named.map((r) => html`<span class="pill">${roleDot(r.color)}${r.name}</span>`)}` : html`<span class="muted small">no roles</span>`;
}

/** One checkbox per permission, grouped; bits the viewer cannot grant are shown but disabled. */
function roleCheckboxes(roles: readonly Role[], selected: readonly string[], actor: bigint, idPrefix: string): SafeHtml {
  const assignable = roles.filter((r) => !isEveryoneRole(r) && r.managedApplicationId === null);
  if (assignable.length === 0) return html`<p class="muted small">No roles to give yet.</p>`;
  return html`<div class="grid2">${assignable.map((r) => {
    const reachable = ungrantableBits(actor, r.permissions) === 0n;
    return html`<label class="check" for="${idPrefix}-${r.id}"><input id="${idPrefix}-${r.id}" type="checkbox" name="roles" value="${r.id}"${selected.includes(r.id) ? html` checked` : ''}${reachable ? '' : html` disabled`}> <span>${r.name}${reachable ? '' : html` <span class="hint">(has permissions you lack)</span>`}</span></label>`;
  })}</div>`;
}

export function membersSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx, can } = input;
  const addFailed = input.error?.form === 'add-member';
  return html`<div class="card">
<h1>Members</h1>
<ul class="plain">${input.members.map((m) => {
    const isOwner = m.userId === server.ownerId;
    const formKey = `member-${m.userId}`;
    return html`<li>
<div class="message">${avatar(m.person.name, m.person.avatarUrl)}<div>
<strong>${m.person.name}</strong> <span class="muted">@${m.person.username}</span> ${isOwner ? html`<span class="pill">Owner</span>` : ''}${m.person.bot ? html`<span class="badge">APP</span>` : ''}
<div>${rolePills(m.roleIds, input.roles)}</div>
</div></div>
${formError(input.error, formKey)}
${
  can.manageRoles
    ? html`<details><summary>Change roles</summary>
<form method="post" action="/servers/${server.id}/members/${m.userId}/roles">
${csrfField(ctx.csrfToken)}
${roleCheckboxes(input.roles, input.error?.form === formKey ? formList(input.values, 'roles') : m.roleIds, input.permissions, `m${m.userId}`)}
<div class="actions"><button type="submit">Save roles</button></div>
</form></details>`
    : ''
}
${
  can.removeMembers && !isOwner
    ? html`<p class="actions"><a class="button secondary" href="/servers/${server.id}/members/${m.userId}/remove" aria-label="Remove ${m.person.name} from the server…">Remove…</a></p>`
    : ''
}
</li>`;
  })}</ul>
</div>
${
  can.manageServer
    ? formCard(
        ctx,
        input.error,
        { title: 'Invite a member', form: 'add-member', action: `/servers/${server.id}/members`, submit: 'Send invitation', after: html`<p class="hint">They see the invitation on their home page and become a member only if they accept it${can.manageRoles ? ', with the roles chosen here' : ''}.${
      input.pendingInvitations ? ` ${input.pendingInvitations} invitation${input.pendingInvitations === 1 ? '' : 's'} awaiting an answer.` : ''
    } Or send an invite link from <a href="/servers/${server.id}/settings/invites">Invites</a>.</p>` },
        html`<label for="member-username">Username</label>
<input id="member-username" name="username" type="text" required maxlength="33" value="${addFailed ? formValue(input.values, 'username') : ''}" autocapitalize="none" spellcheck="false">
${can.manageRoles ? html`<p class="hint">Roles to give them:</p>${roleCheckboxes(input.roles, addFailed ? formList(input.values, 'roles') : [], input.permissions, 'add')}` : ''}`,
      )
    : ''
}`;
}

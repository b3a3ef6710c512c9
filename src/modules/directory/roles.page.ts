import { Permission, has, type PermissionName } from '../../core/permissions.js';
import { formCard, formError, formValue, type FormValues } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { permissionList } from '../../web/permission-list.js';
import { isEveryoneRole, ungrantableBits } from './roles.js';
import type { SettingsPageInput } from './server-settings.js';

/**
 * The role's permissions (issue #24): only those that do something here are offered; the bits a
 * role holds beyond them are kept as they are when the form is saved.
 */
function permissionCheckboxes(selected: bigint, actor: bigint, editable: boolean): SafeHtml {
  const items = (Object.keys(Permission) as PermissionName[]).map((name) => {
    const bit = Permission[name];
    return { name, box: { checked: has(selected, bit), disabled: !(editable && ungrantableBits(actor, bit) === 0n) } };
  });
  return permissionList({ field: 'permissions', idPrefix: 'perm', items, keep: editable ? selected : 0n });
}

/**
 * A role's colour as a dot (issue #24): an SVG fill, since the CSP forbids inline styles; nothing
 * for colour 0, which means "no colour" as in Discord.
 */
export function roleDot(color: number): SafeHtml {
  return color === 0 ? html`` : html`<svg class="role-dot" width="12" height="12" viewBox="0 0 12 12" aria-hidden="true"><circle cx="6" cy="6" r="6" fill="${colorText(color)}"/></svg> `;
}

/** The colour field: a colour picker whose black (#000000) means no colour. */
function colorField(value: string, editable: boolean): SafeHtml {
  return html`<label for="role-color">Colour</label>
<input id="role-color" name="color" type="color" value="${value === '' ? '#000000' : value}"${editable ? '' : html` disabled`} aria-describedby="role-color-hint">
<p class="hint" id="role-color-hint">Black means no colour.</p>`;
}

function selectedPermissions(values: FormValues | undefined, fallback: bigint): bigint {
  const raw = values?.['permissions'];
  if (raw === undefined) return values ? 0n : fallback;
  let bits = 0n;
  for (const name of Array.isArray(raw) ? raw : [raw]) if (Object.hasOwn(Permission, name)) bits |= Permission[name as PermissionName];
  return bits;
}

export function rolesSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx } = input;
  const failed = input.error?.form === 'create-role';
  return html`<div class="card">
<h1>Roles</h1>
<p class="muted small">Members hold @everyone's permissions plus those of each of their roles. The owner and anyone with Administrator hold every permission. You can only give out permissions you hold yourself.</p>
<ul class="plain">${input.roles.map(
    (r) => html`<li>${roleDot(r.color)}<a href="/servers/${server.id}/settings/roles/${r.id}"><strong>${r.name}</strong></a>
${r.managedApplicationId ? html`<span class="badge">APP</span>` : ''}
<span class="muted small">${input.members.filter((m) => isEveryoneRole(r) || m.roleIds.includes(r.id)).length} member(s)</span></li>`,
  )}</ul>
</div>
${formCard(ctx, input.error, { title: 'Create a role', form: 'create-role', action: `/servers/${server.id}/roles`, submit: 'Create role' }, html`<label for="role-name">Name</label>
<input id="role-name" name="name" type="text" required maxlength="100" value="${failed ? formValue(input.values, 'name') : ''}">
${colorField(failed ? formValue(input.values, 'color') : '', true)}
<h3>Permissions</h3>
${permissionCheckboxes(failed ? selectedPermissions(input.values, 0n) : 0n, input.permissions, true)}`)}`;
}

function colorText(color: number): string {
  return color === 0 ? '' : `#${color.toString(16).padStart(6, '0')}`;
}

export function roleSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx } = input;
  const role = input.role;
  if (!role) return html``;
  const everyone = isEveryoneRole(role);
  const managed = role.managedApplicationId !== null;
  const inReach = ungrantableBits(input.permissions, role.permissions) === 0n;
  const editable = !managed && inReach;
  const failed = input.error?.form === 'edit-role';
  return html`<div class="card">
<p><a href="/servers/${server.id}/settings/roles">← All roles</a></p>
<h1>${roleDot(role.color)}${role.name}</h1>
${managed ? html`<p class="notice">This role belongs to an app: it changes when the app is added again or removed, not here.</p>` : ''}
${!managed && !inReach ? html`<p class="notice">This role has permissions you do not have, so you cannot change it.</p>` : ''}
${formError(input.error, 'edit-role')}
<form method="post" action="/servers/${server.id}/roles/${role.id}">
${csrfField(ctx.csrfToken)}
${
  everyone
    ? html`<p class="hint">Every member has @everyone: what it allows, everyone can do.</p>`
    : html`<label for="role-name">Name</label>
<input id="role-name" name="name" type="text" required maxlength="100" value="${failed ? formValue(input.values, 'name') : role.name}"${editable ? '' : html` disabled`}>
${colorField(failed ? formValue(input.values, 'color') : colorText(role.color), editable)}`
}
<h2>Permissions</h2>
${permissionCheckboxes(failed ? selectedPermissions(input.values, role.permissions) : role.permissions, input.permissions, editable)}
${editable ? html`<div class="actions"><button type="submit">Save changes</button></div>` : ''}
</form>
</div>
${
  editable && !everyone
    ? html`<div class="card"><h2>Delete this role</h2><p class="muted small">Members who have it lose its permissions.</p>
<form method="post" action="/servers/${server.id}/roles/${role.id}/delete">${csrfField(ctx.csrfToken)}<button class="danger" type="submit">Delete role</button></form></div>`
    : ''
}`;
}

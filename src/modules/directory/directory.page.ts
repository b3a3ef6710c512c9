import { PERMISSION_LABELS, Permission, has, type PermissionName } from '../../core/permissions.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import type { Channel } from './channels.js';
import type { Invite } from './invites.js';
import type { MemberInvitation, MemberWithPerson } from './members.js';
import { PERMISSION_GROUPS, isEveryoneRole, ungrantableBits, type Role } from './roles.js';
import { SERVER_NAME_MAX_LENGTH, type ServerContents } from './servers.js';

/** What every page needs from the request (web/pages.ts `pageContext`). */
export interface PageCtx {
  viewer: Viewer | undefined;
  csrfToken: string;
  serviceName: string;
}

/** Values typed into a form that failed, so it comes back filled in. */
export type FormValues = Record<string, string | string[] | undefined>;

/** A refused form: which form (so the message shows beside it) and why. */
export interface FormError {
  form: string;
  message: string;
}

function value(values: FormValues | undefined, name: string): string {
  const v = values?.[name];
  return typeof v === 'string' ? v : '';
}

function errorFor(error: FormError | undefined, form: string): SafeHtml {
  return error && error.form === form ? html`<div class="error" role="alert">${error.message}</div>` : html``;
}

/** An avatar image, or the name's first letter in a circle when there is none. */
export function avatar(name: string, url: string | null): SafeHtml {
  if (url) return html`<img class="avatar" src="${url}" alt="" width="40" height="40">`;
  const initial = [...name.trim()][0]?.toUpperCase() ?? '?';
  return html`<span class="avatar" aria-hidden="true">${initial}</span>`;
}

// --- Home -------------------------------------------------------------------------------------

/** Signed out: what this is and where to start. */
export function landingPage(ctx: PageCtx): string {
  return layout({
    title: 'Welcome',
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    width: 'narrow',
    body: html`<div class="card">
<h1>${ctx.serviceName}</h1>
<p>Servers with text channels for your team, and the doorway apps use to reach them: people sign in and approve apps with OAuth 2.0, bots join servers, and tools post into channels through webhooks.</p>
<div class="actions"><a class="button" href="/login">Sign in</a><a class="button secondary" href="/register">Create an account</a></div>
</div>
<p class="muted small">Building an app? Sign in and open <a href="/developers/applications">Developers</a>.</p>`,
  });
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
  if (invitations.length === 0) return html`${errorFor(error, 'invitation')}`;
  return html`<div class="card invitations">
<h2>Invitations</h2>
${errorFor(error, 'invitation')}
<ul class="plain">${invitations.map(
    (i) => html`<li id="invitation-${i.id}"><p><bdi>${i.inviterName}</bdi> invited you to join <strong><bdi>${i.serverName}</bdi></strong>.</p>
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
  return layout({
    title: 'Your servers',
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    body: html`<h1>Your servers</h1>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${invitationsCard(ctx, input.invitations ?? [], input.error)}
${list}
<div class="card">
<h2>Create a server</h2>
${errorFor(input.error, 'create-server')}
<form method="post" action="/servers">
${csrfField(ctx.csrfToken)}
<label for="server-name">Server name</label>
<input id="server-name" name="name" type="text" required maxlength="${SERVER_NAME_MAX_LENGTH}" value="${value(input.values, 'name')}">
<p class="hint">You become its owner. It starts with a #general channel.</p>
<div class="actions"><button type="submit">Create server</button></div>
</form>
</div>`,
  });
}

/** A server without channels: nothing to show but a way to make one. */
export function emptyServerPage(ctx: PageCtx, server: { id: string; name: string }, canManageChannels: boolean): string {
  return layout({
    title: server.name,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    width: 'narrow',
    body: html`<div class="card"><h1>${server.name}</h1><p>This server has no channels.</p>
${canManageChannels ? html`<p><a class="button" href="/servers/${server.id}/settings/channels">Create a channel</a></p>` : html`<p class="muted">Ask someone who manages channels to create one.</p>`}</div>`,
  });
}

// --- Server settings --------------------------------------------------------------------------

export type SettingsSection = 'overview' | 'channels' | 'roles' | 'role' | 'members' | 'invites';

/** What the viewer may do here; the page shows no control for anything else. */
export interface SettingsAbilities {
  manageServer: boolean;
  manageChannels: boolean;
  manageRoles: boolean;
  createInvite: boolean;
  removeMembers: boolean;
  /** Manage webhooks or Manage server: the Integrations section (webhooks, installed apps). */
  integrations: boolean;
}

export function settingsAbilities(permissions: bigint): SettingsAbilities {
  return {
    manageServer: has(permissions, Permission.MANAGE_SERVER),
    manageChannels: has(permissions, Permission.MANAGE_CHANNELS),
    manageRoles: has(permissions, Permission.MANAGE_ROLES),
    createInvite: has(permissions, Permission.CREATE_INSTANT_INVITE) || has(permissions, Permission.MANAGE_SERVER),
    removeMembers: has(permissions, Permission.KICK_MEMBERS) || has(permissions, Permission.MANAGE_SERVER),
    integrations: has(permissions, Permission.MANAGE_WEBHOOKS) || has(permissions, Permission.MANAGE_SERVER),
  };
}

export interface InviteRow extends Invite {
  creatorName: string;
}

export interface SettingsPageInput {
  ctx: PageCtx;
  section: SettingsSection;
  server: { id: string; name: string; ownerId: string };
  /** The viewer's permissions here, to disable what they cannot grant. */
  permissions: bigint;
  can: SettingsAbilities;
  channels: Channel[];
  roles: Role[];
  members: MemberWithPerson[];
  invites: InviteRow[];
  /** How many invitations await an answer (a number only: who was invited is not shown). */
  pendingInvitations?: number;
  now: number;
  /** The role being edited (section 'role'). */
  role?: Role;
  /** A just-created invite link: shown this once. */
  createdInviteUrl?: string;
  notice?: string;
  error?: FormError;
  values?: FormValues;
}

function sectionNav(input: SettingsPageInput): SafeHtml {
  return settingsNav(input.server, input.can, input.section);
}

/** The server settings sidebar: the sections the viewer may open (also used by webhooks.page.ts). */
export function settingsNav(server: { id: string; name: string }, can: SettingsAbilities, section: SettingsSection | 'integrations'): SafeHtml {
  const items: Array<[SettingsSection | 'integrations', string, boolean]> = [
    ['overview', 'Overview', true],
    ['channels', 'Channels', can.manageChannels],
    ['roles', 'Roles', can.manageRoles],
    ['members', 'Members', can.manageServer || can.manageRoles],
    ['invites', 'Invites', can.createInvite],
    ['integrations', 'Integrations', can.integrations],
  ];
  const current = section === 'role' ? 'roles' : section;
  return html`<nav class="sidebar card" aria-label="Server settings">
<p class="muted small">${server.name}</p>
${items
  .filter(([, , visible]) => visible)
  .map(([key, label]) => html`<a href="/servers/${server.id}/settings${key === 'overview' ? '' : `/${key}`}"${key === current ? html` class="active" aria-current="page"` : ''}>${label}</a>`)}
<a href="/servers/${server.id}">← Back to channels</a>
</nav>`;
}

function overviewSection(input: SettingsPageInput): SafeHtml {
  const { server, can, ctx } = input;
  const owner = input.members.find((m) => m.userId === server.ownerId);
  return html`<div class="card">
<h1>Overview</h1>
<p>Owner: <strong>${owner ? owner.person.name : 'unknown'}</strong>${owner ? html` <span class="muted">@${owner.person.username}</span>` : ''} · ${input.members.length} member${input.members.length === 1 ? '' : 's'} · ${input.channels.length} channel${input.channels.length === 1 ? '' : 's'}</p>
<p class="muted small">Server id <code>${server.id}</code></p>
${
  can.manageServer
    ? html`${errorFor(input.error, 'rename')}
<form method="post" action="/servers/${server.id}/settings">
${csrfField(ctx.csrfToken)}
<label for="name">Server name</label>
<input id="name" name="name" type="text" required maxlength="${SERVER_NAME_MAX_LENGTH}" value="${input.error?.form === 'rename' ? value(input.values, 'name') : server.name}">
<div class="actions"><button type="submit">Save</button></div>
</form>`
    : html`<p class="muted">Only people with Manage server can rename it.</p>`
}
</div>
${
  ctx.viewer?.id === server.ownerId
    ? html`<div class="card"><h2>Delete this server</h2><p>Deleting removes its channels, messages, webhooks, roles, memberships and bot installs for good.</p><p><a class="button secondary" href="/servers/${server.id}/delete">Delete server…</a></p></div>`
    : html`<div class="card"><h2>Leave this server</h2><p><a class="button secondary" href="/servers/${server.id}/leave">Leave server…</a></p></div>`
}`;
}

function channelsSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx } = input;
  return html`<div class="card">
<h1>Channels</h1>
${
  input.channels.length
    ? html`<ul class="plain">${input.channels.map(
        (c) => html`<li><a href="/channels/${c.id}"># ${c.name}</a>${c.topic ? html` <span class="muted small">— ${c.topic}</span>` : ''}
<form method="post" action="/servers/${server.id}/channels/${c.id}/delete" class="actions">${csrfField(ctx.csrfToken)}<button class="secondary" type="submit" aria-label="Delete #${c.name}">Delete</button></form></li>`,
      )}</ul>`
    : html`<p class="muted">No channels yet.</p>`
}
</div>
<div class="card">
<h2>Create a channel</h2>
${errorFor(input.error, 'create-channel')}
<form method="post" action="/servers/${server.id}/channels">
${csrfField(ctx.csrfToken)}
<label for="channel-name">Name</label>
<input id="channel-name" name="name" type="text" required maxlength="100" value="${input.error?.form === 'create-channel' ? value(input.values, 'name') : ''}" autocapitalize="none" spellcheck="false">
<p class="hint">Lower-case letters, digits, dashes and underscores; spaces become dashes.</p>
<label for="channel-topic">Topic <span class="muted">(optional)</span></label>
<input id="channel-topic" name="topic" type="text" maxlength="1024" value="${input.error?.form === 'create-channel' ? value(input.values, 'topic') : ''}">
<div class="actions"><button type="submit">Create channel</button></div>
</form>
</div>`;
}

function rolePills(roleIds: readonly string[], roles: readonly Role[]): SafeHtml {
  const named = roleIds.map((id) => roles.find((r) => r.id === id)).filter((r): r is Role => r !== undefined);
  return named.length ? html`${named.map((r) => html`<span class="pill">${r.name}</span>`)}` : html`<span class="muted small">no roles</span>`;
}

/** One checkbox per permission, grouped; bits the viewer cannot grant are shown but disabled. */
function permissionCheckboxes(selected: bigint, actor: bigint, editable: boolean): SafeHtml {
  return html`${PERMISSION_GROUPS.map(
    (group) => html`<fieldset><legend>${group.title}</legend><div class="grid2">${group.names.map((name: PermissionName) => {
      const bit = Permission[name];
      const grantable = editable && ungrantableBits(actor, bit) === 0n;
      return html`<label class="check"><input type="checkbox" name="permissions" value="${name}"${has(selected, bit) ? html` checked` : ''}${grantable ? '' : html` disabled`}> <span>${PERMISSION_LABELS[name]}${name === 'ADMINISTRATOR' ? html`<br><span class="hint">Every permission, everywhere in the server.</span>` : ''}</span></label>`;
    })}</div></fieldset>`,
  )}`;
}

function selectedPermissions(values: FormValues | undefined, fallback: bigint): bigint {
  const raw = values?.['permissions'];
  if (raw === undefined) return values ? 0n : fallback;
  let bits = 0n;
  for (const name of Array.isArray(raw) ? raw : [raw]) if (Object.hasOwn(Permission, name)) bits |= Permission[name as PermissionName];
  return bits;
}

function rolesSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx } = input;
  const failed = input.error?.form === 'create-role';
  return html`<div class="card">
<h1>Roles</h1>
<p class="muted small">Members hold @everyone's permissions plus those of each of their roles. The owner and anyone with Administrator hold every permission. You can only give out permissions you hold yourself.</p>
<ul class="plain">${input.roles.map(
    (r) => html`<li><a href="/servers/${server.id}/settings/roles/${r.id}"><strong>${r.name}</strong></a>
${r.managedApplicationId ? html`<span class="badge">APP</span>` : ''}
<span class="muted small">${input.members.filter((m) => isEveryoneRole(r) || m.roleIds.includes(r.id)).length} member(s)</span></li>`,
  )}</ul>
</div>
<div class="card">
<h2>Create a role</h2>
${errorFor(input.error, 'create-role')}
<form method="post" action="/servers/${server.id}/roles">
${csrfField(ctx.csrfToken)}
<label for="role-name">Name</label>
<input id="role-name" name="name" type="text" required maxlength="100" value="${failed ? value(input.values, 'name') : ''}">
<label for="role-color">Colour <span class="muted">(optional, like #5865f2)</span></label>
<input id="role-color" name="color" type="text" maxlength="7" value="${failed ? value(input.values, 'color') : ''}" autocapitalize="none" spellcheck="false">
<h3>Permissions</h3>
${permissionCheckboxes(failed ? selectedPermissions(input.values, 0n) : 0n, input.permissions, true)}
<div class="actions"><button type="submit">Create role</button></div>
</form>
</div>`;
}

function colorText(color: number): string {
  return color === 0 ? '' : `#${color.toString(16).padStart(6, '0')}`;
}

function roleSection(input: SettingsPageInput): SafeHtml {
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
<h1>${role.name}</h1>
${managed ? html`<p class="notice">This role belongs to an app: it changes when the app is added again or removed, not here.</p>` : ''}
${!managed && !inReach ? html`<p class="notice">This role has permissions you do not have, so you cannot change it.</p>` : ''}
${errorFor(input.error, 'edit-role')}
<form method="post" action="/servers/${server.id}/roles/${role.id}">
${csrfField(ctx.csrfToken)}
${
  everyone
    ? html`<p class="hint">Every member has @everyone: what it allows, everyone can do.</p>`
    : html`<label for="role-name">Name</label>
<input id="role-name" name="name" type="text" required maxlength="100" value="${failed ? value(input.values, 'name') : role.name}"${editable ? '' : html` disabled`}>
<label for="role-color">Colour <span class="muted">(optional, like #5865f2)</span></label>
<input id="role-color" name="color" type="text" maxlength="7" value="${failed ? value(input.values, 'color') : colorText(role.color)}"${editable ? '' : html` disabled`} autocapitalize="none" spellcheck="false">`
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

function roleCheckboxes(roles: readonly Role[], selected: readonly string[], actor: bigint, idPrefix: string): SafeHtml {
  const assignable = roles.filter((r) => !isEveryoneRole(r) && r.managedApplicationId === null);
  if (assignable.length === 0) return html`<p class="muted small">No roles to give yet.</p>`;
  return html`<div class="grid2">${assignable.map((r) => {
    const reachable = ungrantableBits(actor, r.permissions) === 0n;
    return html`<label class="check" for="${idPrefix}-${r.id}"><input id="${idPrefix}-${r.id}" type="checkbox" name="roles" value="${r.id}"${selected.includes(r.id) ? html` checked` : ''}${reachable ? '' : html` disabled`}> <span>${r.name}${reachable ? '' : html` <span class="hint">(has permissions you lack)</span>`}</span></label>`;
  })}</div>`;
}

function listOf(values: FormValues | undefined, name: string): string[] {
  const v = values?.[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function membersSection(input: SettingsPageInput): SafeHtml {
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
${errorFor(input.error, formKey)}
${
  can.manageRoles
    ? html`<details><summary>Change roles</summary>
<form method="post" action="/servers/${server.id}/members/${m.userId}/roles">
${csrfField(ctx.csrfToken)}
${roleCheckboxes(input.roles, input.error?.form === formKey ? listOf(input.values, 'roles') : m.roleIds, input.permissions, `m${m.userId}`)}
<div class="actions"><button type="submit">Save roles</button></div>
</form></details>`
    : ''
}
${
  can.removeMembers && !isOwner
    ? html`<form method="post" action="/servers/${server.id}/members/${m.userId}/remove" class="actions">${csrfField(ctx.csrfToken)}<button class="secondary" type="submit" aria-label="Remove ${m.person.name} from the server">Remove</button></form>`
    : ''
}
</li>`;
  })}</ul>
</div>
${
  can.manageServer
    ? html`<div class="card">
<h2>Invite a member</h2>
${errorFor(input.error, 'add-member')}
<form method="post" action="/servers/${server.id}/members">
${csrfField(ctx.csrfToken)}
<label for="member-username">Username</label>
<input id="member-username" name="username" type="text" required maxlength="33" value="${addFailed ? value(input.values, 'username') : ''}" autocapitalize="none" spellcheck="false">
${can.manageRoles ? html`<p class="hint">Roles to give them:</p>${roleCheckboxes(input.roles, addFailed ? listOf(input.values, 'roles') : [], input.permissions, 'add')}` : ''}
<div class="actions"><button type="submit">Send invitation</button></div>
</form>
<p class="hint">They see the invitation on their home page and become a member only if they accept it${can.manageRoles ? ', with the roles chosen here' : ''}.${
      input.pendingInvitations ? ` ${input.pendingInvitations} invitation${input.pendingInvitations === 1 ? '' : 's'} awaiting an answer.` : ''
    } Or send an invite link from <a href="/servers/${server.id}/settings/invites">Invites</a>.</p>
</div>`
    : ''
}`;
}

function whenText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function invitesSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx, can } = input;
  return html`${
    input.createdInviteUrl
      ? html`<div class="notice" role="status"><p><strong>Your invite link.</strong> Copy it now: it is shown only this once.</p><code class="secret">${input.createdInviteUrl}</code></div>`
      : ''
  }
<div class="card">
<h1>Invites</h1>
${errorFor(input.error, 'create-invite')}
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
    ? html`<table><thead><tr><th>Created by</th><th>Uses</th><th>Expires</th><th></th></tr></thead><tbody>${input.invites.map(
        (i) => html`<tr><td>${i.creatorName}</td><td>${i.uses}${i.maxUses !== null ? html` / ${i.maxUses}` : ''}</td><td>${
          i.expiresAt === null ? 'never' : i.expiresAt <= input.now ? 'expired' : whenText(i.expiresAt)
        }</td><td><form method="post" action="/servers/${server.id}/invites/${i.id}/delete">${csrfField(ctx.csrfToken)}<button class="secondary" type="submit">Revoke</button></form></td></tr>`,
      )}</tbody></table>`
    : html`<p class="muted">No invite links.</p>`
}</div>`
    : ''
}`;
}

/** Server settings: one section per page, a sidebar of the sections the viewer may open. */
export function settingsPage(input: SettingsPageInput): string {
  const section =
    input.section === 'overview'
      ? overviewSection(input)
      : input.section === 'channels'
        ? channelsSection(input)
        : input.section === 'roles'
          ? rolesSection(input)
          : input.section === 'role'
            ? roleSection(input)
            : input.section === 'members'
              ? membersSection(input)
              : invitesSection(input);
  const { ctx } = input;
  return layout({
    title: `Settings · ${input.server.name}`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    body: html`<div class="layout">
${sectionNav(input)}
<div>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${section}
</div>
</div>`,
  });
}

// --- Invites ----------------------------------------------------------------------------------

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
  return layout({
    title: `Join ${server.name}`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    width: 'narrow',
    body: html`<div class="card">
<p class="muted">You have been invited to join</p>
<h1>${avatar(server.name, server.iconUrl)} ${server.name}</h1>
${action}
</div>`,
  });
}

// --- Leaving and deleting ---------------------------------------------------------------------

/** "Leave <server>?": a member's way out (issue #21 §3). */
export function leaveServerPage(ctx: PageCtx, server: { id: string; name: string }, error?: string): string {
  return layout({
    title: `Leave ${server.name}`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    width: 'narrow',
    body: html`<div class="card">
<h1>Leave <bdi>${server.name}</bdi>?</h1>
${error ? html`<div class="error" role="alert">${error}</div>` : ''}
<p>You will no longer see its channels, and its bots can no longer send you direct messages because of it. To come back you need a new invitation or invite link.</p>
<form method="post" action="/servers/${server.id}/leave">${csrfField(ctx.csrfToken)}<div class="actions"><button class="danger" type="submit">Leave server</button><a class="button secondary" href="/servers/${server.id}">Cancel</a></div></form>
</div>`,
  });
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
  return layout({
    title: `Delete ${server.name}`,
    serviceName: ctx.serviceName,
    viewer: ctx.viewer,
    csrfToken: ctx.csrfToken,
    width: 'narrow',
    body: html`<div class="card">
<h1>Delete <bdi>${server.name}</bdi>?</h1>
<p>This cannot be undone. Deleting the server removes, for everyone:</p>
<ul class="deletion-summary">${items.map((item) => html`<li>${item}</li>`)}</ul>
<p>Webhook URLs of its channels stop working (404), and its members lose access at once.</p>
<form method="post" action="/servers/${server.id}/delete">${csrfField(ctx.csrfToken)}<div class="actions"><button class="danger" type="submit">Delete server</button><a class="button secondary" href="/servers/${server.id}/settings">Cancel</a></div></form>
</div>`,
  });
}

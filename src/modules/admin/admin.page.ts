import { avatar, formError, notice, page, type FormError, type SignedInCtx } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import type { ServerContents } from '../directory/servers.js';
import { securityWords } from '../audit/audit-words.js';
import { isRegisteredApplication } from '../client-registration/client-registration.js';
import type { AdminApp, AdminAppImpact, AdminOverview, AdminPerson, AdminPersonView, AdminRefusalWhy, AdminServer, AdminServerView, Tally } from './admin.js';

/**
 * The admin pages (issue #39, docs/operations.md "The admin pages"): the instance's people, apps
 * and servers for its administrators, in the site's layout with a sidebar like Settings'. Every
 * destructive action goes through a confirmation page that counts what it affects.
 */

export type AdminSection = 'overview' | 'people' | 'apps' | 'servers';

const ADMIN_LINKS: ReadonlyArray<{ section: AdminSection; href: string; label: string }> = [
  { section: 'overview', href: '/admin', label: 'Overview' },
  { section: 'people', href: '/admin/people', label: 'People' },
  { section: 'apps', href: '/admin/apps', label: 'Apps' },
  { section: 'servers', href: '/admin/servers', label: 'Servers' },
];

function adminPage(ctx: SignedInCtx, section: AdminSection, title: string, content: SafeHtml): string {
  const body = html`<div class="layout">
<nav class="sidebar" aria-label="Admin">
${ADMIN_LINKS.map((l) => html`<a href="${l.href}"${l.section === section ? html` class="active" aria-current="page"` : ''}>${l.label}</a>`)}
</nav>
<div>${content}</div>
</div>`;
  return page(ctx, title, body);
}

/** Security events name apps by id here: the summary carries no app names. */
const NO_NAMES: ReadonlyMap<string, string> = new Map();

function when(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function tally(t: Tally): string {
  return t.more ? `${t.count} or more` : String(t.count);
}

function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') search.set(k, v);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

// The gate ------------------------------------------------------------------------------------

/** Why the admin pages are closed to the viewer, and the way forward when there is one. */
export function gatePage(ctx: SignedInCtx, refusal: { why: AdminRefusalWhy; message: string }, signInAgain: string): string {
  const way =
    refusal.why === 'no-second-factor'
      ? html`<p><a class="button" href="/settings/security">Go to Settings → Security</a></p>`
      : refusal.why === 'sign-in-again'
        ? html`<p><a class="button" href="${signInAgain}">Sign in again</a></p>`
        : html`<p><a href="/">Go to the home page</a></p>`;
  const title = refusal.why === 'no-second-factor' ? 'Enrol a second factor first' : refusal.why === 'sign-in-again' ? 'Sign in again to continue' : 'Administrators only';
  return page(ctx, title, html`<div class="card"><h1>${title}</h1><p>${refusal.message}</p>${way}</div>`, { width: 'narrow' });
}

/** A page of the admin area that names what is missing (an unknown person, app or server). */
export function adminNotFoundPage(ctx: SignedInCtx, section: AdminSection, title: string, detail: string): string {
  return adminPage(ctx, section, title, html`<div class="card"><h1>${title}</h1><p>${detail}</p><p class="muted small">Error 404</p></div>`);
}

// Overview ------------------------------------------------------------------------------------

export function overviewPage(ctx: SignedInCtx, overview: AdminOverview): string {
  return adminPage(
    ctx,
    'overview',
    'Admin',
    html`<h1>Admin</h1>
<p class="muted">Run this instance: find people, apps and servers; disable, enable or delete them. Every action is recorded in the audit log with you as its actor.</p>
<div class="grid2">
<div class="card"><h2><a href="/admin/people">People</a></h2>
<p>${tally(overview.admins)} ${overview.admins.count === 1 && !overview.admins.more ? 'administrator' : 'administrators'} · <a href="/admin/people?admins=1">list</a></p>
<p>${tally(overview.disabledPeople)} disabled · <a href="/admin/people?disabled=1">list</a></p></div>
<div class="card"><h2><a href="/admin/apps">Apps</a></h2>
<p>${tally(overview.disabledApps)} disabled · <a href="/admin/apps?disabled=1">list</a></p></div>
<div class="card"><h2><a href="/admin/servers">Servers</a></h2>
<p>Delete a server or transfer it to another member.</p></div>
</div>`,
  );
}

// People --------------------------------------------------------------------------------------

function personBadges(p: AdminPerson): SafeHtml {
  return html`${p.admin ? html`<span class="badge">ADMIN</span>` : ''}${p.disabledAt !== null ? html`<span class="pill">disabled</span>` : ''}`;
}

export interface PeoplePageInput {
  ctx: SignedInCtx;
  search: { q: string; disabled: boolean; admins: boolean };
  page: number;
  people: AdminPerson[];
  hasNext: boolean;
  error?: FormError | undefined;
}

export function peoplePage(input: PeoplePageInput): string {
  const { ctx, search } = input;
  const keep = { q: search.q, disabled: search.disabled ? '1' : undefined, admins: search.admins ? '1' : undefined };
  const list =
    input.people.length === 0
      ? html`<p>${search.q !== '' || search.disabled || search.admins ? 'Nobody matches.' : 'Nobody has signed up yet.'}</p>`
      : html`<ul class="plain">${input.people.map(
          (p) => html`<li data-person="${p.id}">${avatar(p.name, p.avatarUrl)} <a href="/admin/people/${p.id}"><strong>${p.name}</strong></a> <span class="muted">@${p.username}</span> ${personBadges(p)}<br>
<span class="small muted">${p.email ?? 'no e-mail'} · signed up ${when(p.createdAt)}${p.signupAddress !== null ? html` from ${p.signupAddress}` : ''}</span></li>`,
        )}</ul>`;
  const pager =
    input.page > 1 || input.hasNext
      ? html`<p class="actions">${input.page > 1 ? html`<a href="/admin/people${query({ ...keep, page: input.page > 2 ? String(input.page - 1) : undefined })}" rel="prev">← Newer</a>` : ''}${input.hasNext ? html` <a href="/admin/people${query({ ...keep, page: String(input.page + 1) })}" rel="next">Older →</a>` : ''}</p>`
      : '';
  return adminPage(
    ctx,
    'people',
    'People · Admin',
    html`<h1>People</h1>
<div class="card">
${formError(input.error, 'search')}
<form method="get" action="/admin/people" role="search">
<label for="q">Search</label>
<input id="q" name="q" type="search" value="${search.q}" maxlength="256" aria-describedby="q-hint">
<p class="hint" id="q-hint">Part of a name, username, e-mail address or sign-up address. Newest first.</p>
<label class="check"><input type="checkbox" name="disabled" value="1"${search.disabled ? html` checked` : ''}> Disabled only</label>
<label class="check"><input type="checkbox" name="admins" value="1"${search.admins ? html` checked` : ''}> Administrators only</label>
<div class="actions"><button type="submit">Search</button></div>
</form>
</div>
<div class="card">${list}${pager}</div>`,
  );
}

export function personPage(ctx: SignedInCtx, summary: AdminPersonView, done: string | undefined): string {
  const { person: p } = summary;
  const base = `/admin/people/${p.id}`;
  const status =
    p.disabledAt !== null
      ? html`<p><strong>Disabled</strong> since ${when(p.disabledAt)}${p.disabledReason !== null ? html` · reason: ${p.disabledReason}` : ''}</p>`
      : html`<p>Active${p.admin ? ' · administrator of this instance' : ''}</p>`;
  const servers =
    summary.servers.length === 0
      ? html`<p>No servers.</p>`
      : html`<ul class="plain">${summary.servers.map((s) => html`<li><a href="/admin/servers/${s.id}">${s.name}</a>${s.ownerId === p.id ? html` <span class="pill">owner</span>` : ''}</li>`)}</ul>`;
  const apps =
    summary.apps.length === 0
      ? html`<p>No apps.</p>`
      : html`<ul class="plain">${summary.apps.map((a) => html`<li><a href="/admin/apps/${a.id}">${a.name}</a>${a.botUserId !== null ? html` <span class="pill">bot</span>` : ''}${a.disabledAt !== null ? html` <span class="pill">disabled</span>` : ''}</li>`)}</ul>`;
  const sessions =
    summary.sessions.length === 0
      ? html`<p>Not signed in anywhere.</p>`
      : html`<ul class="plain">${summary.sessions.map((s) => html`<li>${s.device}<br><span class="small muted">signed in ${when(s.signedInAt)} · last used ${when(s.lastUsedAt)}${s.address !== null ? html` · from ${s.address}` : ''}</span></li>`)}</ul>`;
  const events =
    summary.recentSecurityEvents.length === 0
      ? html`<p>No security events recorded.</p>`
      : html`<ol class="plain audit-log">${summary.recentSecurityEvents.map((row) => html`<li>${securityWords(row, { apps: NO_NAMES })} <span class="muted small">· ${when(row.createdAt)}${row.address !== null ? html` · from ${row.address}` : ''}</span></li>`)}</ol>`;
  const actions = html`<ul class="plain">
${p.disabledAt === null ? html`<li><a href="${base}/disable">Disable…</a> <span class="muted small">signs them out, revokes their grants, stops their bots</span></li>` : html`<li><form class="inline" method="post" action="${base}/enable">${csrfField(ctx.csrfToken)}<button type="submit">Enable</button></form> <span class="muted small">the account works again; revoked grants stay revoked</span></li>`}
<li><a href="${base}/end-sessions">End every session…</a></li>
<li><a href="${base}/reset-password">Make a password reset link…</a></li>
${summary.secondFactor ? html`<li><a href="${base}/reset-second-factor">Remove their second factor…</a></li>` : ''}
<li><a href="${base}/delete">Delete account…</a></li>
</ul>`;
  return adminPage(
    ctx,
    'people',
    `${p.name} · Admin`,
    html`<p class="small"><a href="/admin/people">← People</a></p>
<h1>${avatar(p.name, p.avatarUrl)} ${p.name} <span class="muted">@${p.username}</span> ${personBadges(p)}</h1>
${notice(done)}
<div class="card">
${status}
<p>E-mail: ${p.email ?? 'none'}${p.email !== null ? (p.emailVerified ? ' (verified)' : ' (not verified)') : ''}</p>
<p>Signed up ${when(p.createdAt)}${p.signupAddress !== null ? html` from ${p.signupAddress}` : ''} · id <code>${p.id}</code></p>
<p>Second factor: ${summary.secondFactor ? 'on' : 'off'} · ${count(summary.grantsInForce, 'app authorization', 'app authorizations')} in force</p>
</div>
<div class="card"><h2>Actions</h2>${actions}</div>
<div class="card"><h2>Servers</h2>${servers}</div>
<div class="card"><h2>Apps</h2>${apps}</div>
<div class="card"><h2>Sessions</h2>${sessions}</div>
<div class="card"><h2>Recent security events</h2>${events}</div>`,
  );
}

/** The one-time password reset link, shown once to the administrator to hand over (as `people reset-password`). */
export function resetLinkPage(ctx: SignedInCtx, person: { id: string; username: string }, resetUrl: string, expiresAt: number): string {
  return adminPage(
    ctx,
    'people',
    'Password reset link · Admin',
    html`<p class="small"><a href="/admin/people/${person.id}">← @${person.username}</a></p>
<div class="card"><h1>Password reset link for @${person.username}</h1>
<p>Give this link to @${person.username} yourself. It works once, until ${when(expiresAt)}, and is not shown again.</p>
<p><code class="secret" data-reset-url>${resetUrl}</code></p>
<p><a href="/admin/people/${person.id}">Back to @${person.username}</a></p></div>`,
  );
}

// Confirmations -------------------------------------------------------------------------------

export interface AdminConfirmation {
  section: AdminSection;
  question: string;
  /** What the action affects, counted. */
  effects: string[];
  /** What stays, or anything else to know. */
  note?: string;
  action: string;
  button: string;
  cancel: string;
  /** A field the action takes (a reason, the new owner). */
  field?: { name: string; label: string; hint: string; value: string; required: boolean; autocomplete: string } | undefined;
  error?: string | undefined;
}

/** "Disable @alice?": the counts, the optional field, one danger button and Cancel (web/confirm.page.ts's shape). */
export function adminConfirmPage(ctx: SignedInCtx, c: AdminConfirmation): string {
  const f = c.field;
  return adminPage(
    ctx,
    c.section,
    `${c.question} · Admin`,
    html`<div class="card confirm">
<h1>${c.question}</h1>
${c.error !== undefined ? html`<div class="error" role="alert" tabindex="-1" data-error-summary>${c.error}</div>` : ''}
${c.effects.length > 0 ? html`<p>This:</p><ul>${c.effects.map((e) => html`<li>${e}</li>`)}</ul>` : ''}
${c.note !== undefined ? html`<p>${c.note}</p>` : ''}
<form method="post" action="${c.action}">
${csrfField(ctx.csrfToken)}
${f ? html`<label for="${f.name}">${f.label}</label>
<input id="${f.name}" name="${f.name}" type="text" value="${f.value}" autocomplete="${f.autocomplete}" maxlength="512" aria-describedby="${f.name}-hint"${f.required ? html` required` : ''}${c.error !== undefined ? html` aria-invalid="true"` : ''}>
<p class="hint" id="${f.name}-hint">${f.hint}</p>` : ''}
<div class="actions"><button type="submit" class="danger">${c.button}</button><a class="button secondary" href="${c.cancel}">Cancel</a></div>
</form>
</div>`,
  );
}

// Apps ----------------------------------------------------------------------------------------

export interface AppsPageInput {
  ctx: SignedInCtx;
  owner: string;
  disabled: boolean;
  apps: AdminApp[];
  next: string | undefined;
  after: string | undefined;
  error?: FormError | undefined;
}

/** Issue #41 §3: an app that registered itself (RFC 7591) was reviewed by nobody; the operator sees so wherever it is listed. */
function registeredPill(a: AdminApp['application']): SafeHtml | string {
  return isRegisteredApplication(a) ? html`<span class="pill">Registered automatically, not reviewed</span>` : '';
}

function ownerLink(owner: { id: string; username: string } | undefined): SafeHtml {
  return owner ? html`<a href="/admin/people/${owner.id}">@${owner.username}</a>` : html`an unknown owner`;
}

export function appsPage(input: AppsPageInput): string {
  const { ctx } = input;
  const keep = { owner: input.owner, disabled: input.disabled ? '1' : undefined };
  const list =
    input.apps.length === 0
      ? html`<p>No apps${input.owner !== '' || input.disabled ? ' match' : ' yet'}.</p>`
      : html`<ul class="plain">${input.apps.map(
          ({ application: a, owner }) => html`<li data-app="${a.id}"><a href="/admin/apps/${a.id}"><strong>${a.name}</strong></a> ${a.botUserId !== null ? html`<span class="pill">bot</span>` : ''}${a.disabledAt !== null ? html`<span class="pill">disabled</span>` : ''}${registeredPill(a)}<br>
<span class="small muted">owned by ${ownerLink(owner)} · id <code>${a.id}</code></span></li>`,
        )}</ul>`;
  return adminPage(
    ctx,
    'apps',
    'Apps · Admin',
    html`<h1>Apps</h1>
<div class="card">
${formError(input.error, 'filter')}
<form method="get" action="/admin/apps">
<label for="owner">Owner</label>
<input id="owner" name="owner" type="text" value="${input.owner}" autocomplete="off" aria-describedby="owner-hint">
<p class="hint" id="owner-hint">A username, to list only that person's apps. Oldest first.</p>
<label class="check"><input type="checkbox" name="disabled" value="1"${input.disabled ? html` checked` : ''}> Disabled only</label>
<div class="actions"><button type="submit">Show</button></div>
</form>
</div>
<div class="card">${list}${
      input.next !== undefined || input.after !== undefined
        ? html`<p class="actions">${input.after !== undefined ? html`<a href="/admin/apps${query(keep)}">First page</a>` : ''}${input.next !== undefined ? html` <a href="/admin/apps${query({ ...keep, after: input.next })}" rel="next">Next →</a>` : ''}</p>`
        : ''
    }</div>`,
  );
}

/** What disabling or deleting an app affects, in words. */
export function appEffects(impact: AdminAppImpact): string[] {
  return [
    `ends ${count(impact.grants, 'authorization', 'authorizations')} in force (of ${count(impact.grantPeople, 'person', 'people')}) and every token they hold`,
    `affects its bot in ${count(impact.serverInstalls, 'server', 'servers')} and ${count(impact.userInstalls, 'person', 'people')} who added its commands`,
    `concerns ${count(impact.incomingWebhooks.length, 'webhook', 'webhooks')} created through its webhook.incoming authorizations`,
  ];
}

export function appPage(ctx: SignedInCtx, shown: AdminApp & { impact: AdminAppImpact }, done: string | undefined): string {
  const a = shown.application;
  const base = `/admin/apps/${a.id}`;
  return adminPage(
    ctx,
    'apps',
    `${a.name} · Admin`,
    html`<p class="small"><a href="/admin/apps">← Apps</a></p>
<h1>${a.name} ${a.botUserId !== null ? html`<span class="pill">bot</span>` : ''}${a.disabledAt !== null ? html`<span class="pill">disabled</span>` : ''}${registeredPill(a)}</h1>
${notice(done)}
<div class="card">
<p>Owned by ${ownerLink(shown.owner)} · id <code>${a.id}</code></p>
${a.disabledAt !== null ? html`<p><strong>Disabled</strong> since ${when(a.disabledAt)}${a.disabledReason !== null ? html` · reason: ${a.disabledReason}` : ''}</p>` : ''}
<p>${count(shown.impact.grants, 'authorization', 'authorizations')} in force, of ${count(shown.impact.grantPeople, 'person', 'people')}; its bot is in ${count(shown.impact.serverInstalls, 'server', 'servers')}; ${count(shown.impact.userInstalls, 'person', 'people')} added its commands; ${count(shown.impact.incomingWebhooks.length, 'webhook', 'webhooks')} came from its webhook.incoming authorizations.</p>
</div>
<div class="card"><h2>Actions</h2><ul class="plain">
${a.disabledAt === null ? html`<li><a href="${base}/disable">Disable…</a> <span class="muted small">its tokens and bot token stop working</span></li>` : html`<li><form class="inline" method="post" action="${base}/enable">${csrfField(ctx.csrfToken)}<button type="submit">Enable</button></form> <span class="muted small">its bot works again; revoked authorizations stay revoked</span></li>`}
<li><a href="${base}/delete">Delete app…</a></li>
</ul></div>`,
  );
}

// Servers -------------------------------------------------------------------------------------

export interface ServersPageInput {
  ctx: SignedInCtx;
  owner: string;
  servers: AdminServer[];
  next: string | undefined;
  after: string | undefined;
  error?: FormError | undefined;
}

export function serversPage(input: ServersPageInput): string {
  const { ctx } = input;
  const list =
    input.servers.length === 0
      ? html`<p>No servers${input.owner !== '' ? ' match' : ' yet'}.</p>`
      : html`<ul class="plain">${input.servers.map(
          ({ server: s, owner }) => html`<li data-server="${s.id}"><a href="/admin/servers/${s.id}"><strong>${s.name}</strong></a><br>
<span class="small muted">owned by ${ownerLink(owner)} · created ${when(s.createdAt)}</span></li>`,
        )}</ul>`;
  return adminPage(
    ctx,
    'servers',
    'Servers · Admin',
    html`<h1>Servers</h1>
<div class="card">
${formError(input.error, 'filter')}
<form method="get" action="/admin/servers">
<label for="owner">Owner</label>
<input id="owner" name="owner" type="text" value="${input.owner}" autocomplete="off" aria-describedby="owner-hint">
<p class="hint" id="owner-hint">A username, to list only the servers that person owns. Oldest first.</p>
<div class="actions"><button type="submit">Show</button></div>
</form>
</div>
<div class="card">${list}${
      input.next !== undefined || input.after !== undefined
        ? html`<p class="actions">${input.after !== undefined ? html`<a href="/admin/servers${query({ owner: input.owner })}">First page</a>` : ''}${input.next !== undefined ? html` <a href="/admin/servers${query({ owner: input.owner, after: input.next })}" rel="next">Next →</a>` : ''}</p>`
        : ''
    }</div>`,
  );
}

/** What deleting a server removes, in words. */
export function serverEffects(c: ServerContents): string[] {
  return [
    `deletes ${count(c.channels, 'channel', 'channels')} and ${count(c.messages, 'message', 'messages')}`,
    `deletes ${count(c.webhooks, 'webhook', 'webhooks')} and ${count(c.roles, 'role', 'roles')}`,
    `removes ${count(c.members, 'member', 'members')} besides the owner (${count(c.botInstalls, 'installed bot', 'installed bots')})`,
    `cancels ${count(c.pendingInvitations, 'pending invitation', 'pending invitations')} and ${count(c.inviteLinks, 'invite link', 'invite links')}`,
  ];
}

export function serverPage(ctx: SignedInCtx, shown: AdminServerView, done: string | undefined): string {
  const s = shown.server;
  const c = shown.contents;
  return adminPage(
    ctx,
    'servers',
    `${s.name} · Admin`,
    html`<p class="small"><a href="/admin/servers">← Servers</a></p>
<h1>${s.name}</h1>
${notice(done)}
<div class="card">
<p>Owned by ${ownerLink(shown.owner)} · created ${when(s.createdAt)} · id <code>${s.id}</code></p>
<p>${count(c.members + 1, 'member', 'members')} · ${count(c.channels, 'channel', 'channels')} · ${count(c.messages, 'message', 'messages')} · ${count(c.webhooks, 'webhook', 'webhooks')} · ${count(c.botInstalls, 'bot', 'bots')}</p>
</div>
<div class="card"><h2>Actions</h2><ul class="plain">
<li><a href="/admin/servers/${s.id}/transfer">Transfer ownership…</a> <span class="muted small">to another member</span></li>
<li><a href="/admin/servers/${s.id}/delete">Delete server…</a></li>
</ul></div>`,
  );
}

import { notice, page, settingsLayout, type PageCtx, type SignedInCtx } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { layout } from '../../web/layout.js';
import { settingsNav } from '../directory/server-settings.page.js';
import type { SettingsAbilities } from '../directory/server-settings.js';
import type { AuditRow } from './audit.js';
import { SERVER_ACTIONS, actionWords, actorWords, securityWords, type AuditNames } from './audit-words.js';

/**
 * Server settings → Audit log and Settings → Security (issue #37 §5; docs/audit-log.md). A
 * server's log never shows addresses or request ids: they are the operator's. A person's own
 * security page shows the address of each of their sign-ins: it is theirs.
 */

/** "2026-11-28 00:12 UTC": to the minute, in UTC, the same for every reader. */
function when(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, value);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export interface ServerAuditPageInput {
  ctx: PageCtx;
  server: { id: string; name: string };
  can: SettingsAbilities;
  entries: AuditRow[];
  names: AuditNames;
  members: Array<{ id: string; username: string; name: string }>;
  filter: { person: string; action: string; before: string | undefined };
  /** The `before` cursor of the next (older) page. */
  next: string | undefined;
  /** Why the filter found nothing to apply (an unknown person). */
  problem?: string;
}

export const AUDIT_PAGE_SIZE = 50;

export function serverAuditLogPage(input: ServerAuditPageInput): string {
  const { server, filter } = input;
  const base = `/servers/${server.id}/settings/audit-log`;
  const list =
    input.entries.length === 0
      ? html`<p class="muted">${filter.before !== undefined ? 'No older entries.' : filter.person !== '' || filter.action !== '' ? 'No entries match these filters.' : 'Nothing has been recorded in this server yet.'}</p>`
      : html`<ol class="plain audit-log">${input.entries.map(
          (row) => html`<li class="audit-entry" data-entry="${row.id}"><strong>${actorWords(row, input.names)}</strong> ${actionWords(row, input.names)}
<span class="muted small">· ${when(row.createdAt)}</span>${row.reason !== null && row.action !== 'member.removed' ? html`<br><span class="small">Reason: ${row.reason}</span>` : ''}</li>`,
        )}</ol>`;
  const pager =
    filter.before === undefined && input.next === undefined
      ? ''
      : html`<p class="actions">${filter.before !== undefined ? html`<a href="${base}${query({ person: filter.person, action: filter.action })}">Newest entries</a>` : ''}${
          input.next !== undefined ? html` <a href="${base}${query({ person: filter.person, action: filter.action, before: input.next })}" rel="next">Older entries →</a>` : ''
        }</p>`;
  const body = html`<div class="layout">
${settingsNav(server, input.can, 'audit-log')}
<div>
<div class="card">
<h1>Audit log</h1>
<p class="muted">What was changed in this server, by whom and when, newest first. Entries are kept for a limited time set by the operator.</p>
<form method="get" action="${base}" class="audit-filters">
<label for="audit-person">Person</label>
<input id="audit-person" name="person" type="text" list="audit-members" maxlength="64" value="${filter.person}" placeholder="Anyone" aria-describedby="audit-person-hint">
<p class="hint" id="audit-person-hint">A member's username (or any username: former members too).</p>
<datalist id="audit-members">${input.members.map((m) => html`<option value="${m.username}">${m.name}</option>`)}</datalist>
<label for="audit-action">Action</label>
<select id="audit-action" name="action">
<option value=""${filter.action === '' ? html` selected` : ''}>All actions</option>
${SERVER_ACTIONS.map((a) => html`<option value="${a.action}"${a.action === filter.action ? html` selected` : ''}>${a.label}</option>`)}
</select>
<div class="actions"><button type="submit">Filter</button>${filter.person !== '' || filter.action !== '' ? html` <a href="${base}">Clear</a>` : ''}</div>
</form>
${input.problem !== undefined ? html`<div class="error" role="alert">${input.problem}</div>` : ''}
</div>
<div class="card">
${list}
${pager}
</div>
</div>
</div>`;
  return page(input.ctx, `Audit log · ${server.name}`, body);
}

export interface SecurityPageInput {
  ctx: SignedInCtx;
  entries: AuditRow[];
  apps: ReadonlyMap<string, string>;
  before: string | undefined;
  next: string | undefined;
  notice?: string;
  /** The Two-factor authentication section (mfa/mfa.page.ts, issue #38 §4). */
  twoFactor?: SafeHtml;
  /** The Passkeys section (accounts/passkeys.page.ts, issue #38 §4). */
  passkeys?: SafeHtml;
}

/** Settings → Security: the person's own sign-ins, failed sign-ins, apps authorized and removed, password changes and ended sessions. */
export function securityPage(input: SecurityPageInput): string {
  const { ctx } = input;
  const list =
    input.entries.length === 0
      ? html`<div class="card"><p>${input.before !== undefined ? 'No older activity.' : 'No account activity recorded yet.'}</p></div>`
      : html`<div class="card"><ol class="plain audit-log">${input.entries.map(
          (row) => html`<li class="audit-entry" data-entry="${row.id}">${securityWords(row, { apps: input.apps })}
<span class="muted small">· ${when(row.createdAt)}${row.address !== null ? html` · from ${row.address}` : ''}</span></li>`,
        )}</ol>
${input.before !== undefined || input.next !== undefined ? html`<p class="actions">${input.before !== undefined ? html`<a href="/settings/security">Newest activity</a>` : ''}${input.next !== undefined ? html` <a href="/settings/security${query({ before: input.next })}" rel="next">Older activity →</a>` : ''}</p>` : ''}</div>`;
  const content = html`<h1>Security</h1>
${notice(input.notice)}
${input.twoFactor ?? ''}
${input.passkeys ?? ''}
<h2>Recent activity</h2>
<p class="muted">Your account's recent activity, newest first: sign-ins and the address they came from, failed sign-ins, apps you authorized or removed, password changes and sessions ended. If you do not recognise something, change your password.</p>
${list}`;
  return layout({ title: 'Security', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body: settingsLayout('security', content) });
}

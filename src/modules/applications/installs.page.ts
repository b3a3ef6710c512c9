import { html, type SafeHtml } from '../../web/html.js';
import type { InstalledApp } from './installs.js';

/** What the installed-apps section of Server settings → Integrations shows. */
export interface InstalledAppsView {
  serverId: string;
  apps: InstalledApp[];
  /** Manage server: the viewer may remove bots (the route checks it again). */
  canManage: boolean;
}

/** `?done=` keys the remove route redirects with, and their confirmations. */
export const INSTALLED_APPS_NOTICES: Record<string, string> = {
  'app-removed': 'App removed. Its bot left the server and its role was deleted; webhooks it created stay.',
};

/** The integrations page's address; the remove route redirects back here. */
export function integrationsPath(serverId: string): string {
  return `/servers/${serverId}/settings/integrations`;
}

/** The app's initial, drawn locally: its icon URL is on a host the app controls (docs/consent.md). */
function appInitial(name: string): SafeHtml {
  const initial = Array.from(name.trim())[0]?.toUpperCase() ?? '?';
  return html`<span class="avatar app-tile" aria-hidden="true">${initial}</span>`;
}

function day(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)}</time>`;
}

function installedApp(app: InstalledApp, view: InstalledAppsView): SafeHtml {
  const installer = app.installer.username ? html`@${app.installer.username}` : html`a deleted account`;
  const permissions = app.permissions.labels.length
    ? html`<p>${app.permissions.labels.map((l) => html`<span class="pill">${l}</span> `)}</p>`
    : html`<p class="muted small">No permissions: the bot can only see what every member of the server sees.</p>`;
  const commands = app.commandsEnabled
    ? app.commands.length
      ? html`<ul class="plain small">${app.commands.map((c) => html`<li><code>/${c.name}</code> <span class="muted">${c.description}</span></li>`)}</ul>`
      : html`<p class="muted small">Commands are enabled here, but the app has not registered any yet.</p>`
    : html`<p class="muted small">Commands were not added to this server.</p>`;
  return html`<li class="installed-app" id="app-${app.application.id}">
<div class="consent-head">
${appInitial(app.application.name)}
<div>
<h3>${app.application.name} <span class="badge">BOT</span></h3>
<p class="muted small">Added by ${installer} on ${day(app.installedAt)}${app.updatedAt !== app.installedAt ? html` · updated ${day(app.updatedAt)}` : ''}</p>
</div>
</div>
<h4>Permissions</h4>
${permissions}
<h4>Commands</h4>
${commands}
${
  view.canManage
    ? html`<p class="actions"><a class="button danger" href="${integrationsPath(view.serverId)}/apps/${app.application.id}/remove">Remove ${app.application.name}…</a></p>
<p class="hint">The bot leaves the server and its role is deleted. Webhooks it created stay until you delete them.</p>`
    : ''
}
</li>`;
}

/**
 * The installed-apps section of Server settings → Integrations (issue #4): every app whose bot
 * was added to the server, with the permissions its role holds, its commands, who added it and
 * when, and — for people with Manage server — Remove.
 */
export function renderInstalledApps(view: InstalledAppsView): SafeHtml {
  return html`<section class="card" aria-labelledby="installed-apps">
<h2 id="installed-apps">Apps</h2>
${
  view.apps.length
    ? html`<ul class="plain installed-apps">${view.apps.map((a) => installedApp(a, view))}</ul>`
    : html`<p class="muted">No apps have been added to this server. An app's install link lets someone with Manage server add its bot here.</p>`
}
</section>`;
}

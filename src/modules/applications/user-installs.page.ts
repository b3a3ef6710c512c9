import { html } from '../../web/html.js';
import { layout } from '../../web/layout.js';
import { settingsLayout, type PageCtx } from '../../web/components.js';

/** One user-installed app as the page lists it. */
export interface InstalledAppView {
  applicationId: string;
  name: string;
  botUserId: string | null;
  installedAt: number;
}

export interface InstalledAppsPageInput {
  ctx: PageCtx;
  apps: InstalledAppView[];
  /** Set after a removal, to confirm it. */
  removed: boolean;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The app's initial in a tile; never its icon URL, which would tell the app's host who looks (docs/consent.md). */
function initial(name: string): string {
  return Array.from(name.trim())[0]?.toUpperCase() ?? '?';
}

/**
 * Settings → Installed apps (SPEC §5.2, docs/user-installs.md): apps the person installed for
 * themselves, and Remove, after which the app's bot can no longer message them directly unless
 * it is in a server they joined by their own act (docs/user-installs.md).
 */
export function installedAppsPage(input: InstalledAppsPageInput): string {
  const { ctx, apps } = input;
  const list = apps.length
    ? html`${apps.map(
        (a) => html`<div class="card installed-app" id="app-${a.applicationId}">
<div class="consent-head">
<span class="avatar app-tile" aria-hidden="true">${initial(a.name)}</span>
<div>
<h2>${a.name}</h2>
<p class="muted small">Installed <time datetime="${new Date(a.installedAt).toISOString()}">${isoDate(a.installedAt)}</time></p>
</div>
</div>
<p class="small">${a.botUserId ? 'Its bot may send you direct messages.' : 'It has no bot yet; if it gets one, that bot may send you direct messages.'}</p>
<p class="actions"><a class="button danger" href="/settings/apps/${a.applicationId}/remove">Remove ${a.name}…</a></p>
</div>`,
      )}`
    : html`<div class="card"><p>You have not installed any apps.</p><p class="hint">When you add an app to your account (an authorization link with the applications.commands scope and no server), it appears here.</p></div>`;
  const content = html`<h1>Installed apps</h1>
${input.removed ? html`<div class="notice" role="status">App removed. Its bot can no longer send you direct messages, unless it is in a server you joined yourself (created, joined by an invite link, or accepted an invitation to). Messages it already sent stay in <a href="/messages">Messages</a>.</div>` : ''}
<p class="muted">Apps you installed for yourself rather than in a server. Their bots may send you direct messages. Removing an app stops that at once.</p>
${list}`;
  return layout({ title: 'Installed apps', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body: settingsLayout('apps', content) });
}

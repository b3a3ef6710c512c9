import { confirmationPage } from '../../web/confirm.page.js';
import { html } from '../../web/html.js';
import { layout, type Viewer } from '../../web/layout.js';
import { settingsLayout, type PageCtx } from '../../web/components.js';
import { appTile } from './authorize.page.js';

/** One entry of Settings → Authorized apps. */
export interface AuthorizedApp {
  applicationId: string;
  name: string;
  description: string;
  ownerUsername: string | null;
  scopes: { name: string; description: string }[];
  authorizedAt: number;
}

export interface AuthorizedAppsPageInput {
  ctx: PageCtx & { viewer: Viewer };
  apps: AuthorizedApp[];
  /** Set after a deauthorization, to confirm it. */
  removed: boolean;
}

function formatDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Settings → Authorized apps (issue #3, OAUTH-CHECKLIST A18): what each app may do, and Deauthorize. */
export function authorizedAppsPage(input: AuthorizedAppsPageInput): string {
  const { ctx, apps } = input;
  const list = apps.length
    ? html`${apps.map(
        (a) => html`<div class="card authorized-app">
<div class="consent-head">
${appTile(a.name, 'small')}
<div>
<h2>${a.name}</h2>
<p class="muted small">${a.ownerUsername ? html`Made by @${a.ownerUsername} · ` : ''}Authorized <time datetime="${new Date(a.authorizedAt).toISOString()}">${formatDate(a.authorizedAt)}</time></p>
</div>
</div>
<p class="small">It can:</p>
<ul class="plain scope-list">${a.scopes.map((s) => html`<li><span class="scope-mark" aria-hidden="true">✓</span> ${s.description}</li>`)}</ul>
<p class="actions"><a class="button danger" href="/settings/authorized-apps/${a.applicationId}/deauthorize">Deauthorize ${a.name}…</a></p>
</div>`,
      )}`
    : html`<div class="card"><p>You have not authorized any apps.</p><p class="hint">When you allow an app to access your account, it appears here, and you can remove its access at any time.</p></div>`;
  const content = html`<h1>Authorized apps</h1>
${input.removed ? html`<div class="notice" role="status">Access removed. The app can no longer use your account, and will have to ask again.</div>` : ''}
<p class="muted">Apps you allowed to access your account. Deauthorizing an app ends its access at once: every token it holds stops working.</p>
${list}`;
  return layout({ title: 'Authorized apps', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body: settingsLayout('authorized-apps', content) });
}

/** "Deauthorize …?" (issue #24): every token it holds stops working; it must ask again. */
export function confirmDeauthorizePage(ctx: PageCtx, app: AuthorizedApp): string {
  return confirmationPage(ctx, {
    question: `Deauthorize ${app.name}?`,
    consequence: html`It loses access to your account at once: every token it holds stops working, and it can no longer ${app.scopes.length ? app.scopes.map((s) => s.description.replace(/\.$/, '').replace(/^./, (c) => c.toLowerCase())).join('; ') : 'do anything for you'}. It will have to ask again.`,
    action: `/settings/authorized-apps/${app.applicationId}/deauthorize`,
    button: `Deauthorize ${app.name}`,
    cancel: '/settings/authorized-apps',
  });
}

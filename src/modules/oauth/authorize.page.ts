import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import { settingsLayout, type PageCtx } from '../accounts/accounts.page.js';
import type { AuthorizedApp, ConsentView } from './authorize.js';

/**
 * The app's "icon" on pages about granting access is its initial, drawn locally: the registered
 * icon URL points at a host the app controls, and loading it would tell that host who is looking
 * at the consent screen and when (OAUTH-CHECKLIST A17: no third-party resources). docs/consent.md.
 */
function appTile(name: string, size: 'large' | 'small'): SafeHtml {
  const initial = Array.from(name.trim())[0]?.toUpperCase() ?? '?';
  return html`<span class="avatar app-tile${size === 'large' ? ' large' : ''}" aria-hidden="true">${initial}</span>`;
}

function personTile(viewer: Viewer): SafeHtml {
  const initial = Array.from(viewer.name.trim() || viewer.username)[0]?.toUpperCase() ?? '?';
  return html`<span class="avatar" aria-hidden="true">${initial}</span>`;
}

/** Scheme, host and port of the redirect URI: where the person lands, shown in plain sight. */
function destination(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.host ? `${url.protocol}//${url.host}` : `${url.protocol}${url.pathname}`;
  } catch {
    return redirectUri;
  }
}

export interface ConsentPageInput {
  ctx: PageCtx & { viewer: Viewer };
  view: ConsentView;
}

/**
 * The consent screen (issue #3, OAUTH-CHECKLIST A18): the app and who made it, who is signed in
 * (with a way to switch), each scope in plain words, where the answer goes, and how to take it
 * back. Authorize and Cancel post the request again, with the CSRF token.
 */
export function consentPage(input: ConsentPageInput): string {
  const { ctx, view } = input;
  const app = view.application;
  const viewer = ctx.viewer;
  const switchUrl = `/login?next=${encodeURIComponent(view.authorizeUrl)}`;
  const body = html`<div class="card consent">
<div class="consent-head">
${appTile(app.name, 'large')}
<div>
<h1>${app.name} wants to access your ${ctx.serviceName} account</h1>
<p class="muted small">${app.ownerUsername ? html`Made by <strong>@${app.ownerUsername}</strong>` : 'Made by a deleted account'}</p>
</div>
</div>
${app.description ? html`<p class="consent-description">${app.description}</p>` : ''}
<div class="consent-who">
${personTile(viewer)}
<p class="small">Signed in as <strong>${viewer.name}</strong> (@${viewer.username})<br><a href="${switchUrl}">Not you? Switch account</a></p>
</div>
<h2>This will allow ${app.name} to:</h2>
<ul class="plain scope-list">
${view.scopes.map((s) => html`<li><span class="scope-mark" aria-hidden="true">✓</span> ${s.description}</li>`)}
</ul>
<p class="hint">${app.name} will be able to do this until you remove its access in <a href="/settings/authorized-apps">Settings → Authorized apps</a>. It cannot see your password.</p>
<p class="hint">After you choose, you will be sent to <strong class="mono">${destination(view.redirectUri)}</strong>.</p>
<form method="post" action="/app/oauth2/authorize">
${csrfField(ctx.csrfToken)}
${view.fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<div class="actions consent-actions">
<button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
<button type="submit" name="decision" value="authorize">Authorize</button>
</div>
</form>
</div>`;
  return layout({ title: `Authorize ${app.name}`, serviceName: ctx.serviceName, viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
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
<form method="post" action="/settings/authorized-apps/${a.applicationId}/deauthorize">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit" class="danger">Deauthorize ${a.name}</button></div>
</form>
</div>`,
      )}`
    : html`<div class="card"><p>You have not authorized any apps.</p><p class="hint">When you allow an app to access your account, it appears here, and you can remove its access at any time.</p></div>`;
  const content = html`<h1>Authorized apps</h1>
${input.removed ? html`<div class="notice" role="status">Access removed. The app can no longer use your account, and will have to ask again.</div>` : ''}
<p class="muted">Apps you allowed to access your account. Deauthorizing an app ends its access at once: every token it holds stops working.</p>
${list}`;
  return layout({ title: 'Authorized apps', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body: settingsLayout('authorized-apps', content) });
}

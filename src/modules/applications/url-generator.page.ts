import { Permission, type PermissionName } from '../../core/permissions.js';
import { html, type SafeHtml } from '../../web/html.js';
import { permissionList } from '../../web/permission-list.js';
import type { Application } from './applications.js';
import type { PageCtx } from '../../web/components.js';
import { appPath, copyField, page, withAppNav } from './portal.page.js';

/** Permissions in the order the picker lists them within their groups (Discord's bit order). */
const PICKER_PERMISSIONS = Object.keys(Permission) as PermissionName[];

/**
 * The URL generator's permission picker (issue #4): one checkbox per permission that does something
 * here (issue #24; bits of a loaded value beyond them are kept), and the resulting decimal string, which goes into the link as `permissions` with the bot scope.
 */
export function permissionPicker(selected: bigint): SafeHtml {
  return html`<fieldset class="card">
<legend>Bot permissions</legend>
<p class="hint">Used with the <code>bot</code> scope: what the bot asks for in the server it joins. The person installing it can grant only what they hold there, and never Administrator.</p>
${permissionList({ field: 'permission', idPrefix: 'perm', items: PICKER_PERMISSIONS.map((name) => ({ name, box: { checked: (selected & Permission[name]) === Permission[name], disabled: false } })), keep: selected })}
<label for="permissions-value">Permissions integer</label>
<input id="permissions-value" type="text" readonly data-select value="${selected.toString()}" class="mono" aria-describedby="permissions-value-hint">
<p class="hint" id="permissions-value-hint">The decimal string of the ticked permissions (Discord's bit positions), updated when you generate the URL.</p>
</fieldset>`;
}

export interface ScopeChoice {
  name: string;
  description: string;
}

export interface UrlGeneratorPageInput {
  ctx: PageCtx;
  app: Application;
  scopes: readonly ScopeChoice[];
  selectedScopes: readonly string[];
  redirectUri: string | undefined;
  state: string;
  /** The generated link, when the selection is complete and valid. */
  link?: string | undefined;
  problems: readonly string[];
  /** True when the person submitted the form (problems are then shown). */
  submitted: boolean;
  /** Room for the bot issue: the bot permissions picker, rendered after the scopes. */
  extraFields?: SafeHtml;
  /** Offer "no redirect URI" for install links (bot, applications.commands) that need none. */
  installWithoutRedirect?: boolean;
}

/** /developers/applications/:id/oauth2/url-generator — a GET form that builds an authorization link. */
export function urlGeneratorPage(input: UrlGeneratorPageInput): string {
  const { ctx, app } = input;
  const selected = new Set(input.selectedScopes);
  const noRedirects = app.redirectUris.length === 0;
  const content = html`<div class="card">
<h2>OAuth2 URL generator</h2>
<p class="muted">Pick what your app asks for; copy the link and send people to it to start the authorization code flow.</p>
${
  noRedirects
    ? input.installWithoutRedirect
      ? html`<p class="hint">This application has no redirect URI yet: only a plain install link (bot, applications.commands) can be made. <a href="${appPath(app)}#oauth2">Add one</a> for the other scopes.</p>`
      : html`<p class="error" role="alert">This application has no redirect URI yet. <a href="${appPath(app)}#oauth2">Add one</a> first.</p>`
    : html``
}
<form method="get" action="${appPath(app, '/oauth2/url-generator')}#result">
<fieldset class="card">
<legend>Scopes</legend>
<div class="grid2">
${input.scopes.map(
  (scope) =>
    html`<label class="check"><input type="checkbox" name="scope" value="${scope.name}"${selected.has(scope.name) ? html` checked` : ''}><span><code>${scope.name}</code><br><span class="hint">${scope.description}</span></span></label>`,
)}
</div>
</fieldset>
${input.extraFields ?? ''}
<label for="redirect_uri">Redirect URI</label>
<select id="redirect_uri" name="redirect_uri"${noRedirects && !input.installWithoutRedirect ? html` disabled` : ''}>
${
  input.installWithoutRedirect
    ? html`<option value=""${input.redirectUri === undefined ? html` selected` : ''}>None: a plain install (bot and applications.commands only)</option>`
    : app.redirectUris.length > 1 && input.redirectUri === undefined
      ? html`<option value="">Choose one…</option>`
      : ''
}
${app.redirectUris.map((uri) => html`<option value="${uri}"${uri === input.redirectUri ? html` selected` : ''}>${uri}</option>`)}
</select>
<label for="state">State <span class="muted small">(optional)</span></label>
<input id="state" name="state" type="text" maxlength="500" value="${input.state}" autocomplete="off" aria-describedby="state-hint">
<p class="hint" id="state-hint">Usually your app generates a fresh random state for every request and checks it on the way back; put one here only to try the link.</p>
<div class="actions"><button type="submit">Generate URL</button></div>
</form>
${result(input)}
</div>`;
  return page(ctx, `URL generator · ${app.name}`, html`<h1>${app.name}</h1>${withAppNav(app, 'url-generator', content)}`);
}

/**
 * What Generate URL gave: the link, or why there is none. Issue #36 §5: it is shown right below
 * the button, and the form's action ends in #result, so the page that answers opens scrolled to
 * it instead of at its top, a screen or more of scopes and permissions above it.
 */
function result(input: UrlGeneratorPageInput): SafeHtml {
  const { app } = input;
  const problems = input.submitted && input.problems.length > 0;
  if (!problems && !input.link) return html``;
  return html`<div class="generated" id="result" tabindex="-1">
${problems ? html`<div class="error" role="alert">${input.problems.map((p, i) => html`${i > 0 ? html`<br>` : ''}${p}`)}</div>` : ''}
${
  input.link
    ? html`<section aria-labelledby="generated-url-title">
<h2 id="generated-url-title">Generated URL</h2>
${copyField('generated-url', 'Authorization URL', input.link, undefined, 4)}
${
  app.confidential
    ? html`<p class="hint">Adding PKCE (code_challenge and code_challenge_method=S256) is recommended for confidential apps too.</p>`
    : html`<p class="notice">This is a public app: before sending people to this link, your app must append <code>&amp;code_challenge=…&amp;code_challenge_method=S256</code>, a fresh challenge for each request (BASE64URL(SHA256(code_verifier))), and send the <code>code_verifier</code> with the token request. Without it the request is refused.</p>`
}
</section>`
    : ''
}
</div>`;
}

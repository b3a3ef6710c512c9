import { LISTED_PERMISSIONS } from '../../core/permission-catalog.js';
import { Permission } from '../../core/permissions.js';
import { APP_JS_PATH } from '../../web/assets.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import { permissionList } from '../../web/permission-list.js';
import type { InstallConsent, RequestedPermission } from '../applications/installs.js';
import type { PageCtx } from '../../web/components.js';
import { appTile, consentHead, hiddenFields, signedInAs, whereTheAnswerGoes, type ConsentPageInput, type ConsentView, type InstalledView } from './authorize.page.js';

/**
 * The server picker (issue #4): its own GET form, so choosing another server reloads the screen
 * with that server's permissions, without JavaScript. Choosing changes nothing until the person
 * presses Continue (WCAG 3.2.2 On Input: an arrow key in the list must not leave the page). Only servers where the person holds Manage
 * server are offered; a locked link shows its server and no picker.
 */
function serverPicker(view: ConsentView, install: InstallConsent, serviceName: string): SafeHtml {
  const chosen = install.chosenServer;
  if (install.servers.length === 0) {
    return html`<div class="error" role="alert"><strong>You cannot add this bot to any server.</strong> Adding a bot needs the Manage server permission, and you do not have it in any of your servers on ${serviceName}. Ask a server's owner or an administrator to add it, or create a server of your own.</div>`;
  }
  if (install.lockedUnavailable) {
    return html`<div class="error" role="alert"><strong>This link is for a server you cannot add bots to.</strong> Adding a bot needs the Manage server permission there. Ask the server's owner or an administrator to use the link.</div>`;
  }
  if (install.locked && chosen) {
    return html`<p class="install-server">Add to server: <strong>${chosen.name}</strong></p>
<p class="hint">The link chose this server.</p>`;
  }
  return html`<form method="get" action="${view.subject.action}" class="server-picker">
${hiddenFields(view.fields)}
<label for="server_id">Add to server</label>
<div class="copyrow">
<select id="server_id" name="server_id" required>
${chosen ? '' : html`<option value="" selected disabled>Select a server</option>`}
${install.servers.map((s) => html`<option value="${s.id}"${s.id === chosen?.id ? html` selected` : ''}>${s.name}</option>`)}
</select>
<button type="submit" class="secondary">Continue</button>
</div>
<p class="hint">Only servers where you have the Manage server permission are listed.</p>
</form>`;
}

function notGrantableNote(p: RequestedPermission, serverName: string): SafeHtml | undefined {
  if (p.notGrantable === 'administrator') return html`<span class="hint">Never granted: a bot here is never an administrator.</span>`;
  if (p.notGrantable === 'not-held') return html`<span class="hint">You cannot give it: you do not have it in ${serverName}.</span>`;
  return undefined;
}

/**
 * The requested permissions (issue #4): each grantable one is a ticked box the person may
 * untick; the others are shown crossed out with the reason. Without a chosen server they are
 * listed without boxes.
 */
function permissionChoices(install: InstallConsent, appName: string): SafeHtml {
  const chosen = install.chosenServer;
  // Requested bits that do nothing here are not listed (issue #24); the grantable ones still go with the form, so what is granted is unchanged.
  const unlisted = install.permissions.every((p) => (Permission[p.name] & LISTED_PERMISSIONS) === 0n)
    ? html`<p class="small">None of them does anything on this platform yet.</p>`
    : '';
  if (install.permissions.length === 0) {
    return html`<h2>Permissions</h2><p class="small">${appName} asks for no permissions. Its bot can do what every member of the server can.</p>`;
  }
  if (!chosen) {
    return html`<h2>${appName} asks for these permissions</h2>
<div class="permission-list">${permissionList({ field: 'permission', idPrefix: 'perm', items: install.permissions.map((p) => ({ name: p.name, note: p.notGrantable === 'administrator' ? notGrantableNote(p, '') : undefined })) })}</div>${unlisted}
<p class="hint">Choose a server to see which of them you can give.</p>`;
  }
  return html`<fieldset class="permission-list">
<legend>Permissions for ${appName} in ${chosen.name}</legend>
${unlisted}${permissionList({
  field: 'permission',
  idPrefix: 'perm',
  items: install.permissions.map((p) => ({ name: p.name, box: { checked: p.notGrantable === undefined, disabled: p.notGrantable !== undefined }, struck: p.notGrantable !== undefined, note: notGrantableNote(p, chosen.name) })),
  keep: grantableBits(install.permissions),
})}
<p class="hint">Untick anything you do not want to give. The bot gets a role named ${appName} holding what stays ticked, on top of what every member has.</p>
</fieldset>`;
}

/** The requested bits the person can give, which the form sends unless unticked. */
function grantableBits(permissions: readonly RequestedPermission[]): bigint {
  return permissions.reduce((bits, p) => (p.notGrantable === undefined ? bits | Permission[p.name] : bits), 0n);
}

/**
 * The consent screen for an install (issue #4): for a bot, the server picker and the requested
 * permissions; for a user install, what the app will be able to do for the person. The other
 * scopes of the request are listed as on the plain consent screen.
 */
export function installConsentPage(input: ConsentPageInput, install: InstallConsent): string {
  const { ctx, view } = input;
  const app = view.application;
  const bot = install.kind === 'bot';
  const canAuthorize = !bot || (install.chosenServer !== undefined && !install.lockedUnavailable);
  const title = bot ? html`Add ${app.name} to a server` : html`Add ${app.name} to your account`;
  const alsoScopes = view.scopes.length
    ? html`<h2>${app.name} will also be able to:</h2>
<ul class="plain scope-list">${view.scopes.map((s) => html`<li><span class="scope-mark" aria-hidden="true">✓</span> ${s.description}</li>`)}</ul>
<p class="hint">It keeps this access until you remove it in <a href="/settings/authorized-apps">Settings → Authorized apps</a>.</p>`
    : '';
  const userLines = html`<h2>${app.name} will be able to:</h2>
<ul class="plain scope-list">
<li><span class="scope-mark" aria-hidden="true">✓</span> Let you use its commands</li>
<li><span class="scope-mark" aria-hidden="true">✓</span> Send you direct messages</li>
</ul>
<p class="hint">You can remove it at any time in <a href="/settings/apps">Settings → Installed apps</a>.</p>`;
  const body = html`<div class="card consent install-consent">
${consentHead(view, title)}
${signedInAs(ctx.viewer, view)}
${bot ? serverPicker(view, install, ctx.serviceName) : userLines}
<form method="post" action="${view.subject.action}">
${csrfField(ctx.csrfToken)}
${hiddenFields(view.fields)}
${bot && install.chosenServer ? html`<input type="hidden" name="server_id" value="${install.chosenServer.id}">` : ''}
${bot && !(install.servers.length === 0 || install.lockedUnavailable) ? permissionChoices(install, app.name) : ''}
${bot && install.commands ? html`<p class="small">Its commands will be available to the server's members.</p>` : ''}
${alsoScopes}
${whereTheAnswerGoes(view.subject, ctx.serviceName)}
<div class="actions consent-actions">
<button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
${canAuthorize ? html`<button type="submit" name="decision" value="authorize">Authorize</button>` : ''}
</div>
</form>
</div>`;
  return layout({ title: bot ? `Add ${app.name} to a server` : `Add ${app.name}`, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow', scripts: [APP_JS_PATH] });
}

/** After a plain install (issue #4): a confirmation naming the server and what the bot got. */
export function installedPage(input: { ctx: PageCtx & { viewer: Viewer }; view: InstalledView }): string {
  const { ctx, view } = input;
  const app = view.application;
  const server = view.server;
  const body =
    view.kind === 'bot' && server
      ? html`<div class="card consent" role="status">
<div class="consent-head">${appTile(app.name, 'large')}<div><h1>${app.name} was added to ${server.name}</h1></div></div>
${
  view.granted.length
    ? html`<p>Its role <strong>${app.name}</strong> holds:</p><p>${view.granted.map((g) => html`<span class="pill">${g}</span> `)}</p>`
    : html`<p>It has no permissions of its own: it can do what every member of ${server.name} can.</p>`
}
${view.commands ? html`<p class="small">Its commands are available in ${server.name}.</p>` : ''}
<div class="actions">
<a class="button" href="/servers/${server.id}">Go to ${server.name}</a>
<a class="button secondary" href="/servers/${server.id}/settings/integrations">See it in Integrations</a>
</div>
</div>`
      : html`<div class="card consent" role="status">
<div class="consent-head">${appTile(app.name, 'large')}<div><h1>${app.name} was added to your account</h1></div></div>
<p>You can use its commands, and it can send you direct messages.</p>
<div class="actions"><a class="button" href="/">Home</a><a class="button secondary" href="/settings/apps">Installed apps</a></div>
</div>`;
  const title = view.kind === 'bot' && server ? `${app.name} added to ${server.name}` : `${app.name} added`;
  return layout({ title, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}


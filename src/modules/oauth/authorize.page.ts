import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import type { PageCtx } from '../../web/components.js';
import type { InstallConsent } from '../applications/installs.js';
import type { WebhookConsent } from './incoming-webhook.js';
import type { DelegatedConsent } from './delegation.js';

/**
 * The app's "icon" on pages about granting access is its initial, drawn locally: the registered
 * icon URL points at a host the app controls, and loading it would tell that host who is looking
 * at the consent screen and when (OAUTH-CHECKLIST A17: no third-party resources). docs/consent.md.
 */
export function appTile(name: string, size: 'large' | 'small'): SafeHtml {
  const initial = Array.from(name.trim())[0]?.toUpperCase() ?? '?';
  return html`<span class="avatar app-tile${size === 'large' ? ' large' : ''}" aria-hidden="true">${initial}</span>`;
}

export function personTile(viewer: Viewer): SafeHtml {
  const initial = Array.from(viewer.name.trim() || viewer.username)[0]?.toUpperCase() ?? '?';
  return html`<span class="avatar" aria-hidden="true">${initial}</span>`;
}

/** Scheme, host and port of the redirect URI: where the person lands, shown in plain sight. */
export function destination(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.host ? `${url.protocol}//${url.host}` : `${url.protocol}${url.pathname}`;
  } catch {
    return redirectUri;
  }
}

/**
 * What a consent screen answers (issue #37 §3): an authorization request, an install, later a
 * device request. The screens post to, come back to and name a destination from here only, so a
 * new kind of request brings its own subject and reuses them.
 */
export interface ConsentSubject {
  /** Where the answer is posted, and where a picker that reloads the screen sends its GET. */
  action: string;
  /** The GET URL of this screen: "Switch account" signs in and comes back here. */
  returnUrl: string;
  /**
   * Where the answer sends the person, shown so a look-alike app gives itself away; undefined when
   * it sends them nowhere (a plain install).
   */
  redirectUri: string | undefined;
}

/** Everything the consent screen shows, as plain data (authorize.page.ts renders it). */
export interface ConsentView {
  /**
   * `registered`: the app registered itself (RFC 7591, issue #41 §3) and nobody reviewed it.
   * `metadataDocument`: its client_id is a client ID metadata document's URL; the host is what is
   * known of it, and the name only what the document claims.
   */
  application: { id: string; name: string; description: string; ownerUsername: string | null; registered?: boolean; metadataDocument?: { url: string; host: string } };
  /** The scopes in plain words (for installs: the ones besides bot and applications.commands). */
  scopes: { name: string; description: string }[];
  /** The request, re-sent by the form and re-validated on POST. */
  fields: [string, string][];
  subject: ConsentSubject;
  install?: InstallConsent;
  /** webhook.incoming (issue #23): the server and channel picker. */
  webhook?: WebhookConsent;
  /** RFC 8707 (issue #41): the API the access is for, and the app that serves it; absent for this service's own. */
  resource?: { identifier: string; applicationName: string };
  /** RFC 8693 (issue #41): what the resource's app may also do on this service's API for the person (token exchange). */
  delegated?: DelegatedConsent;
  /** RFC 8628 (issue #41 §2): a device asked, showing this user code; nothing is sent to a website. */
  device?: { userCode: string };
}

/** The page after a plain install (issue #4: "a confirmation naming the server"). */
export interface InstalledView {
  application: { id: string; name: string };
  kind: 'bot' | 'user';
  /** Bot installs: where the bot now is, and what its role holds. */
  server?: { id: string; name: string };
  granted: string[];
  commands: boolean;
}

export interface ConsentPageInput {
  ctx: PageCtx & { viewer: Viewer };
  view: ConsentView;
}

/**
 * The consent screen (issue #3, OAUTH-CHECKLIST A18): the app and who made it, who is signed in
 * (with a way to switch), each scope in plain words, where the answer goes, and how to take it
 * back. Authorize and Cancel post the request again, with the CSRF token. Installs and
 * webhook.incoming have their own screens (install-consent.page.ts, incoming-webhook.page.ts).
 */
/** Issue #38 §2: the `email` scope's line says which address the app gets and whether it is verified. */
function emailState(viewer: Viewer): SafeHtml {
  if (!viewer.email) return html` <span class="muted">(you have none)</span>`;
  return html` <span class="muted">(${viewer.email}, ${viewer.emailVerified ? 'verified' : 'not verified'})</span>`;
}

export function consentPage(input: ConsentPageInput): string {
  const { ctx, view } = input;
  const app = view.application;
  const body = html`<div class="card consent">
${consentHead(view, app.metadataDocument ? html`An app at ${app.metadataDocument.host} wants to access your ${ctx.serviceName} account` : html`${app.name} wants to access your ${ctx.serviceName} account`)}
${signedInAs(ctx.viewer, view)}
${view.device ? deviceLine(view.device.userCode) : ''}
${view.resource ? resourceLine(view.resource) : ''}
<h2>This will allow ${app.name} to:</h2>
<ul class="plain scope-list">
${view.scopes.map((s) => html`<li><span class="scope-mark" aria-hidden="true">✓</span> ${s.description}${s.name === 'email' ? emailState(ctx.viewer) : ''}</li>`)}
</ul>
${view.delegated ? delegatedSection(view.delegated, ctx.serviceName) : ''}
<p class="hint">${app.name} will be able to do this until you remove its access in <a href="/settings/authorized-apps">Settings → Authorized apps</a>. It cannot see your password.</p>
${whereTheAnswerGoes(view.subject, ctx.serviceName)}
<form method="post" action="${view.subject.action}">
${csrfField(ctx.csrfToken)}
${hiddenFields(view.fields)}
<div class="actions consent-actions">
<button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
<button type="submit" name="decision" value="authorize">Authorize</button>
</div>
</form>
</div>`;
  return layout({ title: `Authorize ${app.name}`, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

/**
 * RFC 8628 §5.4: a device is asking — authorize only if the device in front of you shows this
 * code, since anyone can send a code to someone else hoping they approve it.
 */
function deviceLine(userCode: string): SafeHtml {
  return html`<p class="notice">A device is asking. Only continue if the device in front of you shows the code <strong class="mono">${userCode}</strong>.</p>`;
}

/** RFC 8707 (issue #41): whose API the access is for, so a token for someone else's service is no surprise. */
function resourceLine(resource: { identifier: string; applicationName: string }): SafeHtml {
  return html`<p class="hint">This access is for <strong class="mono">${resource.identifier}</strong>, an API of ${resource.applicationName}, not for your account itself.</p>`;
}

/**
 * RFC 8693 (issue #41): the resource's app may exchange the token it receives for one of this
 * service's API, for the same person; approving records these scopes on the authorization.
 */
function delegatedSection(delegated: DelegatedConsent, serviceName: string): SafeHtml {
  return html`<h2 id="delegated-scopes">${delegated.applicationName} can also, on your behalf, on ${serviceName}:</h2>
<ul class="plain scope-list" aria-labelledby="delegated-scopes">
${delegated.scopes.map((s) => html`<li><span class="scope-mark" aria-hidden="true">✓</span> ${s.description}</li>`)}
</ul>`;
}

/** Where answering sends the person: the app's site (scheme, host and port in plain sight), or nowhere. */
export function whereTheAnswerGoes(subject: ConsentSubject, serviceName: string): SafeHtml {
  return subject.redirectUri
    ? html`<p class="hint">After you choose, you will be sent to <strong class="mono">${destination(subject.redirectUri)}</strong>.</p>`
    : html`<p class="hint">You stay on ${serviceName}: nothing is sent to the app's website.</p>`;
}

export function hiddenFields(fields: readonly [string, string][]): SafeHtml {
  return html`${fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`;
}

export function consentHead(view: ConsentView, title: SafeHtml | string): SafeHtml {
  const app = view.application;
  return html`<div class="consent-head">
${appTile(app.name, 'large')}
<div>
<h1>${title}</h1>
<p class="muted small">${app.metadataDocument ? metadataDocumentLine(app.name, app.metadataDocument) : app.registered ? html`<strong>Registered automatically, not reviewed</strong>: nobody on this service has checked who runs this app.` : app.ownerUsername ? html`Made by <strong>@${app.ownerUsername}</strong>` : 'Made by a deleted account'}</p>
</div>
</div>
${app.description ? html`<p class="consent-description">${app.description}</p>` : ''}`;
}

/**
 * Issue #41 §3, draft-ietf-oauth-client-id-metadata-document §6: the host serving the document is
 * the one fact known about such an app; its name is whatever the document says, so it is shown as
 * a claim, never as the app's identity.
 */
function metadataDocumentLine(name: string, document: { url: string; host: string }): SafeHtml {
  return html`<strong>App at <span class="mono">${document.host}</span>, not reviewed</strong>: it calls itself “${name}”, but nobody on this service has checked who runs it. Its details come from <span class="mono">${document.url}</span>.`;
}

export function signedInAs(viewer: Viewer, view: ConsentView): SafeHtml {
  const switchUrl = `/login?next=${encodeURIComponent(view.subject.returnUrl)}`;
  return html`<div class="consent-who">
${personTile(viewer)}
<p class="small">Signed in as <strong>${viewer.name}</strong> (@${viewer.username})<br><a href="${switchUrl}">Not you? Switch account</a></p>
</div>`;
}

/** A plain install was cancelled: nothing was added, and there is no app to send the person back to. */
export function declinedPage(input: { ctx: PageCtx & { viewer: Viewer }; application: { name: string } }): string {
  const { ctx, application } = input;
  const body = html`<div class="card consent" role="status">
<div class="consent-head">${appTile(application.name, 'large')}<div><h1>${application.name} was not added</h1></div></div>
<p>Nothing was installed and nothing was shared with the app.</p>
<div class="actions"><a class="button" href="/">Home</a></div>
</div>`;
  return layout({ title: `${application.name} not added`, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

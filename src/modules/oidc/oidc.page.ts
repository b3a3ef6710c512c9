import { html, type SafeHtml } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import type { PageCtx } from '../../web/components.js';
import { DEFAULT_SIGNING_ALG, SIGNING_ALGS } from './signing-algs.js';

/** RP-Initiated Logout 1.0 §2: the OP asks before signing the person out when the request cannot prove who sent it. */
export function endSessionConfirmPage(input: { ctx: PageCtx & { viewer: Viewer }; applicationName: string | undefined; fields: [string, string][] }): string {
  const { ctx } = input;
  const who = input.applicationName === undefined ? 'An application' : input.applicationName;
  const body = html`<div class="card">
<h1>Sign out of ${ctx.serviceName}?</h1>
<p>${who} asks to sign you out. You are signed in as <strong>${ctx.viewer.name}</strong> (@${ctx.viewer.username}).</p>
<form method="post" action="/app/oauth2/logout">
${csrfField(ctx.csrfToken)}
${input.fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<div class="actions"><button type="submit">Sign out</button><a class="button secondary" href="/">Stay signed in</a></div>
</form>
</div>`;
  return layout({ title: 'Sign out', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

/**
 * After a sign-out with no registered place to go back to, or for a visitor who was not signed
 * in: then `returnTo` is the app's exactly registered post-logout URI, offered as a link (issue
 * #36 §4: a signed-out visitor is never sent to an app's URI without a page of ours first).
 */
export function signedOutPage(input: { ctx: PageCtx; returnTo: { url: string; applicationName: string } | undefined }): string {
  const { ctx, returnTo } = input;
  const next = returnTo === undefined ? html`<p>You can close this window, or <a href="/login">sign in again</a>.</p>` : html`<p><a class="button" id="return-to-app" href="${returnTo.url}">Return to ${returnTo.applicationName}</a></p>`;
  const body = html`<div class="card" role="status"><h1>You are signed out</h1>${next}</div>`;
  return layout({ title: 'Signed out', serviceName: ctx.serviceName, viewer: undefined, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

export interface OpenIdSectionInput {
  appId: string;
  issuer: string;
  discoveryUrl: string;
  idTokenAlg: string;
  postLogoutRedirectUris: string[];
  csrfToken: string;
  /** The textarea as submitted, after an error. */
  urisText?: string | undefined;
  errors?: string[] | undefined;
}

/** The developer portal's OpenID Connect section of an app (issue #22 §6, §7). */
export function openIdSection(input: OpenIdSectionInput): SafeHtml {
  const errors = input.errors ?? [];
  const text = input.urisText ?? input.postLogoutRedirectUris.join('\n');
  return html`<section class="card" id="openid">
<h2>OpenID Connect</h2>
<p class="hint">Ask for scope <code>openid</code> to receive an ID token. Point your OpenID Connect library at the issuer; it reads everything else from the discovery document. See <a href="/api/docs">the API reference</a> and docs/oidc.md.</p>
<dl class="mono">
<dt>Issuer</dt><dd><code id="oidc-issuer">${input.issuer}</code></dd>
<dt>Discovery URL</dt><dd><code id="oidc-discovery">${input.discoveryUrl}</code></dd>
</dl>
<form method="post" action="/developers/applications/${input.appId}/openid">
${csrfField(input.csrfToken)}
<label for="idTokenAlg">ID token signing algorithm</label>
<select id="idTokenAlg" name="idTokenAlg">
${SIGNING_ALGS.map((alg) => html`<option value="${alg}"${alg === input.idTokenAlg ? html` selected` : ''}>${alg}${alg === DEFAULT_SIGNING_ALG ? ' (default)' : ''}</option>`)}
</select>
<label for="postLogoutRedirectUris">Post-logout redirect URIs, one per line</label>
<textarea id="postLogoutRedirectUris" name="postLogoutRedirectUris" rows="3" spellcheck="false" autocapitalize="none" class="mono">${text}</textarea>
<p class="hint">Where the end-session endpoint may send people after signing them out (post_logout_redirect_uri), compared character for character, like redirect URIs.</p>
${errors.length > 0 ? html`<div class="error" role="alert">${errors.map((e) => html`<p>${e}</p>`)}</div>` : ''}
<div class="actions"><button type="submit">Save OpenID Connect settings</button></div>
</form>
</section>`;
}

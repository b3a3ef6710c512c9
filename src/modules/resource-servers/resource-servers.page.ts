import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { describeScope } from '../../core/scopes.js';
import { DELEGABLE_SCOPES, type ResourceServer } from './resource-servers.js';

/** What the portal's Resource servers section shows (issue #41 §1). */
export interface ResourceServersSectionInput {
  appId: string;
  csrfToken: string;
  servers: readonly ResourceServer[];
}

/**
 * The "Resource servers" section of an app's portal page: the APIs the app serves, each with its
 * identifier and scopes and a Remove button, and the form to declare another (docs/oauth.md
 * §Resource servers). Scopes are typed one per line, the name first and its consent-screen line after it.
 */
export function resourceServersSection(input: ResourceServersSectionInput): SafeHtml {
  const base = `/developers/applications/${input.appId}/resource-servers`;
  return html`<section class="card" id="resource-servers">
<h2>Resource servers</h2>
<p class="hint">APIs this application serves. Apps ask people for access to one by sending its identifier as <code>resource</code>; this application checks the tokens it receives at the introspection endpoint, and can get tokens of its own with client credentials. See docs/oauth.md.</p>
${
  input.servers.length === 0
    ? html`<p>No resource servers yet.</p>`
    : html`<ul class="plain">
${input.servers.map(
  (server) => html`<li><strong class="mono">${server.identifier}</strong> <span class="pill">${server.accessTokenFormat === 'jwt' ? 'JWT access tokens' : 'opaque access tokens'}</span>
<ul class="hint">${server.scopes.map((s) => html`<li><code>${s.name}</code>: ${s.description}</li>`)}</ul>
${server.delegatedScopes.length > 0 ? html`<p class="hint">May act for the person on this service's API with ${server.delegatedScopes.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>`)} (token exchange).</p>` : ''}
<form method="post" action="${base}/${server.id}/remove">
${csrfField(input.csrfToken)}
<button type="submit" class="secondary">Remove ${server.identifier}</button>
</form></li>`,
)}
</ul>`
}
<form method="post" action="${base}">
${csrfField(input.csrfToken)}
<label for="resource-identifier">Identifier</label>
<input id="resource-identifier" name="identifier" type="url" required spellcheck="false" autocapitalize="none" class="mono" aria-describedby="resource-identifier-hint">
<p class="hint" id="resource-identifier-hint">The API's URL, such as <code>https://api.example/</code>: https, or http on 127.0.0.1 or [::1] for development.</p>
<label for="resource-scopes">Scopes, one per line: the name, then what it allows</label>
<textarea id="resource-scopes" name="scopes" rows="3" required spellcheck="false" autocapitalize="none" class="mono" aria-describedby="resource-scopes-hint"></textarea>
<p class="hint" id="resource-scopes-hint">For example <code>read:things Read your things</code>. The consent screen shows the words after the name.</p>
<label class="check"><input type="checkbox" name="jwt" value="on" aria-describedby="resource-jwt-hint"><span><strong>JWT access tokens</strong><br><span class="hint" id="resource-jwt-hint">RFC 9068 tokens your API verifies itself against this service's JWKS, valid 5 minutes. Unticked: opaque tokens, checked by introspection and revoked at once.</span></span></label>
<fieldset aria-describedby="resource-delegate-hint">
<legend>Act for the person on this service's API (token exchange, RFC 8693)</legend>
<p class="hint" id="resource-delegate-hint">Your API can exchange a token it receives for a short-lived token of this service's API, acting for the same person, with what you tick here. The consent screen asks the person for it.</p>
${DELEGABLE_SCOPES.map((name) => html`<label class="check"><input type="checkbox" name="delegate" value="${name}"><span><code>${name}</code>: ${describeScope(name)}</span></label>`)}
</fieldset>
<div class="actions"><button type="submit">Add resource server</button></div>
</form>
</section>`;
}

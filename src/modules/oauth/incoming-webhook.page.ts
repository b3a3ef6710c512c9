import { html } from '../../web/html.js';
import { csrfField, layout } from '../../web/layout.js';
import { consentHead, hiddenFields, signedInAs, whereTheAnswerGoes, type ConsentPageInput } from './authorize.page.js';
import { WEBHOOK_CHANNEL_FIELD, WEBHOOK_INCOMING_SCOPE, type WebhookConsent } from './incoming-webhook.js';

/**
 * The consent screen of `webhook.incoming` (issue #23): one native select, its channels grouped
 * by server, so it works with the keyboard, a screen reader and a phone's picker without
 * JavaScript. Only channels where the person holds Manage webhooks and View channel are offered
 * (the POST checks again); nothing is created until Authorize, and then only at the code exchange.
 */
export function webhookConsentPage(input: ConsentPageInput, consent: WebhookConsent): string {
  const { ctx, view } = input;
  const app = view.application;
  const others = view.scopes.filter((s) => s.name !== WEBHOOK_INCOMING_SCOPE);
  const none = consent.servers.length === 0;
  const picker = none
    ? html`<div class="error" role="alert"><strong>There is no channel you can add a webhook to.</strong> Adding a webhook needs the Manage webhooks permission in a server, and you do not have it in any of your servers on ${ctx.serviceName}. Ask a server's owner or an administrator.</div>`
    : html`<label for="${WEBHOOK_CHANNEL_FIELD}">Post to server and channel</label>
<select id="${WEBHOOK_CHANNEL_FIELD}" name="${WEBHOOK_CHANNEL_FIELD}" required aria-describedby="channel-hint">
<option value="" selected disabled>Select a channel</option>
${consent.servers.map((s) => html`<optgroup label="${s.name}">${s.channels.map((c) => html`<option value="${c.id}"># ${c.name} (${s.name})</option>`)}</optgroup>`)}
</select>
<p class="hint" id="channel-hint">Only channels where you have the Manage webhooks permission are listed. ${app.name} gets a new webhook named ${app.name} in that channel. It can post there until someone deletes the webhook in the channel's settings → Integrations; removing ${app.name}'s access in Settings → Authorized apps does not delete it.</p>`;
  const body = html`<div class="card consent webhook-consent">
${consentHead(view, html`${app.name} wants to post messages in a channel`)}
${signedInAs(ctx.viewer, view)}
<form method="post" action="${view.subject.action}">
${csrfField(ctx.csrfToken)}
${hiddenFields(view.fields)}
${picker}
${
  others.length
    ? html`<h2>${app.name} will also be able to:</h2>
<ul class="plain scope-list">${others.map((s) => html`<li><span class="scope-mark" aria-hidden="true">✓</span> ${s.description}</li>`)}</ul>
<p class="hint">It keeps this access until you remove it in <a href="/settings/authorized-apps">Settings → Authorized apps</a>.</p>`
    : ''
}
${whereTheAnswerGoes(view.subject, ctx.serviceName)}
<div class="actions consent-actions">
<button type="submit" name="decision" value="cancel" class="secondary" formnovalidate>Cancel</button>
${none ? '' : html`<button type="submit" name="decision" value="authorize">Authorize</button>`}
</div>
</form>
</div>`;
  return layout({ title: `Authorize ${app.name}`, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

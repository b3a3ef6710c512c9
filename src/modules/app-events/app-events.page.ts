import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import type { PageCtx } from '../../web/components.js';
import type { Application } from '../applications/applications.js';
import { appPath, copyField, describedBy, errorBlock, invalid, page, withAppNav, type FieldMessages } from '../applications/portal.page.js';
import { APP_EVENT_TYPES, ENDPOINT_URL_MAX, EventWebhooksStatus, type AppEndpoints, type Delivery } from './app-events.js';

export interface WebhooksPageInput {
  ctx: PageCtx;
  app: Application;
  endpoints: AppEndpoints;
  deliveries: readonly Delivery[];
  notice?: string | undefined;
  /** The interactions form as submitted, after a refusal. */
  interactions?: { url?: string | undefined; errors: FieldMessages };
  /** The events form as submitted, after a refusal. */
  events?: { url?: string | undefined; enabled: boolean; types: readonly string[]; errors: FieldMessages };
}

const EVENT_HELP: Record<(typeof APP_EVENT_TYPES)[number], string> = {
  APPLICATION_AUTHORIZED: 'Someone authorized the app: a consent, a bot added to a server (with the server), or the app added to their account.',
  APPLICATION_DEAUTHORIZED: 'Someone removed the app from their authorized apps.',
};

function when(ms: number | null): SafeHtml {
  if (ms === null) return html``;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</time>`;
}

const OUTCOME_WORDS: Record<Delivery['outcome'], string> = {
  delivered: 'Delivered',
  retrying: 'Failed, will retry',
  dropped: 'Dropped',
  accepted: 'Check passed',
  refused: 'Check failed',
};

function deliveryLog(deliveries: readonly Delivery[]): SafeHtml {
  if (deliveries.length === 0) return html`<p class="muted">Nothing sent yet.</p>`;
  return html`<div class="table-scroll"><table>
<caption class="small muted">The last ${deliveries.length} requests sent to this app, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Sent</th><th scope="col">Outcome</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Next retry</th></tr></thead>
<tbody>${deliveries.map(
    (d) => html`<tr><td>${when(d.createdAt)}</td><td>${d.kind === 'event' ? d.eventType ?? '' : d.kind === 'event-ping' ? 'Event URL check' : d.kind === 'interaction' ? `Command ${d.eventType ?? ''}` : `Interactions URL check: ${d.eventType ?? ''}`}</td><td>${OUTCOME_WORDS[d.outcome]}${d.error ? html`<br><span class="small muted">${d.error}</span>` : ''}</td><td>${d.httpStatus ?? '—'}</td><td>${d.latencyMs === null ? '—' : `${d.latencyMs} ms`}</td><td>${when(d.nextRetryAt)}</td></tr>`,
  )}</tbody>
</table></div>`;
}

/** /developers/applications/:id/webhooks — the public key, the interactions endpoint, app events and the delivery log (issue #40). */
export function webhooksPage(input: WebhooksPageInput): string {
  const { ctx, app, endpoints } = input;
  const iErrors = input.interactions?.errors ?? {};
  const eErrors = input.events?.errors ?? {};
  const interactionsUrl = input.interactions?.url ?? endpoints.interactionsEndpointUrl ?? '';
  const eventsUrl = input.events?.url ?? endpoints.eventWebhooksUrl ?? '';
  const enabled = input.events?.enabled ?? endpoints.eventWebhooksStatus === EventWebhooksStatus.ENABLED;
  const types = input.events?.types ?? endpoints.eventWebhooksTypes;
  const eventErrorIds = ['eventWebhooksUrl', 'enabled', 'types'].filter((f) => eErrors[f]?.length);

  const disabledNotice =
    endpoints.eventWebhooksStatus === EventWebhooksStatus.DISABLED_BY_SERVER
      ? html`<div class="error" role="alert"><strong>Event webhooks are off.</strong> ${endpoints.eventWebhooksDisabledReason ?? ''}</div>`
      : html``;

  const content = html`${input.notice ? html`<p class="notice" role="status">${input.notice}</p>` : ''}
<div class="card">
<h2 id="public-key">Public key</h2>
${copyField('verify-key', 'Public key (verify_key)', endpoints.publicKey, html`Every request ${ctx.serviceName} sends this app carries <code>X-Signature-Ed25519</code>, the Ed25519 signature of <code>X-Signature-Timestamp</code> followed by the body, which this key verifies (as Discord's <code>verifyKey</code> does).`)}
</div>
<div class="card">
<h2 id="interactions">Interactions endpoint URL</h2>
<form method="post" action="${appPath(app, '/webhooks/interactions')}">
${csrfField(ctx.csrfToken)}
<label for="interactionsEndpointUrl">Interactions endpoint URL</label>
<input id="interactionsEndpointUrl" name="interactionsEndpointUrl" type="url" maxlength="${ENDPOINT_URL_MAX}" value="${interactionsUrl}" placeholder="https://example.com/interactions" autocomplete="off" spellcheck="false"${describedBy('interactionsEndpointUrl-hint', iErrors['interactionsEndpointUrl']?.length ? 'interactionsEndpointUrl-error' : undefined)}${invalid(iErrors['interactionsEndpointUrl'])}>
<p class="hint" id="interactionsEndpointUrl-hint">On save, ${ctx.serviceName} sends a signed PING (type 1), which must be answered 200 with <code>{"type":1}</code>, and the same PING with a bad signature, which must be answered 401. Leave it empty to remove it. Commands invoked from the chat are not sent yet: see the documentation.</p>
${errorBlock('interactionsEndpointUrl-error', iErrors['interactionsEndpointUrl'])}
<div class="actions"><button type="submit">Save and verify</button></div>
</form>
</div>
<div class="card">
<h2 id="events">Event webhooks</h2>
${disabledNotice}
<form method="post" action="${appPath(app, '/webhooks/events')}">
${csrfField(ctx.csrfToken)}
<label class="check"><input type="checkbox" name="enabled" value="on"${enabled ? html` checked` : ''} aria-describedby="enabled-hint"><span><strong>Send events</strong><br><span class="hint" id="enabled-hint">On save with this ticked, ${ctx.serviceName} sends a signed PING (type 0), which must be answered 204.</span></span></label>
${errorBlock('enabled-error', eErrors['enabled'])}
<label for="eventWebhooksUrl">Event webhooks URL</label>
<input id="eventWebhooksUrl" name="eventWebhooksUrl" type="url" maxlength="${ENDPOINT_URL_MAX}" value="${eventsUrl}" placeholder="https://example.com/events" autocomplete="off" spellcheck="false"${describedBy(eventErrorIds.includes('eventWebhooksUrl') ? 'eventWebhooksUrl-error' : undefined)}${invalid(eErrors['eventWebhooksUrl'])}>
${errorBlock('eventWebhooksUrl-error', eErrors['eventWebhooksUrl'])}
<fieldset>
<legend>Events to send</legend>
${APP_EVENT_TYPES.map(
    (type) => html`<label class="check"><input type="checkbox" name="types" value="${type}"${types.includes(type) ? html` checked` : ''} aria-describedby="type-${type}-hint"><span><strong><code>${type}</code></strong><br><span class="hint" id="type-${type}-hint">${EVENT_HELP[type]}</span></span></label>`,
  )}
</fieldset>
${errorBlock('types-error', eErrors['types'])}
<div class="actions"><button type="submit">Save event settings</button></div>
</form>
</div>
<div class="card">
<h2 id="deliveries">Delivery log</h2>
<p class="muted small">The last 100 requests sent to this app: events, and the checks of its URLs. A failed event is retried for 15 minutes, then dropped; an endpoint that fails that long is turned off.</p>
${deliveryLog(input.deliveries)}
</div>`;
  return page(ctx, `${app.name}: interactions and events`, html`<h1>${app.name}</h1>${withAppNav(app, 'webhooks', content)}`);
}

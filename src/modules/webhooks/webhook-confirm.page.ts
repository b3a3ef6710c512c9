import { html, type SafeHtml } from '../../web/html.js';
import { dangerForm, type PageCtx } from '../../web/components.js';
import { integrationsScreen } from './webhooks.page.js';
import type { Webhook } from './webhooks.js';

/** The confirmation steps of Integrations (issue #5): regenerate a webhook's URL, delete a webhook. */

export interface ConfirmWebhookInput {
  ctx: PageCtx;
  base: string;
  webhook: Webhook;
  channelName: string;
}

/** A confirmation card: the question, what follows, the one button that does it, and Cancel. */
function confirmation(input: ConfirmWebhookInput, words: { title: string; question: string; text: SafeHtml; action: string; button: string }): string {
  const { ctx, base, webhook } = input;
  return integrationsScreen(
    ctx,
    `${words.title} · ${webhook.name}`,
    html`<div class="card">
<h1>${words.question}</h1>
<p>${words.text}</p>
${dangerForm(ctx.csrfToken, `${base}/webhooks/${webhook.id}/${words.action}`, words.button, base)}
</div>`,
  );
}

/** "Regenerate the URL of …?": the old URL stops working at once. */
export function confirmRegeneratePage(input: ConfirmWebhookInput): string {
  return confirmation(input, {
    title: 'Regenerate URL',
    question: `Regenerate the URL of ${input.webhook.name}?`,
    text: html`A new URL will be shown once. <strong>The current URL stops working immediately</strong>: anything posting to # ${input.channelName} with it fails until it uses the new one.`,
    action: 'regenerate',
    button: 'Regenerate URL',
  });
}

/** "Delete …?": the URL stops working; the messages it posted stay. */
export function confirmDeletePage(input: ConfirmWebhookInput): string {
  return confirmation(input, {
    title: 'Delete webhook',
    question: `Delete ${input.webhook.name}?`,
    text: html`This cannot be undone. Its URL stops working at once. The messages it posted in # ${input.channelName} stay.`,
    action: 'delete',
    button: 'Delete webhook',
  });
}

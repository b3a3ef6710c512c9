/**
 * The `webhook.incoming` scope (issue #23, Discord's flow): a code grant whose consent screen
 * asks the person for a server and a channel; the code exchange answers the usual token fields
 * plus the webhook it created there. Pure: no Fastify, no Kysely.
 */

export const WEBHOOK_INCOMING_SCOPE = 'webhook.incoming';

/** The form field the channel picker sends. */
export const WEBHOOK_CHANNEL_FIELD = 'channel_id';

/** Whether a request's scopes ask for an incoming webhook. */
export function wantsIncomingWebhook(request: { scopes: readonly string[] }): boolean {
  return request.scopes.includes(WEBHOOK_INCOMING_SCOPE);
}

/**
 * What webhook.incoming cannot be combined with: an install has its own server picker on its own
 * screen, and one screen asks for one place (docs/oauth.md "webhook.incoming").
 */
export function incomingWebhookScopeProblem(scopes: readonly string[]): string | undefined {
  if (!scopes.includes(WEBHOOK_INCOMING_SCOPE)) return undefined;
  if (scopes.includes('bot') || scopes.includes('applications.commands')) return 'webhook.incoming cannot be combined with bot or applications.commands; authorize them separately';
  return undefined;
}

/** The channel picker of the consent screen: servers with the channels the person may add a webhook to. */
export interface WebhookConsent {
  servers: { id: string; name: string; channels: { id: string; name: string }[] }[];
}

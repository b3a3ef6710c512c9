import type { Transaction } from 'kysely';
import type { Acting } from '../../core/acting.js';
import { OAuthError } from '../../core/errors.js';
import { refusedPage, type RefusedPage } from './authorize-steps.js';
import { Permission, has } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { DomainEvent } from '../../events/domain-events.js';
import type { Database } from '../../storage/database.js';
import type { Application } from '../applications/applications.js';
import { checkAvatarUrl } from '../directory/people.js';
import type { Channel } from '../directory/channels.js';
import { getChannel } from '../directory/channels.service.js';
import { getServerChannels, listServersForPerson, memberPermissions } from '../directory/servers.service.js';
import { channelHasWebhookRoom, createWebhookInTransaction } from '../webhooks/webhooks.service.js';
import { checkWebhookName, presentWebhook, type WebhookRecord } from '../webhooks/webhooks.js';
import { WEBHOOK_CHANNEL_FIELD, type WebhookConsent } from './incoming-webhook.js';

/**
 * `webhook.incoming` (issue #23): the channel picker's choices, the check of the chosen channel
 * when the person confirms, and the webhook the code exchange creates. Where the webhook is
 * created: at the code exchange, in the transaction that consumes the code — an unredeemed or
 * expired code leaves nothing behind, and a replayed code creates nothing (it is refused before
 * that transaction). docs/oauth.md "webhook.incoming".
 */

/** SPEC §5.8: creating a webhook needs Manage webhooks, and View channel to see where it posts. */
const WEBHOOK_BITS = Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL;

/** The servers where the person holds Manage webhooks and View channel, with their channels. */
export async function webhookConsent(deps: Deps, userId: string): Promise<WebhookConsent> {
  const servers = (await listServersForPerson(deps, userId)).filter((s) => has(s.permissions, WEBHOOK_BITS));
  const withChannels = await Promise.all(
    servers.map(async (s) => ({
      id: s.id,
      name: s.name,
      channels: (await getServerChannels(deps, s.id)).map((c) => ({ id: c.id, name: c.name })),
    })),
  );
  return { servers: withChannels.filter((s) => s.channels.length > 0) };
}

/** A server channel the person may add a webhook to now, or undefined. */
async function eligibleChannel(deps: Deps, userId: string, channelId: string): Promise<(Channel & { serverId: string }) | undefined> {
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel || channel.serverId === null) return undefined;
  const held = await memberPermissions(deps, channel.serverId, userId);
  if (held === undefined || !has(held, WEBHOOK_BITS)) return undefined;
  return { ...channel, serverId: channel.serverId };
}

/**
 * The channel the consent form chose, never trusting the form: a channel where the person holds
 * Manage webhooks and View channel now, with room for one more webhook; else the page saying why.
 * Nothing is written here.
 */
export async function chosenWebhookChannel(deps: Deps, userId: string, body: unknown): Promise<{ channelId: string } | RefusedPage> {
  const raw = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[WEBHOOK_CHANNEL_FIELD] : undefined;
  if (typeof raw !== 'string' || raw === '') return refusedPage(400, 'Choose a channel', 'Choose the channel the webhook will post to, then press Authorize. Nothing was created.');
  const channel = await eligibleChannel(deps, userId, raw);
  if (!channel) {
    return refusedPage(403, 'You cannot add a webhook there', 'Adding a webhook needs the Manage webhooks and View channel permissions in the channel\'s server. Nothing was created.');
  }
  if (!(await channelHasWebhookRoom(deps, channel.id))) {
    return refusedPage(400, 'That channel is full', `# ${channel.name} already has 10 webhooks, the most a channel can have. Delete one in the channel's settings → Integrations, or choose another channel. Nothing was created.`);
  }
  return { channelId: channel.id };
}

/** What the exchange will create, checked before its transaction starts. */
export interface PreparedIncomingWebhook {
  channel: Channel & { serverId: string };
  name: string;
  avatarUrl: string | null;
  applicationId: string;
  userId: string;
}

/**
 * Re-checks, at the code exchange, that the person still may add a webhook to the chosen channel
 * (up to 10 minutes have passed), and derives its name (the app's) and avatar (the app's icon).
 */
export async function prepareIncomingWebhook(deps: Deps, app: Application, userId: string, channelId: string): Promise<PreparedIncomingWebhook> {
  const channel = await eligibleChannel(deps, userId, channelId);
  if (!channel) throw new OAuthError('invalid_grant', 'the person can no longer add a webhook to the chosen channel (it was deleted, or the Manage webhooks permission was removed)');
  const name = checkWebhookName(app.name, deps.config.serviceName);
  const avatar = checkAvatarUrl(app.iconUrl);
  return { channel, name: name.ok ? name.value : 'Incoming webhook', avatarUrl: avatar.ok ? avatar.value : null, applicationId: app.id, userId };
}

/**
 * Creates the webhook in the exchange's transaction, as `acting` (the person who authorized). A
 * channel filled meanwhile (SPEC §8: 10) is `invalid_grant`, and the transaction is rolled back,
 * so the code stays unused. Its webhook.created event is recorded in that transaction (issue #37
 * §2) and returned in `events`, for the caller to deliver once the transaction has committed.
 */
export async function createIncomingWebhook(deps: Deps, acting: Acting, trx: Transaction<Database>, prepared: PreparedIncomingWebhook): Promise<{ record: WebhookRecord; events: DomainEvent[] }> {
  const issued = await createWebhookInTransaction(deps, acting, trx, prepared.channel, { userId: prepared.userId, applicationId: prepared.applicationId }, prepared);
  if (!issued) {
    throw new OAuthError('invalid_grant', `the chosen channel already has 10 webhooks, the most a channel can have; delete one in its settings or authorize again choosing another channel`);
  }
  // The token and URL are shown in this answer only (SPEC §2.8).
  return { record: presentWebhook(issued.webhook, { withToken: issued.token, baseUrl: deps.config.baseUrl }), events: issued.events };
}

import type { Channel } from '../../src/modules/directory/channels.js';
import { insertChannel } from '../../src/modules/directory/channels.repository.js';
import type { Role } from '../../src/modules/directory/roles.js';
import { insertRole } from '../../src/modules/directory/roles.repository.js';
import { insertDmChannel } from '../../src/modules/messages/dms.repository.js';
import { insertMessage, type NewMessage } from '../../src/modules/messages/messages.repository.js';
import { githubSecretOf } from '../../src/modules/webhooks/compat-execute.service.js';
import { findStoredGithubSecret } from '../../src/modules/webhooks/github-secrets.repository.js';
import type { Webhook } from '../../src/modules/webhooks/webhooks.js';
import { findWebhook, listServerWebhooks } from '../../src/modules/webhooks/webhooks.repository.js';
import type { Services } from '../../src/services.js';

/**
 * The only place tests go below the services (test/storage aside). Tests make their data with
 * given.ts, through the services; what is here is what no service offers:
 *  - reading back what a request stored, as stored (a webhook's token hash, a GitHub secret);
 *  - writing a state no service makes today (a message whose name predates a rule, a DM channel
 *    row without its opening, a managed role), to show how the pages treat it.
 * Keeping them here means a change of a repository's signature touches one test file.
 */
type Holder = { services: Pick<Services, 'db'> };

/** What webhookMessage stores: the content, and optionally embeds and the name and avatar the sender chose. */
interface WebhookMessageInput {
  content: string;
  embeds?: unknown[];
  name?: string;
  avatarUrl?: string | null;
}

export const stored = {
  /** A webhook row, token hash included (undefined once deleted). */
  webhook: (t: Holder, id: string): Promise<Webhook | undefined> => findWebhook(t.services.db, id),
  /** Every webhook of a server, as stored. */
  serverWebhooks: (t: Holder, serverId: string): Promise<Webhook[]> => listServerWebhooks(t.services.db, serverId),
  /** A GitHub-compatible webhook's signing secret, opened (undefined when none is set, null when it does not open). */
  async githubSecret(t: { services: Services }, webhookId: string): Promise<string | null | undefined> {
    const webhook = await findWebhook(t.services.db, webhookId);
    return webhook === undefined ? undefined : githubSecretOf(t.services, webhook);
  },
  /** A webhook's GitHub secret as the database holds it (sealed), undefined when none is set. */
  githubSecretAtRest: (t: Holder, webhookId: string): Promise<string | undefined> => findStoredGithubSecret(t.services.db, webhookId),
  insertMessage: (t: Holder, message: NewMessage): Promise<unknown> => insertMessage(t.services.db, message),
  /** A webhook's message in a channel, stored as the execute route stores it (nothing announced); returns its id. */
  async webhookMessage(t: { services: Pick<Services, 'db' | 'ids' | 'clock'> }, channelId: string, input: WebhookMessageInput): Promise<string> {
    const id = t.services.ids.next();
    await insertMessage(t.services.db, {
      id,
      channelId,
      authorId: '1000000000000000001',
      webhookId: '1000000000000000001',
      applicationId: null,
      authorName: input.name ?? 'Deploy Hook',
      authorAvatarUrl: input.avatarUrl ?? null,
      content: input.content,
      embeds: (input.embeds ?? []) as NewMessage['embeds'],
      createdAt: t.services.clock.now(),
    });
    return id;
  },
  insertDmChannel: (t: Holder, dm: { channelId: string; userA: string; userB: string; createdAt: number }): Promise<void> => insertDmChannel(t.services.db, dm),
  insertChannel: (t: Holder, channel: Channel): Promise<void> => insertChannel(t.services.db, channel),
  insertRole: (t: Holder, role: Role): Promise<void> => insertRole(t.services.db, role),
};

import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { getPerson } from '../accounts/accounts.service.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { getServer } from '../directory/servers.service.js';
import { recentWebhookAvatarUrls } from '../messages/messages.service.js';
import { getWebhook } from '../webhooks/webhooks.service.js';
import { imageHash } from './resources.js';

/** How many of a channel's latest messages are searched for a webhook message's avatar override. */
export const OVERRIDE_AVATAR_SEARCH = 1000;

export type ImageKind = 'avatars' | 'icons' | 'app-icons';

/**
 * The stored https URL behind `/{kind}/{id}/{hash}` (DESIGN §1's CDN routes), or undefined.
 * avatars: a person's or bot's avatar, a webhook's own avatar, or the avatar a webhook message
 * was posted with (searched among the channel's latest messages); icons: a server's;
 * app-icons: an application's. The hash must be the one presented for that URL.
 */
export async function resolveImage(deps: Deps, kind: ImageKind, id: string, hash: string): Promise<string | undefined> {
  if (!isSnowflake(id)) return undefined;
  const matches = (url: string | null | undefined): url is string => url !== null && url !== undefined && imageHash(url) === hash;
  if (kind === 'icons') {
    const server = await getServer(deps, id);
    return matches(server?.iconUrl) ? server.iconUrl : undefined;
  }
  if (kind === 'app-icons') {
    const app = await findApplicationByClientId(deps, id);
    return matches(app?.iconUrl) ? app.iconUrl : undefined;
  }
  const person = await getPerson(deps, id);
  if (person) return matches(person.avatarUrl) ? person.avatarUrl : undefined;
  const webhook = await getWebhook(deps, id);
  if (!webhook) return undefined;
  if (matches(webhook.avatarUrl)) return webhook.avatarUrl;
  const overrides = await recentWebhookAvatarUrls(deps, webhook.channelId, webhook.id, OVERRIDE_AVATAR_SEARCH);
  return overrides.find((url) => matches(url));
}

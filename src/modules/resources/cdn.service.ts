import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { OutboundError } from '../../http/outbound.js';
import { getPerson } from '../accounts/accounts.service.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { getServer } from '../directory/servers.service.js';
import { recentWebhookAvatarUrls } from '../messages/messages.service.js';
import { getWebhook } from '../webhooks/webhooks.service.js';
import type { ImageCache, ServedImage } from './image-cache.js';
import type { ImageKind } from './uploaded-images.js';
import { servableImageType } from './images.js';
import { imageHash } from './resources.js';
import { loadUploadedImage } from './uploaded-images.service.js';
import { parseStoredImage } from './uploaded-images.js';

/** How many of a channel's latest messages are searched for a webhook message's avatar override. */
export const OVERRIDE_AVATAR_SEARCH = 1000;

/** The largest image the CDN routes fetch (Discord's own avatar upload limit is 10 MiB; an avatar needs far less). */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** The deadline of one image fetch. */
export const IMAGE_TIMEOUT_MS = 5000;

export type { ImageKind } from './uploaded-images.js';

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

/**
 * The image behind `/{kind}/{id}/{hash}`, fetched from its stored URL through the outbound client
 * (DESIGN §4, issue #36 §4): public addresses only unless the operator allows private ones, no
 * redirect followed, at most IMAGE_MAX_BYTES, and only PNG, JPEG, GIF or WebP (by declared type
 * and by content; never SVG). Undefined when there is no such image or it cannot be served.
 */
export async function loadImage(deps: Deps, cache: ImageCache, kind: ImageKind, id: string, hash: string): Promise<ServedImage | undefined> {
  const url = await resolveImage(deps, kind, id, hash);
  if (url === undefined) return undefined;
  // Issue #42 §3: an uploaded image comes from the blob store, never through the outbound client.
  const uploaded = parseStoredImage(url);
  if (uploaded !== undefined) return loadUploadedImage(deps, uploaded);
  return cache.get(url, deps.clock.now(), () => fetchImage(deps, url));
}

async function fetchImage(deps: Deps, url: string): Promise<ServedImage | undefined> {
  try {
    const answer = await deps.outbound.request(url, {
      headers: { accept: 'image/png, image/jpeg, image/gif, image/webp' },
      maxBytes: IMAGE_MAX_BYTES,
      timeoutMs: IMAGE_TIMEOUT_MS,
    });
    // A redirect (3xx) is an answer without an image: the client follows none.
    if (answer.status !== 200) return undefined;
    const type = servableImageType(answer.headers['content-type'], answer.body);
    return type ? { type, body: answer.body } : undefined;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    deps.logger.debug({ reason: error.reason }, 'image not fetched');
    return undefined;
  }
}

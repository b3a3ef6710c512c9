/** A text channel of a server (type 0), or later a direct-message channel (type 1). */
export interface Channel {
  id: string;
  serverId: string | null;
  type: number;
  name: string;
  topic: string | null;
  position: number;
  createdAt: number;
}

export const CHANNEL_TYPE_TEXT = 0;
export const CHANNEL_NAME_MAX_LENGTH = 100;
/** Discord's channel topic limit. */
export const CHANNEL_TOPIC_MAX_LENGTH = 1024;

const CHANNEL_NAME_PATTERN = /^[\p{L}\p{N}_-]{1,100}$/u;

/**
 * Discord's text channel slug (issue #24): lower-cased; runs of spaces and dashes become one '-';
 * anything but letters, digits, '-' and '_' is dropped ("Dev Ops!" → "dev-ops"); no leading '-'.
 * `typing` keeps a trailing '-' so the next word can follow it: the same rule runs as the name is
 * typed (web/assets/channel-name.js mirrors it) and, without `typing`, on the server.
 */
export function channelSlug(raw: string, typing = false): string {
  const slug = raw
    .toLowerCase()
    .replace(/[\s-]+/gu, '-')
    .replace(/[^\p{L}\p{N}_-]/gu, '')
    .replace(/-{2,}/gu, '-')
    .replace(/^-+/u, '');
  return typing ? slug : slug.replace(/-+$/u, '');
}

/** A channel name as stored: the slug of what was typed, 1–100 characters; undefined when nothing is left or it is too long. */
export function normalizeChannelName(raw: string): string | undefined {
  const name = channelSlug(raw);
  return CHANNEL_NAME_PATTERN.test(name) ? name : undefined;
}

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
 * Discord-like text channel names: trimmed, lower-cased, runs of whitespace become '-', then
 * 1–100 letters, digits, '-' or '_'. Returns undefined when the result is not such a name.
 */
export function normalizeChannelName(raw: string): string | undefined {
  const name = raw.trim().toLowerCase().replace(/\s+/gu, '-');
  return CHANNEL_NAME_PATTERN.test(name) ? name : undefined;
}

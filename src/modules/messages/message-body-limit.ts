import { MessageLimits } from './message-limits.js';

/**
 * The largest JSON body a message payload needs (webhook execute and edit), derived from the
 * message limits instead of the general body limit, so a route that parses before anything
 * else can only be made to read what a real message could be (issue #21 §1).
 *
 * Worst case, as client libraries really encode:
 *  - every text code point as a JSON escape of a surrogate pair (`\ud83d\ude00`, 12 bytes),
 *    which is what Python's json.dumps (discord.py, ensure_ascii) writes for an emoji: content,
 *    username and the 6000 code points shared by all embeds' texts;
 *  - every URL (an embed's url, image, thumbnail, author url and icon, footer icon; the avatar)
 *    at its 2048-character limit with every character escaped as `\/` would be (2 bytes);
 *  - 64 bytes of keys and punctuation per field, embed and nested object;
 * then half as much again, for keys Discord clients send that we ignore (`tts`, `nonce`,
 * `allowed_mentions`, `components`…) and pretty-printing.
 */
export function messageBodyLimit(): number {
  const textCodePoints = MessageLimits.content + MessageLimits.username + MessageLimits.embedTotal;
  const urlsPerEmbed = 6;
  const urls = MessageLimits.embeds * urlsPerEmbed + 1;
  const objects = MessageLimits.embeds * (MessageLimits.fields + 5) + 1;
  const worst = textCodePoints * 12 + urls * MessageLimits.url * 2 + objects * 64;
  return Math.ceil((worst * 1.5) / 1024) * 1024;
}

/** messageBodyLimit(), computed once: 537 KiB with today's limits. */
export const MESSAGE_BODY_LIMIT = messageBodyLimit();

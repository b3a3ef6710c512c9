import { presentMessage, type MessageResource } from '../resources/resources.js';
import type { Embed } from '../messages/embed.js';
import type { AttachmentResource } from '../files/files.service.js';
import type { WebhookMessage } from '../messages/messages.js';

/**
 * A webhook's message as the webhook URL routes return it: Discord's message object
 * (resources.ts presentMessage), authored by the webhook. Webhook messages never mention anyone
 * (SPEC §2.10): "@everyone", "@here" and <@id> stay literal text, so `mentions` is always empty
 * and `mention_everyone` always false. Tested by test/http/webhook-messages.test.ts and
 * test/http/discord-wire.test.ts.
 */
export type WebhookMessageRecord = MessageResource;

/** Embeds as stored (JSON text) or already parsed; unreadable JSON reads as none. */
export function embedsOf(embeds: Embed[] | string): Embed[] {
  if (typeof embeds !== 'string') return embeds;
  try {
    const parsed: unknown = JSON.parse(embeds);
    return Array.isArray(parsed) ? (parsed as Embed[]) : [];
  } catch {
    return [];
  }
}

/** `attachments`: the message's files with signed URLs (files.service.ts presentFiles); none when absent. */
export function presentWebhookMessage(m: WebhookMessage, attachments?: AttachmentResource[]): WebhookMessageRecord {
  return presentMessage({
    id: m.id,
    channelId: m.channelId,
    content: m.content,
    embeds: embedsOf(m.embeds),
    // The author id is the webhook id (Discord's convention; issue #5); the name and avatar are
    // the ones shown for this message. A webhook author has no display name (Discord's null).
    author: { id: m.webhookId, username: m.authorName, name: null, avatarUrl: m.authorAvatarUrl, bot: true },
    webhookId: m.webhookId,
    applicationId: m.applicationId,
    createdAt: m.createdAt,
    editedAt: m.editedAt,
    ...(attachments && attachments.length > 0 ? { attachments } : {}),
  });
}

import type { Acting, WebhookActor } from '../../core/acting.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { messageIsEmpty, type Embed } from '../messages/embed.js';
import { discardFiles, filesOfMessages, presentFiles, receiveUpload, settleMessageFiles, type Upload } from '../files/files.service.js';
import { parseMessagePayload } from '../messages/message-payload.js';
import { changeMessageOfWebhook, messageOfWebhook, removeMessageOfWebhook } from '../messages/messages.service.js';
import { embedsOf, presentWebhookMessage, type WebhookMessageRecord } from './webhook-message.js';
import { removeWebhook, updateWebhookSettings, type WebhookInput } from './webhooks.service.js';
import { presentWebhook, type Webhook, type WebhookRecord } from './webhooks.js';

/**
 * What the holder of a webhook URL may do besides executing it (issue #5 "Messages" and "The
 * webhook by token"). The webhook has been opened by execute.service.ts openWebhook: its token
 * checked and its bucket counted. What changes something takes the holder's acting context
 * (`{ kind: 'webhook', id }`, issue #37 §1), under which its events are emitted and audited.
 */

/** GET …/messages/{messageId}: only messages this webhook posted; anything else is 10008. */
export async function getWebhookMessage(deps: Deps, webhook: Webhook, messageId: string): Promise<WebhookMessageRecord> {
  const message = await messageOfWebhook(deps, webhook.id, messageId);
  if (!message) throw ApiErrors.unknownMessage();
  const files = (await filesOfMessages(deps, [message.id])).get(message.id) ?? [];
  return presentWebhookMessage(message, presentFiles(deps, files));
}

/**
 * PATCH …/messages/{messageId}: new content and/or embeds under the rules of execute; absent
 * fields stay, the name and avatar of the message never change, editedAt is set. The result may
 * not be empty (50006). Issue #42 §2: a multipart `upload` adds files; the payload's
 * `attachments`, when given, lists the files that stay (the others are removed once the edit is
 * stored); new files of a refused edit are removed at once.
 */
export async function editWebhookMessage(deps: Deps, acting: Acting<WebhookActor>, webhook: Webhook, messageId: string, body: unknown, upload?: Upload): Promise<WebhookMessageRecord> {
  const current = await messageOfWebhook(deps, webhook.id, messageId);
  if (!current) throw ApiErrors.unknownMessage();
  const received = upload === undefined ? undefined : await receiveUpload(deps, upload, { messageId: current.id, channelId: current.channelId });
  try {
    const payload = received === undefined ? body : received.body;
    // The files the message had before this request (the new ones' rows are already written).
    const fresh = new Set([...(received?.files.values() ?? [])].map((a) => a.id));
    const existing = ((await filesOfMessages(deps, [current.id])).get(current.id) ?? []).filter((a) => !fresh.has(a.id));
    const files = await settleMessageFiles(deps, payload, received?.files ?? new Map(), existing);
    const parsed = parseMessagePayload(payload ?? {}, { identityOverride: false, serviceName: deps.config.serviceName, partial: true, attachmentNames: files.names });
    // An edit of the files alone (discord.py's `edit(attachments=[])`) sends neither content nor embeds: not empty by itself.
    const filesOnly = !parsed.ok && parsed.error.code === 50006 && Array.isArray((payload as { attachments?: unknown } | null)?.attachments);
    if (!parsed.ok && !filesOnly) throw parsed.error;
    const { content, embeds } = parsed.ok ? parsed.value : {};
    // With one side absent, whether the edit empties the message depends on the stored other side (files count too).
    if (files.all.length === 0 && (content === undefined || embeds === undefined)) {
      if (messageIsEmpty(content ?? current.content, embeds ?? embedsOf(current.embeds))) throw ApiErrors.emptyMessage();
    }
    const changes: { content?: string; embeds?: Embed[]; editedAt: number } = { editedAt: deps.clock.now() };
    if (content !== undefined) changes.content = content;
    if (embeds !== undefined) changes.embeds = embeds;
    // Live views hear message.updated (messages.service.ts).
    const edited = await changeMessageOfWebhook(deps, acting, webhook, messageId, changes);
    if (!edited) throw ApiErrors.unknownMessage();
    await discardFiles(deps, files.dropped);
    return presentWebhookMessage(edited, presentFiles(deps, files.all));
  } catch (error) {
    if (received) await discardFiles(deps, [...received.files.values()]);
    throw error;
  }
}

/** DELETE …/messages/{messageId}: only messages this webhook posted (10008 otherwise). */
export async function deleteMessageOfWebhook(deps: Deps, acting: Acting<WebhookActor>, webhook: Webhook, messageId: string): Promise<void> {
  // Live views hear message.deleted (messages.service.ts); the webhook deleting its own is not audited.
  if (!(await removeMessageOfWebhook(deps, acting, webhook, messageId))) throw ApiErrors.unknownMessage();
}

/** GET /api/v1/webhooks/{id}/{token}: the record, without token or creator. */
export function webhookByToken(deps: Deps, webhook: Webhook): WebhookRecord {
  return presentWebhook(webhook, { baseUrl: deps.config.baseUrl });
}

/**
 * Reads PATCH /api/v1/webhooks/{id}/{token}'s body leniently: `name`, `avatarUrl` (alias
 * `avatar_url`); Discord's `avatar` (image data) cannot be stored here, so only `avatar: null`
 * (remove it) is understood, and image data is refused at `avatar` with what to send instead.
 */
function webhookInput(body: unknown): WebhookInput {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidField([], 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType');
  const raw = body as Record<string, unknown>;
  const input: WebhookInput = {};
  if (raw['name'] !== undefined && raw['name'] !== null) {
    if (typeof raw['name'] !== 'string') throw invalidField(['name'], 'BASE_TYPE_BAD_TYPE', 'Must be a string.');
    input.name = raw['name'];
  }
  const avatar = raw['avatarUrl'] !== undefined ? raw['avatarUrl'] : raw['avatar_url'];
  if (avatar !== undefined) {
    if (avatar !== null && typeof avatar !== 'string') throw invalidField(['avatarUrl'], 'BASE_TYPE_BAD_TYPE', 'Must be a string or null.');
    input.avatarUrl = avatar;
  }
  // Issue #42 §3: Discord's `avatar`, image data or null, checked and stored by updateWebhookSettings.
  if (raw['avatar'] !== undefined) input.avatar = raw['avatar'];
  return input;
}

/**
 * PATCH /api/v1/webhooks/{id}/{token}: rename (impersonation rule) or change the avatar. The
 * URL's holder is audited as the webhook itself (`webhook.updated`, actor_kind 'webhook').
 */
export async function updateWebhookByToken(deps: Deps, acting: Acting<WebhookActor>, webhook: Webhook, body: unknown): Promise<WebhookRecord> {
  const updated = await updateWebhookSettings(deps, acting, webhook, webhookInput(body));
  return presentWebhook(updated, { baseUrl: deps.config.baseUrl });
}

/**
 * DELETE /api/v1/webhooks/{id}/{token}: every later call on this id answers 404 10015; its
 * messages stay. Audited as the webhook deleting itself (`webhook.deleted`).
 */
export async function deleteWebhookByToken(deps: Deps, acting: Acting<WebhookActor>, webhook: Webhook): Promise<void> {
  await removeWebhook(deps, acting, webhook);
}

import { actingAs, type Acting, type Who } from '../../core/acting.js';
import { ApiError, ApiErrors, invalidField, RateLimitedError } from '../../core/errors.js';
import { hashSecret, matchesHash } from '../../core/secrets.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { Permission } from '../../core/permissions.js';
import { authorize } from '../directory/access.service.js';
import { getChannel } from '../directory/channels.service.js';
import { discardFiles, filesOfMessages, presentFiles, receiveUpload, settleMessageFiles, type Attachment, type MessageFiles, type Upload } from '../files/files.service.js';
import { readUser } from '../directory/guilds.service.js';
import { deleteInteractionMessage, editEphemeralMessage, editInteractionMessage, postEphemeralMessage, postInteractionMessage, readEphemeralMessage, readInteractionMessage, removeEphemeralMessage, type InteractionMessage } from '../messages/interaction-messages.service.js';
import { parseMessagePayload } from '../messages/message-payload.js';
import { withInteraction, type InteractionMessageResource } from '../messages/interaction-metadata.js';
import { presentMessage } from '../resources/resources.js';
import { embedsOf } from '../webhooks/webhook-message.js';
import type { RateLimitInfo } from '../webhooks/execute.service.js';
import { bucketHash, INVALID_REQUEST_RULE, invalidRequestBucketKey } from '../webhooks/webhook-rate-limit.js';
import { acknowledgeInteraction, findInteraction, findInteractionByTokenHash, insertInteraction, setOriginalMessage, type StoredInteraction } from './interactions.repository.js';

export type { StoredInteraction };
import { CallbackType, checkAnswer, EPHEMERAL, FOLLOWUP_RULE, followupBucketKey, InteractionType, INTERACTION_TOKEN_PREFIX, INTERACTION_TOKEN_TTL_MS, type CheckedAnswer } from './interactions.js';

/**
 * What an app does with an interaction after it was sent (issue #40 §2): answer it once (in the
 * response body, or by POST …/interactions/{id}/{token}/callback), then for 15 minutes post
 * follow-ups and read, edit or delete its answer (`@original`) and follow-ups through
 * …/webhooks/{application_id}/{token}. The token is the only credential (Discord: no bot token
 * needed) and is kept as a SHA-256 hash in the database, so any instance answers for it.
 */

/** A new interaction token: Discord's prefix (base64 of "interaction:") and 64 random bytes. */
export function newInteractionToken(deps: Deps): { plain: string; hash: string } {
  const plain = `${INTERACTION_TOKEN_PREFIX}${deps.random.bytes(64).toString('base64url')}`;
  return { plain, hash: hashSecret(plain) };
}

/** Stores the interaction before it is sent, so an answer by callback or a follow-up finds it on any instance. */
export async function recordInteraction(
  deps: Deps,
  row: { id: string; tokenHash: string; applicationId: string; botUserId: string; channelId: string; userId: string; commandName: string },
): Promise<void> {
  const now = deps.clock.now();
  await insertInteraction(deps.db, { ...row, createdAt: now, expiresAt: now + INTERACTION_TOKEN_TTL_MS });
}

/** An opened interaction token, or the error to answer, with the bucket for the X-RateLimit-* headers. */
export type InteractionGate = { ok: true; interaction: StoredInteraction; limit: RateLimitInfo } | { ok: false; error: Error; limit: RateLimitInfo };

/**
 * Checks `applicationId` and the interaction token of a follow-up route, and counts the request.
 * Discord's answers: a token that names no interaction, or another app's, 404 Unknown Webhook
 * (10015); an expired one 401 Invalid Webhook Token (50027). Those spend their client address's
 * bucket (as a webhook URL's do, webhook-rate-limit.ts); a valid one spends the app's bucket in
 * the interaction's channel (FOLLOWUP_RULE).
 */
export async function openInteractionToken(deps: Deps, applicationId: string, token: string, clientAddress: string): Promise<InteractionGate> {
  const found = isSnowflake(applicationId) && token.startsWith(INTERACTION_TOKEN_PREFIX) ? await findInteractionByTokenHash(deps.db, hashSecret(token)) : undefined;
  const now = deps.clock.now();
  // Discord: a follow-up to another app's interaction is refused as an unknown webhook.
  const error = found === undefined || found.applicationId !== applicationId ? ApiErrors.unknownWebhook() : found.expiresAt <= now ? ApiErrors.invalidWebhookToken() : undefined;
  if (error !== undefined || found === undefined) {
    const decision = await deps.buckets.take(invalidRequestBucketKey(clientAddress), INVALID_REQUEST_RULE, now);
    const limit: RateLimitInfo = { decision, bucket: bucketHash('address', clientAddress), scope: 'user' };
    return { ok: false, error: decision.allowed ? (error ?? ApiErrors.unknownWebhook()) : new RateLimitedError(decision.resetAfterMs), limit };
  }
  const key = followupBucketKey(found.applicationId, found.channelId);
  const decision = await deps.buckets.take(key, FOLLOWUP_RULE, now);
  const limit: RateLimitInfo = { decision, bucket: bucketHash('webhook', key), scope: 'shared' };
  if (!decision.allowed) return { ok: false, error: new RateLimitedError(decision.resetAfterMs), limit };
  return { ok: true, interaction: found, limit };
}

/** Discord: a second answer to one interaction. */
export function alreadyAcknowledged(): ApiError {
  return new ApiError(400, 40060, 'Interaction has already been acknowledged.');
}

/** Discord: the callback route's answer for an unknown or expired interaction. */
function unknownInteraction(): ApiError {
  return new ApiError(404, 10062, 'Unknown interaction');
}

function botActingOf(acting: Acting<Who>, interaction: StoredInteraction) {
  return actingAs(acting, { kind: 'bot', id: interaction.botUserId, applicationId: interaction.applicationId } as const);
}

/** What became of an answer: a message (type 4) or a deferral's placeholder (type 5), public or ephemeral. */
export type AnswerResult = { kind: 'posted' | 'deferred'; message: InteractionMessage };

/**
 * Uses a checked answer of type 4 or 5, once (the first of the response body and the callback
 * route wins; the other is 40060). Type 4 posts the bot's message; type 5 posts its placeholder
 * with Discord's flag LOADING. With flag 64 either is ephemeral: stored for the invoker alone
 * (postEphemeralMessage) and still the interaction's `@original`. Each records who used which command.
 */
export async function useAnswer(deps: Deps, acting: Acting<Who>, interaction: StoredInteraction, answer: Exclude<CheckedAnswer, { kind: 'invalid' }>): Promise<AnswerResult> {
  if (!(await acknowledgeInteraction(deps.db, interaction.id, answer.ephemeral))) throw alreadyAcknowledged();
  const body = answer.kind === 'message' ? { content: answer.content, embeds: answer.embeds, loading: false } : { content: '', embeds: [], loading: true };
  const message = answer.ephemeral
    ? await postEphemeralMessage(deps, botActingOf(acting, interaction), interaction.channelId, interaction.userId, body, interaction.id)
    : await postInteractionMessage(deps, botActingOf(acting, interaction), interaction.channelId, body, interactionOf(interaction));
  await setOriginalMessage(deps.db, interaction.id, message.message.id);
  return { kind: answer.kind === 'message' ? 'posted' : 'deferred', message };
}

/** What a public message of the interaction records of it: who used which command. */
function interactionOf(interaction: StoredInteraction) {
  return { interactionId: interaction.id, type: InteractionType.APPLICATION_COMMAND, userId: interaction.userId, commandName: interaction.commandName };
}

/**
 * POST /api/v1/interactions/{id}/{token}/callback (Discord's "Create Interaction Response"): the
 * answer sent by HTTP instead of in the response body, under the rules of checkAnswer. Unknown
 * or expired: 404 10062; answered already: 400 40060; an invalid answer: 50035 naming why.
 */
export async function answerByCallback(deps: Deps, acting: Acting<Who>, interactionId: string, token: string, body: unknown, clientAddress: string, onLimit: (limit: RateLimitInfo) => void): Promise<CallbackAnswer> {
  const found = isSnowflake(interactionId) ? await findInteraction(deps.db, interactionId) : undefined;
  const now = deps.clock.now();
  // Hashes compared in constant time (DESIGN §3).
  const interaction = found && token.startsWith(INTERACTION_TOKEN_PREFIX) && matchesHash(token, found.tokenHash) && found.expiresAt > now ? found : undefined;
  // The same buckets as the follow-up routes: the app's in that channel, or the address's for a wrong token.
  const [key, rule, bucket, scope] = interaction
    ? ([followupBucketKey(interaction.applicationId, interaction.channelId), FOLLOWUP_RULE, bucketHash('webhook', followupBucketKey(interaction.applicationId, interaction.channelId)), 'shared'] as const)
    : ([invalidRequestBucketKey(clientAddress), INVALID_REQUEST_RULE, bucketHash('address', clientAddress), 'user'] as const);
  const decision = await deps.buckets.take(key, rule, now);
  onLimit({ decision, bucket, scope });
  if (!decision.allowed) throw new RateLimitedError(decision.resetAfterMs);
  if (!interaction) throw unknownInteraction();
  if (interaction.acknowledged) throw alreadyAcknowledged();
  const checked = checkAnswer(200, Buffer.from(JSON.stringify(body ?? null)), deps.config.serviceName);
  if (checked.kind === 'invalid') throw invalidField(['type'], 'INTERACTION_RESPONSE_INVALID', `The answer was refused: ${checked.reason}.`);
  const used = await useAnswer(deps, acting, interaction, checked);
  return { interaction, callbackType: checked.kind === 'message' ? CallbackType.CHANNEL_MESSAGE_WITH_SOURCE : CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, used };
}

/** What answerByCallback did: the interaction, the answer's callback type (4 or 5) and what became of it. */
export interface CallbackAnswer {
  interaction: StoredInteraction;
  callbackType: number;
  used: AnswerResult;
}

/** Discord's interaction callback response (`with_response=true`). */
export interface InteractionCallbackResponse {
  interaction: { id: string; type: number; response_message_id: string; response_message_loading: boolean; response_message_ephemeral: boolean };
  resource: { type: number; message: InteractionMessageResource };
}

/**
 * Discord's interaction callback response object, the callback route's answer with
 * `with_response=true`: the interaction, whether its answer is "thinking" or ephemeral, and the
 * message it posted (an ephemeral one with flag 64).
 */
export async function presentCallbackResponse(deps: Deps, answered: CallbackAnswer): Promise<InteractionCallbackResponse> {
  const { interaction, callbackType, used } = answered;
  const presented = await presentInteractionMessage(deps, interaction, used.message);
  return {
    interaction: {
      id: interaction.id,
      type: InteractionType.APPLICATION_COMMAND,
      response_message_id: presented.id,
      response_message_loading: used.kind === 'deferred',
      response_message_ephemeral: used.message.ephemeral,
    },
    resource: { type: callbackType, message: presented },
  };
}

/**
 * Discord's message object of an interaction message: type 20 (CHAT_INPUT_COMMAND), authored by
 * the bot, `webhook_id` the application, flag LOADING while a deferred answer waits, and who used
 * which command as `interaction_metadata` and the older `interaction`.
 */
async function presentInteractionMessage(deps: Deps, interaction: StoredInteraction, stored: InteractionMessage, files?: readonly Attachment[]): Promise<InteractionMessageResource> {
  const { message, interaction: of } = stored;
  const author = await readUser(deps, message.authorId);
  // Issue #42 §3: its files, with fresh signed URLs (the caller passes those it just settled).
  const attachments = presentFiles(deps, files ?? (await filesOfMessages(deps, [message.id])).get(message.id) ?? []);
  const base = presentMessage({
    id: message.id,
    channelId: message.channelId,
    content: message.content,
    embeds: embedsOf(message.embeds),
    attachments,
    author: { id: message.authorId, username: message.user?.name ?? '', name: null, avatarUrl: message.user?.avatarUrl ?? null, bot: true },
    webhookId: interaction.applicationId,
    applicationId: interaction.applicationId,
    createdAt: message.createdAt,
    editedAt: message.editedAt,
  });
  const presented = { ...withInteraction(base, of, interaction.applicationId), author };
  // Discord's flag EPHEMERAL (64), beside LOADING (128) while an ephemeral deferral thinks.
  return stored.ephemeral ? { ...presented, flags: presented.flags | EPHEMERAL } : presented;
}

export type { InteractionMessageResource };

/** The interaction's message `messageId` (or `@original`): only messages of this interaction. */
async function messageOfInteraction(deps: Deps, interaction: StoredInteraction, messageId: string): Promise<InteractionMessage> {
  const id = messageId === '@original' ? interaction.originalMessageId : isSnowflake(messageId) ? messageId : null;
  if (id === null) throw ApiErrors.unknownMessage();
  const stored = (await readInteractionMessage(deps, interaction.channelId, id)) ?? (await readEphemeralMessage(deps, id));
  if (!stored || stored.interaction.interactionId !== interaction.id) throw ApiErrors.unknownMessage();
  return stored;
}

/**
 * Issue #42 §2: a follow-up or edit with files. The app's bot posts under its own rights here
 * (View channel and Send messages, interaction-messages.service.ts), so files also need Attach
 * files in a server channel, as on its REST post (bot-messages.service.ts), checked before a byte
 * of them is stored (403 50013). A DM has no such permission (Discord: allowed).
 */
async function requireMayAttach(deps: Deps, acting: Acting<Who>, interaction: StoredInteraction): Promise<void> {
  const channel = await getChannel(deps, interaction.channelId);
  if (!channel) throw ApiErrors.unknownChannel();
  if (channel.serverId === null) return;
  await authorize(deps, botActingOf(acting, interaction).actor, channel.serverId, { all: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.ATTACH_FILES }, ApiErrors.unknownChannel);
}

/**
 * POST /api/v1/webhooks/{application_id}/{token}: a follow-up message, under the rules of webhook
 * execute (content ≤ 2000, embeds, mentions stay literal), posted by the app's bot. Discord answers
 * an interaction follow-up with the message whatever `wait` says. With flag 64 it is ephemeral,
 * for the person who used the command alone (postEphemeralMessage). `upload` (multipart/form-data,
 * issue #42 §2): files[n], payload_json and attachments as webhook execute takes them; the files
 * are stored first and removed again if the message is not.
 */
export async function postFollowup(deps: Deps, acting: Acting<Who>, interaction: StoredInteraction, body: unknown, upload?: Upload): Promise<InteractionMessageResource> {
  if (upload === undefined) return storeFollowup(deps, acting, interaction, body, deps.ids.next(), undefined);
  await requireMayAttach(deps, acting, interaction);
  const id = deps.ids.next();
  const received = await receiveUpload(deps, upload, { messageId: id, channelId: interaction.channelId });
  try {
    const files = await settleMessageFiles(deps, received.body, received.files);
    return await storeFollowup(deps, acting, interaction, received.body, id, files);
  } catch (error) {
    await discardFiles(deps, [...received.files.values()]);
    throw error;
  }
}

async function storeFollowup(deps: Deps, acting: Acting<Who>, interaction: StoredInteraction, body: unknown, id: string, files: MessageFiles | undefined): Promise<InteractionMessageResource> {
  const options = { identityOverride: false, serviceName: deps.config.serviceName } as const;
  const parsed = parseMessagePayload(body ?? {}, files === undefined ? options : { ...options, attachmentNames: files.names });
  if (!parsed.ok) throw parsed.error;
  const flags = (body as { flags?: unknown } | null)?.flags;
  const content = { content: parsed.value.content ?? '', embeds: parsed.value.embeds ?? [], loading: false };
  // Discord: flag 64 makes a follow-up ephemeral, for the person who used the command alone.
  const stored =
    typeof flags === 'number' && (flags & EPHEMERAL) !== 0
      ? await postEphemeralMessage(deps, botActingOf(acting, interaction), interaction.channelId, interaction.userId, content, interaction.id, id)
      : await postInteractionMessage(deps, botActingOf(acting, interaction), interaction.channelId, content, interactionOf(interaction), id);
  return presentInteractionMessage(deps, interaction, stored, files?.all);
}

/** GET …/messages/@original or …/messages/{id}. */
export async function getInteractionMessage(deps: Deps, interaction: StoredInteraction, messageId: string): Promise<InteractionMessageResource> {
  return presentInteractionMessage(deps, interaction, await messageOfInteraction(deps, interaction, messageId));
}

/**
 * PATCH …/messages/@original or …/messages/{id}: content and/or embeds under the rules of a
 * webhook message edit. Filling a deferred answer's placeholder ends "thinking" and is not an
 * edit. An ephemeral message is edited in its own store, for its one reader.
 * `upload` (issue #42 §2) adds files as a webhook message edit does: the payload's
 * `attachments`, when given, lists the files that stay; new files of a refused edit are removed.
 */
export async function editInteractionMessageOf(deps: Deps, acting: Acting<Who>, interaction: StoredInteraction, messageId: string, body: unknown, upload?: Upload): Promise<InteractionMessageResource> {
  const current = await messageOfInteraction(deps, interaction, messageId);
  if (upload !== undefined) await requireMayAttach(deps, acting, interaction);
  const received = upload === undefined ? undefined : await receiveUpload(deps, upload, { messageId: current.message.id, channelId: interaction.channelId });
  try {
    const payload = received === undefined ? body : received.body;
    // The files the message had before this request (the new ones' rows are already written).
    const fresh = new Set([...(received?.files.values() ?? [])].map((a) => a.id));
    const existing = ((await filesOfMessages(deps, [current.message.id])).get(current.message.id) ?? []).filter((a) => !fresh.has(a.id));
    const files = await settleMessageFiles(deps, payload, received?.files ?? new Map(), existing);
    const parsed = parseMessagePayload(payload ?? {}, { identityOverride: false, serviceName: deps.config.serviceName, partial: true, attachmentNames: files.names });
    // An edit of the files alone sends neither content nor embeds: not empty by itself (as webhook-messages.service.ts).
    const filesOnly = !parsed.ok && parsed.error.code === 50006 && Array.isArray((payload as { attachments?: unknown } | null)?.attachments);
    if (!parsed.ok && !filesOnly) throw parsed.error;
    const value = parsed.ok ? parsed.value : {};
    const changes = { ...(value.content !== undefined ? { content: value.content } : {}), ...(value.embeds !== undefined ? { embeds: value.embeds } : {}) };
    // A placeholder has nothing yet: filling it must leave something to show (Discord's 50006); files count.
    const after = { content: changes.content ?? current.message.content, embeds: changes.embeds ?? embedsOf(current.message.embeds) };
    if (after.content.trim() === '' && after.embeds.length === 0 && files.all.length === 0) throw ApiErrors.emptyMessage();
    const bot = botActingOf(acting, interaction);
    const edited = current.ephemeral ? await editEphemeralMessage(deps, bot, current.message.id, changes) : await editInteractionMessage(deps, bot, interaction.channelId, current.message.id, changes);
    if (!edited) throw ApiErrors.unknownMessage();
    await discardFiles(deps, files.dropped);
    return presentInteractionMessage(deps, interaction, edited, files.all);
  } catch (error) {
    if (received) await discardFiles(deps, [...received.files.values()]);
    throw error;
  }
}

/** DELETE …/messages/@original or …/messages/{id}. */
export async function deleteInteractionMessageOf(deps: Deps, acting: Acting<Who>, interaction: StoredInteraction, messageId: string): Promise<void> {
  const current = await messageOfInteraction(deps, interaction, messageId);
  const bot = botActingOf(acting, interaction);
  const deleted = current.ephemeral ? await removeEphemeralMessage(deps, bot, current.message.id) : await deleteInteractionMessage(deps, bot, interaction.channelId, current.message.id);
  if (!deleted) throw ApiErrors.unknownMessage();
  if (current.message.id === interaction.originalMessageId) await setOriginalMessage(deps.db, interaction.id, null);
}

/** The interaction as stored now (after the app's endpoint answered: a callback may have answered first). */
export function interactionNow(deps: Deps, id: string): Promise<StoredInteraction | undefined> {
  return findInteraction(deps.db, id);
}

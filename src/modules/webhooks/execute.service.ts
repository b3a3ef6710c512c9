import type { Acting, WebhookActor } from '../../core/acting.js';
import { ApiError, ApiErrors, invalidField, RateLimitedError } from '../../core/errors.js';
import { matchesHash } from '../../core/secrets.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { BucketDecision } from '../../rate-limit/bucket.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { discardFiles, presentFiles, receiveUpload, settleMessageFiles, type MessageFiles, type Upload } from '../files/files.service.js';
import { parseMessagePayload } from '../messages/message-payload.js';
import { storeWebhookMessage } from '../messages/messages.service.js';
import { presentWebhookMessage, type WebhookMessageRecord } from './webhook-message.js';
import { bucketHash, INVALID_REQUEST_RULE, invalidRequestBucketKey, WEBHOOK_RULE, webhookBucketKey } from './webhook-rate-limit.js';
import { confirmedWebhook, executeGateWebhook, forgetWebhook } from './execute.repository.js';
import { findWebhook } from './webhooks.repository.js';
import type { Webhook } from './webhooks.js';

/**
 * The webhook URL (issue #5 "Execute"; SPEC §5.7: authorised by the token in the path). This is
 * the service's hottest path (DESIGN §5): one indexed lookup, a constant-time token check, one
 * bucket operation, then one insert. On PostgreSQL the lookup is a per-instance hint and the
 * insert checks the token again, shared by the executes of one turn (execute.repository.ts).
 */

/** Which bucket answered, for the X-RateLimit-* headers of every answer. */
export interface RateLimitInfo {
  decision: BucketDecision;
  /** X-RateLimit-Bucket. */
  bucket: string;
  /** X-RateLimit-Scope of a 429: the webhook's shared bucket, or one client address's. */
  scope: 'shared' | 'user';
}

/** The outcome of opening a webhook URL: the webhook, or the error to answer, with its bucket. */
export type WebhookGate = { ok: true; webhook: Webhook; limit: RateLimitInfo } | { ok: false; error: Error; limit: RateLimitInfo };

/**
 * Issue #36 §2: a webhook with a GitHub secret posts, edits and deletes messages only through
 * signed GitHub deliveries, so its URL alone cannot forge one (docs/webhooks.md "GitHub secret").
 */
export function signedDeliveriesOnly(): ApiError {
  return new ApiError(
    403,
    50013,
    'This webhook accepts only signed GitHub deliveries: it has a GitHub secret, so its messages are posted through …/github with a valid X-Hub-Signature-256 and cannot be posted, edited or deleted through this route.',
  );
}

/** Whether a route of the webhook URL writes messages without a GitHub signature (execute, /slack, message edit and delete). */
export type WebhookWrite = 'unsigned' | 'signed';

/**
 * Checks a webhook URL and counts the request. Unknown (or deleted) ids → 404 10015; a wrong
 * token → 401 50027 (SPEC §3: a regenerated token's old URL is invalid). Those two spend their
 * client address's bucket, never the webhook's, so nobody can exhaust a webhook they cannot
 * use; a valid URL spends the webhook's bucket (SPEC §8: 10 per 2 s). Over either → 429.
 * `writes: 'unsigned'` marks a route that writes messages without a signature: 403 when the
 * webhook has a GitHub secret (issue #36 §2), before the body is read.
 */
export async function openWebhook(
  deps: Deps,
  id: string,
  token: string,
  clientAddress: string,
  use: 'record' | 'execute' = 'record',
  writes: WebhookWrite | 'none' = 'none',
): Promise<WebhookGate> {
  // Execute only: the webhook the repository lets the gate check, a hint where the insert checks
  // the token again in the same statement (messages/webhook-message.repository.ts).
  const webhook = isSnowflake(id) ? await (use === 'execute' ? executeGateWebhook(deps.db, id, token) : findWebhook(deps.db, id)) : undefined;
  // Hash comparison in constant time (DESIGN §3); the stored side is the only copy of the token.
  if (webhook === undefined || !matchesHash(token, webhook.tokenHash)) {
    const decision = await deps.buckets.take(invalidRequestBucketKey(clientAddress), INVALID_REQUEST_RULE, deps.clock.now());
    const limit: RateLimitInfo = { decision, bucket: bucketHash('address', clientAddress), scope: 'user' };
    if (!decision.allowed) return { ok: false, error: new RateLimitedError(decision.resetAfterMs), limit };
    return { ok: false, error: webhook === undefined ? ApiErrors.unknownWebhook() : ApiErrors.invalidWebhookToken(), limit };
  }
  const decision = await deps.buckets.take(webhookBucketKey(webhook.id), WEBHOOK_RULE, deps.clock.now());
  const limit: RateLimitInfo = { decision, bucket: bucketHash('webhook', webhook.id), scope: 'shared' };
  if (!decision.allowed) return { ok: false, error: new RateLimitedError(decision.resetAfterMs), limit };
  if (writes === 'unsigned' && webhook.githubSecretSealed !== null) {
    // A hint may predate the secret's removal: the database has the last word (a hint without a
    // secret is checked again by the insert, messages/webhook-message.repository.ts).
    const current = await confirmedWebhook(deps.db, webhook);
    if (current === undefined) return { ok: false, error: ApiErrors.unknownWebhook(), limit };
    // A row read now is checked as the gate checked the hint; the same row was checked already.
    if (current !== webhook && !matchesHash(token, current.tokenHash)) return { ok: false, error: ApiErrors.invalidWebhookToken(), limit };
    if (current.githubSecretSealed !== null) return { ok: false, error: signedDeliveriesOnly(), limit };
    return { ok: true, webhook: current, limit };
  }
  return { ok: true, webhook, limit };
}

const TRUE_VALUES = new Set(['true', '1', 'True']);
const BOOLEAN_VALUES = new Set(['true', 'false', '1', '0', 'True', 'False']);

/**
 * The `wait` query flag (DESIGN §1: true/false/1/0/True/False). Absent is false; anything else,
 * or the flag given twice, is a 50035 at `wait`.
 */
export function parseWait(raw: unknown): boolean {
  if (raw === undefined) return false;
  if (typeof raw === 'string' && BOOLEAN_VALUES.has(raw)) return TRUE_VALUES.has(raw);
  throw invalidField(['wait'], 'BOOLEAN_TYPE_COERCE', `Value "${String(raw)}" is not a valid boolean (use true or false).`);
}

/**
 * POST /api/v1/webhooks/{id}/{token}: posts a message in the webhook's channel under its name, or
 * the `username`/`avatarUrl` of this payload (SPEC §2.9). Mentions stay literal text and notify
 * nobody (SPEC §2.10). Returns the message record when `wait`, else nothing. `signed` only for a
 * GitHub delivery whose signature was checked: an unsigned message is refused when the webhook
 * has a GitHub secret (issue #36 §2). `acting` is the URL's holder (the webhook itself).
 * `upload`: a multipart body (issue #42 §2), whose files are stored before the message and
 * removed again if the message is not.
 */
export async function executeWebhook(
  deps: Deps,
  acting: Acting<WebhookActor>,
  webhook: Webhook,
  body: unknown,
  wait: boolean,
  writes: WebhookWrite = 'unsigned',
  upload?: Upload,
): Promise<WebhookMessageRecord | undefined> {
  if (upload !== undefined) return executeWithFiles(deps, acting, webhook, upload, wait, writes);
  return storeExecute(deps, acting, webhook, body, wait, writes, deps.ids.next(), undefined);
}

/** Issue #42 §2: files first (each streamed to the store), then the payload, then the message. */
async function executeWithFiles(deps: Deps, acting: Acting<WebhookActor>, webhook: Webhook, upload: Upload, wait: boolean, writes: WebhookWrite): Promise<WebhookMessageRecord | undefined> {
  const id = deps.ids.next();
  const received = await receiveUpload(deps, upload, { messageId: id, channelId: webhook.channelId });
  try {
    const files = await settleMessageFiles(deps, received.body, received.files);
    return await storeExecute(deps, acting, webhook, received.body, wait, writes, id, files);
  } catch (error) {
    // Refused (the payload, the token, a GitHub secret) or failed: nothing of it stays.
    await discardFiles(deps, [...received.files.values()]);
    throw error;
  }
}

async function storeExecute(
  deps: Deps,
  acting: Acting<WebhookActor>,
  webhook: Webhook,
  body: unknown,
  wait: boolean,
  writes: WebhookWrite,
  id: string,
  files: MessageFiles | undefined,
): Promise<WebhookMessageRecord | undefined> {
  // No body at all (no Content-Type) is an empty message, as at Discord.
  const parsed = parseMessagePayload(body ?? {}, files === undefined ? { identityOverride: true, serviceName: deps.config.serviceName } : { identityOverride: true, serviceName: deps.config.serviceName, attachmentNames: files.names });
  if (!parsed.ok) throw parsed.error;
  const payload = parsed.value;
  const message = {
    id,
    channelId: webhook.channelId,
    authorId: webhook.id,
    webhookId: webhook.id,
    applicationId: webhook.applicationId,
    authorName: payload.username ?? webhook.name,
    authorAvatarUrl: payload.avatarUrl ?? webhook.avatarUrl,
    content: payload.content ?? '',
    embeds: payload.embeds ?? [],
    createdAt: deps.clock.now(),
    // Already the stored message's shape, so `wait` presents it without copying it (DESIGN §5).
    editedAt: null,
  };
  // Where the database checks the token again in the same statement (PostgreSQL: the webhook may
  // have been deleted or its token regenerated, on any instance, since the gate saw it), a refusal
  // is answered from the row as it is now.
  if ((await storeWebhookMessage(deps, message, webhook.tokenHash, writes === 'signed', payload.username ?? null, payload.avatarUrl ?? null)) === false) {
    forgetWebhook(deps.db, webhook.id);
    const current = await findWebhook(deps.db, webhook.id);
    if (current === undefined) throw ApiErrors.unknownWebhook();
    if (current.tokenHash === webhook.tokenHash && current.githubSecretSealed !== null && writes === 'unsigned') throw signedDeliveriesOnly();
    throw ApiErrors.invalidWebhookToken();
  }
  // Issue #37 §2: message.created has listeners only (live views), so this delivers at once and
  // awaits a shared settled promise: no statement and no closure of its own on the hot path.
  await emitted(deps, acting, { type: 'message.created', serverId: webhook.serverId, channelId: message.channelId, messageId: message.id });
  if (!wait) return undefined;
  return files === undefined ? presentWebhookMessage(message) : presentWebhookMessage(message, presentFiles(deps, files.all));
}

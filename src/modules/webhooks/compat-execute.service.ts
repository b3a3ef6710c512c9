import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Acting, WebhookActor } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { DAY as DAY_MS } from '../../core/clock.js';
import { ApiError, invalidField } from '../../core/errors.js';
import { actorNameProblem } from '../../core/names.js';
import { open, seal, sealingKey } from '../../core/sealed.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import type { WebhookMessageRecord } from './webhook-message.js';
import { GITHUB_REPLAY_WINDOW_MS, GITHUB_SECRET_MAX } from './compat.js';
import { executeWebhook } from './execute.service.js';
import { renderGithubEvent } from './github-events.js';
import { forgetGithubDelivery, plainGithubSecrets, recordGithubDelivery, resealGithubSecret, saveGithubSecret, webhooksWithGithubSecret } from './github-secrets.repository.js';
import { mapSlackPayload, type MappedPayload } from './slack-payload.js';
import { getWebhookAs } from './webhooks.service.js';
import type { Webhook } from './webhooks.js';

/**
 * Slack- and GitHub-compatible execute (issue #23): each maps its sender's payload to the plain
 * execute payload and posts it through executeWebhook, so the limits, the impersonation rule and
 * the stored message are exactly those of POST /api/v1/webhooks/{id}/{token}. The routes share
 * that route's gate (token check and rate limit); nothing here runs on the plain route. Issue #36
 * §2: once a webhook has a GitHub secret, only signed, new GitHub deliveries post through it.
 */

/** POST …/{token}/slack: 400 (50006) with the reason when the payload maps to nothing. */
export async function executeSlackWebhook(deps: Deps, acting: Acting<WebhookActor>, webhook: Webhook, body: unknown, wait: boolean): Promise<WebhookMessageRecord | undefined> {
  const mapped = mapSlackPayload(body ?? {});
  if (!mapped.ok) throw new ApiError(400, 50006, mapped.message);
  return executeWebhook(deps, acting, webhook, mapped.payload, wait, 'unsigned');
}

/** What a GitHub delivery came to: a message posted (or not, with the reason GitHub's delivery log shows). */
export type GithubOutcome = { posted: true; message: WebhookMessageRecord | undefined } | { posted: false; reason: string };

export interface GithubDelivery {
  event: string | undefined;
  /** X-Hub-Signature-256 as sent. */
  signature: string | undefined;
  /** X-GitHub-Delivery as sent. */
  deliveryId: string | undefined;
  /** The body exactly as received: GitHub signs these bytes. */
  rawBody: string;
  body: unknown;
  wait: boolean;
}

/** The signature is missing or wrong while the webhook has a GitHub secret. */
function badSignature(detail: string): ApiError {
  return new ApiError(401, 50027, `Invalid GitHub signature: ${detail}. This webhook has a GitHub secret: set the same secret on the GitHub webhook.`);
}

/** X-GitHub-Delivery is a GUID (36 characters); printable ASCII up to this length is accepted. */
const DELIVERY_ID = /^[\x21-\x7e]{1,100}$/;

const GITHUB_SECRET_PURPOSE = 'webhook-github-secret';
/** How a secret set before sealing is stored until its first use (migration 2026-11-27-10). */
const PLAIN_PREFIX = 'plain:';

/** Seals a GitHub secret under the current server secret, bound to its webhook (DESIGN §4). */
function sealGithubSecret(deps: Deps, webhookId: string, secret: string): string {
  return seal(sealingKey(deps.secrets[0], GITHUB_SECRET_PURPOSE), deps.random.bytes(12), secret, webhookId);
}

/**
 * The webhook's GitHub secret in plain text, for one signature check; undefined when none is set,
 * null when it is set but opens with none of the server secrets (GATEHOUSE_SECRET replaced without
 * keeping the old one). A secret still in plain text, or sealed under an older server secret, is
 * sealed under the current one now (issue #36 §2: migrations never see the server secret).
 */
export async function githubSecretOf(deps: Deps, webhook: Pick<Webhook, 'id' | 'githubSecretSealed'>): Promise<string | null | undefined> {
  const stored = webhook.githubSecretSealed;
  if (stored === null) return undefined;
  if (stored.startsWith(PLAIN_PREFIX)) {
    const plain = stored.slice(PLAIN_PREFIX.length);
    await resealGithubSecret(deps.db, webhook.id, stored, sealGithubSecret(deps, webhook.id, plain));
    return plain;
  }
  for (const [index, serverSecret] of deps.secrets.entries()) {
    const plain = open(sealingKey(serverSecret, GITHUB_SECRET_PURPOSE), stored, webhook.id);
    if (plain === undefined) continue;
    if (index > 0) await resealGithubSecret(deps.db, webhook.id, stored, sealGithubSecret(deps, webhook.id, plain));
    return plain;
  }
  return null;
}

/**
 * X-Hub-Signature-256 = "sha256=" + hex HMAC-SHA256(secret, raw body)
 * (https://docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries), compared in
 * constant time (DESIGN §3).
 */
export function githubSignatureMatches(secret: string, rawBody: string, signature: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`);
  const presented = Buffer.from(signature);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/**
 * Issue #36 §2: the delivery is signed by the webhook's secret and new. Records it (delivery id
 * and body hash) for GITHUB_REPLAY_WINDOW_MS; a replay is 409 and posts nothing. Returns the
 * delivery id recorded.
 */
async function admitSignedDelivery(deps: Deps, webhook: Webhook, delivery: GithubDelivery): Promise<string> {
  const secret = await githubSecretOf(deps, webhook);
  if (secret === null) throw badSignature('the GitHub secret of this webhook can no longer be read because the server secret changed; set it again on the webhook\'s settings page');
  if (secret === undefined) throw new Error('admitSignedDelivery() called for a webhook without a GitHub secret');
  if (delivery.signature === undefined) throw badSignature('the X-Hub-Signature-256 header is missing');
  if (!githubSignatureMatches(secret, delivery.rawBody, delivery.signature)) throw badSignature('X-Hub-Signature-256 does not match the body');
  const deliveryId = delivery.deliveryId;
  if (deliveryId === undefined || !DELIVERY_ID.test(deliveryId)) {
    throw new ApiError(400, 0, 'The X-GitHub-Delivery header is missing or invalid (GitHub sends a GUID): a webhook with a GitHub secret checks every delivery against replays.');
  }
  const bodyHash = createHash('sha256').update(delivery.rawBody, 'utf8').digest('hex');
  if (!(await recordGithubDelivery(deps.db, { webhookId: webhook.id, deliveryId, bodyHash, expiresAt: deps.clock.now() + GITHUB_REPLAY_WINDOW_MS }))) {
    throw new ApiError(409, 0, `Replayed GitHub delivery: this webhook already received delivery ${deliveryId} or the same signed body within the last ${GITHUB_REPLAY_WINDOW_MS / DAY_MS} days. Nothing was posted.`);
  }
  return deliveryId;
}

/**
 * Embed author names follow the webhook name rule (docs/webhooks.md "Embeds"), but a GitHub
 * sender's login is chosen by whoever acts on the repository, not by the webhook's holder: a login
 * that fails the rule (`system`, one that passes for the service) drops the author line instead of
 * refusing a genuine delivery, which GitHub would show as failed and the event would be lost.
 */
function withoutImpersonatingAuthors(payload: MappedPayload, serviceName: string): MappedPayload {
  if (payload.embeds === undefined) return payload;
  const embeds = payload.embeds.map((e) => {
    if (e.author === undefined || actorNameProblem(e.author.name.trim(), serviceName) === undefined) return e;
    const { author: _dropped, ...rest } = e;
    return rest;
  });
  return { ...payload, embeds };
}

/**
 * POST …/{token}/github. With a GitHub secret set on the webhook, the signature must match (401
 * otherwise) and the delivery must be new (409 for a replay), else nothing is posted. Then the
 * event is rendered (github-events.ts) and posted, or answered without a message and the reason.
 */
export async function executeGithubWebhook(deps: Deps, acting: Acting<WebhookActor>, webhook: Webhook, delivery: GithubDelivery): Promise<GithubOutcome> {
  const deliveryId = webhook.githubSecretSealed === null ? undefined : await admitSignedDelivery(deps, webhook, delivery);
  try {
    const rendering = renderGithubEvent(delivery.event, delivery.body);
    if (!rendering.post) return { posted: false, reason: rendering.reason };
    const payload = withoutImpersonatingAuthors(rendering.payload, deps.config.serviceName);
    return { posted: true, message: await executeWebhook(deps, acting, webhook, payload, delivery.wait, 'signed') };
  } catch (error) {
    // Not posted: GitHub's "Redeliver" of this delivery must be able to post it.
    if (deliveryId !== undefined) await forgetGithubDelivery(deps.db, webhook.id, deliveryId);
    throw error;
  }
}

/**
 * Sets (a non-empty value) or removes (empty) a webhook's GitHub secret, sealed; from its settings
 * page. The acting person needs Manage webhooks in the webhook's server (SPEC §5.8; 404 10015 for
 * a webhook out of reach, 403 50013 without it). Audited as `webhook.updated` with the key
 * `github_secret` only: the audit log never holds the secret, sealed or not.
 */
export async function setGithubSecret(deps: Deps, acting: Acting<Actor>, webhookId: string, secret: string): Promise<void> {
  const webhook = await getWebhookAs(deps, acting.actor, webhookId);
  if ([...secret].length > GITHUB_SECRET_MAX) throw invalidField(['githubSecret'], 'BASE_TYPE_MAX_LENGTH', `The GitHub secret must be at most ${GITHUB_SECRET_MAX} characters.`);
  const sealed = secret === '' ? null : sealGithubSecret(deps, webhook.id, secret);
  await changing(deps, acting, async (trx, emit) => {
    await saveGithubSecret(trx, webhook.id, sealed);
    emit({ type: 'webhook.updated', serverId: webhook.serverId, webhookId: webhook.id, channelId: webhook.channelId, changes: [{ key: 'github_secret' }] });
  });
}

/**
 * Seals every GitHub secret still in plain text (carried over by migration 2026-11-27-10, which
 * cannot see the server secret); run when the app starts, so none waits for its first delivery.
 * Returns how many were sealed. Maintenance with no acting context and no event (issue #37 §1):
 * it stores the same secret in another form, so nobody changed anything an audit log could name,
 * as githubSecretOf's sealing at first use does not either.
 */
export async function sealPlainGithubSecrets(deps: Deps): Promise<number> {
  const plain = await plainGithubSecrets(deps.db);
  for (const webhook of plain) await githubSecretOf(deps, webhook);
  return plain.length;
}

/** Which of a server's webhooks have a GitHub secret, for the Integrations pages (never the secrets). */
export async function githubSecretsOfServer(deps: Deps, serverId: string): Promise<Set<string>> {
  return webhooksWithGithubSecret(deps.db, serverId);
}

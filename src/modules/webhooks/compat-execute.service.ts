import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError, invalidField } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import type { WebhookMessageRecord } from './webhook-message.js';
import { GITHUB_SECRET_MAX } from './compat.js';
import { executeWebhook } from './execute.service.js';
import { renderGithubEvent } from './github-events.js';
import { deleteGithubSecret, findGithubSecret, saveGithubSecret, webhooksWithGithubSecret } from './github-secrets.repository.js';
import { mapSlackPayload } from './slack-payload.js';
import type { Webhook } from './webhooks.js';

/**
 * Slack- and GitHub-compatible execute (issue #23): each maps its sender's payload to the plain
 * execute payload and posts it through executeWebhook, so the limits, the impersonation rule and
 * the stored message are exactly those of POST /api/v1/webhooks/{id}/{token}. The routes share
 * that route's gate (token check and rate limit); nothing here runs on the plain route.
 */

/** POST …/{token}/slack: 400 (50006) with the reason when the payload maps to nothing. */
export async function executeSlackWebhook(deps: Deps, webhook: Webhook, body: unknown, wait: boolean): Promise<WebhookMessageRecord | undefined> {
  const mapped = mapSlackPayload(body ?? {});
  if (!mapped.ok) throw new ApiError(400, 50006, mapped.message);
  return executeWebhook(deps, webhook, mapped.payload, wait);
}

/** What a GitHub delivery came to: a message posted (or not, with the reason GitHub's delivery log shows). */
export type GithubOutcome = { posted: true; message: WebhookMessageRecord | undefined } | { posted: false; reason: string };

export interface GithubDelivery {
  event: string | undefined;
  /** X-Hub-Signature-256 as sent. */
  signature: string | undefined;
  /** The body exactly as received: GitHub signs these bytes. */
  rawBody: string;
  body: unknown;
  wait: boolean;
}

/** The signature is missing or wrong while the webhook has a GitHub secret. */
function badSignature(detail: string): ApiError {
  return new ApiError(401, 50027, `Invalid GitHub signature: ${detail}. This webhook has a GitHub secret: set the same secret on the GitHub webhook.`);
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
 * POST …/{token}/github. With a GitHub secret set on the webhook, the signature must match (401
 * otherwise, nothing posted). Then the event is rendered (github-events.ts) and posted, or
 * answered without a message and the reason.
 */
export async function executeGithubWebhook(deps: Deps, webhook: Webhook, delivery: GithubDelivery): Promise<GithubOutcome> {
  const secret = await findGithubSecret(deps.db, webhook.id);
  if (secret !== undefined) {
    if (delivery.signature === undefined) throw badSignature('the X-Hub-Signature-256 header is missing');
    if (!githubSignatureMatches(secret, delivery.rawBody, delivery.signature)) throw badSignature('X-Hub-Signature-256 does not match the body');
  }
  const rendering = renderGithubEvent(delivery.event, delivery.body);
  if (!rendering.post) return { posted: false, reason: rendering.reason };
  return { posted: true, message: await executeWebhook(deps, webhook, rendering.payload, delivery.wait) };
}


/** Sets (a non-empty value) or removes (empty) a webhook's GitHub secret; from its settings page. */
export async function setGithubSecret(deps: Deps, webhook: Pick<Webhook, 'id'>, secret: string): Promise<void> {
  if (secret === '') return deleteGithubSecret(deps.db, webhook.id);
  if ([...secret].length > GITHUB_SECRET_MAX) throw invalidField(['githubSecret'], 'BASE_TYPE_MAX_LENGTH', `The GitHub secret must be at most ${GITHUB_SECRET_MAX} characters.`);
  await saveGithubSecret(deps.db, webhook.id, secret, deps.clock.now());
}

/** Which of a server's webhooks have a GitHub secret, for the Integrations pages (never the secrets). */
export async function githubSecretsOfServer(deps: Deps, serverId: string): Promise<Set<string>> {
  return webhooksWithGithubSecret(deps.db, serverId);
}

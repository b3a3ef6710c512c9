import type { Checked } from '../../core/checked.js';
import { actorNameProblem } from '../../core/names.js';

/**
 * Incoming webhooks as the domain sees them (SPEC §2.8), and their public record. Pure: no
 * Fastify, no Kysely.
 */

/** A webhook; the token itself is never kept, only its SHA-256 (DESIGN §2: secrets shown once). */
export interface Webhook {
  id: string;
  tokenHash: string;
  serverId: string;
  channelId: string;
  name: string;
  avatarUrl: string | null;
  /** The bot's application when a bot created it; null when a person did (SPEC §4). */
  applicationId: string | null;
  /** The user (person or bot account) who created it. */
  creatorId: string;
  createdAt: number;
  /**
   * The GitHub secret, sealed (never plain in memory longer than a check), or null. Issue #36 §2:
   * while set, the webhook's URL posts, edits and deletes messages only through signed GitHub
   * deliveries.
   */
  githubSecretSealed: string | null;
}

/** A webhook with its creator's display name, for the Integrations pages. */
export interface WebhookWithCreator extends Webhook {
  /** Null when the creator's account no longer exists. */
  creatorName: string | null;
  creatorIsBot: boolean;
}

/** SPEC §8: at most 10 webhooks per channel. */
export const WEBHOOKS_PER_CHANNEL = 10;
/** SPEC §2.8: a webhook name is 1–80 characters (code points) after trimming. */
export const WEBHOOK_NAME_MIN = 1;
export const WEBHOOK_NAME_MAX = 80;
export const WEBHOOK_AVATAR_URL_MAX = 2048;

// The JSON record of a webhook is Discord's webhook object (DESIGN §1), presented by the one
// presenter of resources.ts.
export { presentWebhook, webhookUrl, type WebhookResource as WebhookRecord } from '../resources/resources.js';

// Controls and line breaks: a name is one line of text next to an APP badge.
const CONTROL = /\p{Cc}/u;

/**
 * A webhook's name (SPEC §2.8): 1–80 characters (code points) after trimming, one line, and not
 * one that passes for the service (SPEC §7: the impersonation rule of messages/impersonation.ts,
 * the same one that judges a message's `username` override).
 */
export function checkWebhookName(raw: string, serviceName: string): Checked<string> {
  const value = raw.trim();
  const length = [...value].length;
  if (length < WEBHOOK_NAME_MIN || length > WEBHOOK_NAME_MAX) {
    return { ok: false, code: 'BASE_TYPE_BAD_LENGTH', message: `Must be between ${WEBHOOK_NAME_MIN} and ${WEBHOOK_NAME_MAX} in length.` };
  }
  if (CONTROL.test(value)) return { ok: false, code: 'BASE_TYPE_INVALID', message: 'Must be one line without control characters.' };
  // Issue #21 §4: invisible and text-direction characters too (core/names.ts).
  const problem = actorNameProblem(value, serviceName);
  if (problem !== undefined) return { ok: false, code: 'USERNAME_INVALID', message: problem.kind === 'invisible' ? problem.message : `${problem.message}.` };
  return { ok: true, value };
}

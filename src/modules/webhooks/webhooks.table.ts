import type { DbId, DbIdNullable, DbInt } from '../../storage/types.js';

/**
 * Incoming webhooks (SPEC §2.8): addressed by id + secret token, whose SHA-256 alone is kept.
 * Deleting a webhook deletes its row; its messages stay in the channel.
 */
export interface WebhooksTable {
  id: DbId;
  token_hash: string;
  server_id: DbId;
  channel_id: DbId;
  name: string;
  avatar_url: string | null;
  /** The bot's application when a bot created it; null when a person did. */
  application_id: DbIdNullable;
  /** The user (person or bot account) who created it. */
  creator_id: DbId;
  created_at: DbInt;
  /**
   * The webhook's GitHub secret (issue #23) sealed with the server secret (core/sealed.ts; issue
   * #36 §2), or null when it has none. An HMAC key must be read back, so it cannot be hashed like
   * the token. `plain:<secret>` for a secret set before sealing (migration 2026-11-27-10)
   * until the app starts and seals it. With a secret, the webhook accepts only signed GitHub deliveries.
   */
  github_secret_sealed: string | null;
}

/**
 * One signed GitHub delivery a webhook received (issue #36 §2), kept for the replay window
 * (GITHUB_REPLAY_WINDOW_MS) and pruned by storage/maintenance.ts once expired. Deleted with its webhook.
 */
export interface WebhookGithubDeliveriesTable {
  webhook_id: DbId;
  /** X-GitHub-Delivery as sent (a GUID at GitHub). */
  delivery_id: string;
  /** SHA-256 of the signed body, hex: the delivery id is not signed, so the body is what a replay repeats. */
  body_hash: string;
  /** Received at + GITHUB_REPLAY_WINDOW_MS: until then the same delivery is a replay. */
  expires_at: DbInt;
}

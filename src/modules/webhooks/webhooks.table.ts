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
}

/**
 * A webhook's optional GitHub secret (issue #23), which verifies X-Hub-Signature-256 on
 * POST …/{token}/github. Kept as the owner typed it, not hashed: an HMAC can only be checked with
 * the key itself (docs/webhooks.md "GitHub secret" says why that is acceptable). Deleted with its webhook.
 */
export interface WebhookGithubSecretsTable {
  webhook_id: DbId;
  secret: string;
  updated_at: DbInt;
}

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

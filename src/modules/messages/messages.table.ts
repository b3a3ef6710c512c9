import type { DbId, DbIdNullable, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * Messages in channels. A person's message has author_id = the person; a webhook's has
 * author_id = webhook id, webhook_id set, and the display name/avatar used for that message
 * (SPEC §2.9: username and avatarUrl override them for that message only).
 */
export interface MessagesTable {
  id: DbId;
  channel_id: DbId;
  author_id: DbId;
  webhook_id: DbIdNullable;
  application_id: DbIdNullable;
  author_name: string | null;
  author_avatar_url: string | null;
  content: string;
  /** JSON array of embed objects; '[]' when none. */
  embeds: string;
  created_at: DbInt;
  edited_at: DbIntNullable;
}

/** What each person has read of each channel (issue #24 unread state): the newest message id seen. */
export interface ChannelReadsTable {
  user_id: DbId;
  channel_id: DbId;
  last_read_id: DbId;
}

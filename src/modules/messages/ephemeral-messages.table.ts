import type { DbBool, DbId, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * Issue #40 §2: an app's ephemeral message (Discord's flag 64), for `recipient_id` alone (the
 * person who used the command), while its interaction's token can still edit it (15 minutes; the
 * interaction's purge removes it). Never part of `messages`: no read of a channel shows it to anyone else.
 */
export interface EphemeralMessagesTable {
  id: DbId;
  interaction_id: DbId;
  channel_id: DbId;
  recipient_id: DbId;
  /** The app's bot. */
  author_id: DbId;
  content: string;
  /** JSON array, as `messages.embeds`. */
  embeds: string;
  /** Discord's flag LOADING (128): an ephemeral deferral, "<App> is thinking…" until @original is edited. */
  loading: DbBool;
  created_at: DbInt;
  edited_at: DbIntNullable;
}

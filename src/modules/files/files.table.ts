import type { DbId, DbInt } from '../../storage/types.js';

/**
 * Issue #42: one row per file of a message (Discord's attachment object). `storage_key` names the
 * bytes in the blob store (the attachment's id: files are id-addressed, docs/files.md). No foreign
 * key to messages (partitioned on PostgreSQL): the files of a message that is gone are removed by
 * the maintenance job (storage/maintenance.ts sweepOrphanFiles).
 */
export interface AttachmentsTable {
  id: DbId;
  message_id: DbId;
  channel_id: DbId;
  filename: string;
  size: DbInt;
  /** The uploader's declared MIME type (sanitised), or null when it declared none. */
  content_type: string | null;
  /** Set only when the header bytes are a PNG, JPEG, GIF or WebP image. */
  width: number | null;
  height: number | null;
  description: string | null;
  storage_key: string;
  created_at: DbInt;
}

/**
 * What: the `attachments` rows (files.table.ts): a file's row is written before its bytes and its
 * message (files.service.ts), so that whatever an interrupted request leaves is found by the
 * maintenance job's sweep of rows whose message does not exist.
 * Invariant: reads by message use attachments_message; the sweep reads by created_at.
 * Tested: test/http/attachments.test.ts.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum } from '../../storage/types.js';
import type { Attachment } from './attachments.js';

type Db = Kysely<Database> | Transaction<Database>;

const columns = ['id', 'message_id', 'channel_id', 'filename', 'size', 'content_type', 'width', 'height', 'description', 'storage_key', 'created_at'] as const;

interface Row {
  id: string | bigint;
  message_id: string | bigint;
  channel_id: string | bigint;
  filename: string;
  size: number | bigint | string;
  content_type: string | null;
  width: number | null;
  height: number | null;
  description: string | null;
  storage_key: string;
  created_at: number | bigint | string;
}

function toAttachment(row: Row): Attachment {
  return {
    id: toId(row.id),
    messageId: toId(row.message_id),
    channelId: toId(row.channel_id),
    filename: row.filename,
    size: toNum(row.size),
    contentType: row.content_type,
    width: row.width === null ? null : Number(row.width),
    height: row.height === null ? null : Number(row.height),
    description: row.description,
    storageKey: row.storage_key,
    createdAt: toNum(row.created_at),
  };
}

export async function insertAttachment(db: Db, a: Attachment): Promise<void> {
  await db
    .insertInto('attachments')
    .values({
      id: a.id,
      message_id: a.messageId,
      channel_id: a.channelId,
      filename: a.filename,
      size: a.size,
      content_type: a.contentType,
      width: a.width,
      height: a.height,
      description: a.description,
      storage_key: a.storageKey,
      created_at: a.createdAt,
    })
    .execute();
}

/** What is known once the bytes are stored, or what the payload's `attachments` said (name, alt text). */
export async function updateAttachment(db: Db, id: string, changes: Partial<Pick<Attachment, 'size' | 'contentType' | 'width' | 'height' | 'filename' | 'description'>>): Promise<void> {
  const set: { size?: number; content_type?: string | null; width?: number | null; height?: number | null; filename?: string; description?: string | null } = {};
  if (changes.size !== undefined) set.size = changes.size;
  if (changes.contentType !== undefined) set.content_type = changes.contentType;
  if (changes.width !== undefined) set.width = changes.width;
  if (changes.height !== undefined) set.height = changes.height;
  if (changes.filename !== undefined) set.filename = changes.filename;
  if (changes.description !== undefined) set.description = changes.description;
  if (Object.keys(set).length === 0) return;
  await db.updateTable('attachments').set(set).where('id', '=', id).execute();
}

/** The files of these messages, in upload order. */
export async function listAttachmentsOf(db: Db, messageIds: readonly string[]): Promise<Attachment[]> {
  if (messageIds.length === 0) return [];
  const rows = await db.selectFrom('attachments').select(columns).where('message_id', 'in', messageIds).orderBy('id').execute();
  return rows.map(toAttachment);
}

/** A file of this channel, or undefined. */
export async function findAttachment(db: Db, channelId: string, id: string): Promise<Attachment | undefined> {
  const row = await db.selectFrom('attachments').select(columns).where('id', '=', id).where('channel_id', '=', channelId).executeTakeFirst();
  return row ? toAttachment(row) : undefined;
}

export async function deleteAttachmentRows(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('attachments').where('id', 'in', ids).execute();
}

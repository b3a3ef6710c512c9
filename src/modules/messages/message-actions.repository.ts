import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';

/** Editing and deleting one message of a channel by its id (message-actions.service.ts decides who may). */

/** Sets a message's content and edited time; false when it is gone. */
export async function updateMessageContent(db: Kysely<Database>, channelId: string, messageId: string, content: string, editedAt: number): Promise<boolean> {
  const result = await db.updateTable('messages').set({ content, edited_at: editedAt }).where('id', '=', messageId).where('channel_id', '=', channelId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes a message; false when it was already gone. */
export async function deleteMessageRow(db: Kysely<Database> | Transaction<Database>, channelId: string, messageId: string): Promise<boolean> {
  const result = await db.deleteFrom('messages').where('id', '=', messageId).where('channel_id', '=', channelId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

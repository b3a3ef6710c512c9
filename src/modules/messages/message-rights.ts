import type { MessageView } from './messages.js';

/**
 * Who may edit or delete a message (issue #24 "Writing"), as pure decisions the service enforces
 * and the pages follow when they offer Edit and Delete: an author edits and deletes their own
 * messages; Manage messages deletes anyone's (webhooks' and bots' included) and edits nobody
 * else's (Discord: 50005).
 */

/** What the viewer may do to messages of one conversation: theirs, and anyone's with Manage messages. */
export interface MessageRights {
  viewerId: string;
  /** Manage messages in the channel's server; never in a DM. */
  manageMessages: boolean;
}

export function mayEdit(rights: MessageRights, message: Pick<MessageView, 'author'>): boolean {
  return message.author.id === rights.viewerId;
}

/** An app's ephemeral message (issue #40 §2) is its app's to change: no moderator ever sees it. */
export function mayDelete(rights: MessageRights, message: Pick<MessageView, 'author' | 'ephemeral'>): boolean {
  return message.ephemeral !== true && (rights.manageMessages || message.author.id === rights.viewerId);
}

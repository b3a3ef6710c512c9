import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { AccessError, ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing, emitted } from '../../events/event-bus.js';
import type { Channel } from '../directory/channels.js';
import { getChannel } from '../directory/channels.service.js';
import { memberPermissions } from '../directory/servers.service.js';
import { findDmPair } from './dms.repository.js';
import { deleteMessageRow, updateMessageContent } from './message-actions.repository.js';
import { MESSAGE_MAX_LENGTH, checkContent, toMessageView, type MessageView } from './messages.js';
import { findStoredMessage } from './messages.repository.js';
import { mayDelete, mayEdit, type MessageRights } from './message-rights.js';

/**
 * Editing and deleting messages (issue #24 "Writing"; SPEC's Manage messages bit), enforcing
 * message-rights.ts for pages and any later API alike. Manage messages counts only in a server's
 * channels: in a DM only one's own. Someone who may not read the channel gets 10003, as for a
 * channel that does not exist.
 */

function actorId(actor: Actor): string {
  return actor.kind === 'operator' ? '' : actor.id;
}

/**
 * The actor's rights in a channel they may read: Manage messages counts only in a server's
 * channels; a DM's two people hold nothing over each other's messages. Throws 10003 otherwise.
 */
export async function rightsIn(deps: Deps, actor: Actor, channel: Channel): Promise<MessageRights> {
  const viewerId = actorId(actor);
  if (actor.kind === 'operator') return { viewerId, manageMessages: true };
  if (channel.serverId !== null) {
    const held = await memberPermissions(deps, channel.serverId, viewerId);
    if (held === undefined || (held & Permission.VIEW_CHANNEL) === 0n) throw ApiErrors.unknownChannel();
    return { viewerId, manageMessages: (held & Permission.MANAGE_MESSAGES) !== 0n };
  }
  const pair = await findDmPair(deps.db, channel.id);
  if (!pair || (pair.userLow !== viewerId && pair.userHigh !== viewerId)) throw ApiErrors.unknownChannel();
  return { viewerId, manageMessages: false };
}

/** A message the actor can see, with the channel it is in and their rights there. */
export interface MessageInPlace {
  channel: Channel;
  message: MessageView;
  rights: MessageRights;
}

/** The message for an edit or delete screen: 10003 for a channel out of reach, 10008 for no such message. */
export async function messageInPlace(deps: Deps, actor: Actor, channelId: string, messageId: string): Promise<MessageInPlace> {
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel) throw ApiErrors.unknownChannel();
  const rights = await rightsIn(deps, actor, channel);
  const stored = isSnowflake(messageId) ? await findStoredMessage(deps.db, channel.id, messageId) : undefined;
  if (!stored) throw ApiErrors.unknownMessage();
  return { channel, message: toMessageView(stored), rights };
}

/** The actor's own message, ready to edit; someone else's is refused with 403 50005. */
export async function messageToEdit(deps: Deps, actor: Actor, channelId: string, messageId: string): Promise<MessageInPlace> {
  const found = await messageInPlace(deps, actor, channelId, messageId);
  if (!mayEdit(found.rights, found.message)) throw new AccessError(403, 50005, 'You can only edit your own messages.');
  return found;
}

/** A message the actor may delete (their own, or any with Manage messages), else 403 50013. */
export async function messageToDelete(deps: Deps, actor: Actor, channelId: string, messageId: string): Promise<MessageInPlace> {
  const found = await messageInPlace(deps, actor, channelId, messageId);
  if (!mayDelete(found.rights, found.message)) {
    throw new AccessError(403, 50013, 'You can delete only your own messages here: deleting others’ needs the Manage messages permission.');
  }
  return found;
}

/** Edits the acting person's own message; live views replace it (`message.updated`). Returns it as edited. */
export async function editMessage(deps: Deps, acting: Acting<Actor>, channelId: string, messageId: string, rawContent: string): Promise<MessageInPlace> {
  const found = await messageToEdit(deps, acting.actor, channelId, messageId);
  const checked = checkContent(rawContent);
  if (!checked.ok) {
    if (checked.code === 'empty') throw ApiErrors.emptyMessage();
    throw invalidField(['content'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MESSAGE_MAX_LENGTH} or fewer in length.`);
  }
  const editedAt = deps.clock.now();
  if (!(await updateMessageContent(deps.db, found.channel.id, messageId, checked.content, editedAt))) throw ApiErrors.unknownMessage();
  await emitted(deps, acting, { type: 'message.updated', serverId: found.channel.serverId, channelId: found.channel.id, messageId });
  return { ...found, message: { ...found.message, content: checked.content, editedAt } };
}

/**
 * Deletes a message the acting person may delete; live views remove it (`message.deleted`).
 * Issue #37 §5: a moderator deleting someone else's message is audited (Discord's MESSAGE_DELETE),
 * so that delete and its audit row share one transaction; an author deleting their own message
 * leaves no audit row, and needs none.
 */
export async function deleteMessage(deps: Deps, acting: Acting<Actor>, channelId: string, messageId: string): Promise<MessageInPlace> {
  const found = await messageToDelete(deps, acting.actor, channelId, messageId);
  const event = { type: 'message.deleted', serverId: found.channel.serverId, channelId: found.channel.id, messageId, authorId: found.message.author.id } as const;
  if (found.message.author.id === actorId(acting.actor)) {
    if (!(await deleteMessageRow(deps.db, found.channel.id, messageId))) throw ApiErrors.unknownMessage();
    await emitted(deps, acting, event);
    return found;
  }
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteMessageRow(trx, found.channel.id, messageId))) throw ApiErrors.unknownMessage();
    emit(event);
  });
  return found;
}

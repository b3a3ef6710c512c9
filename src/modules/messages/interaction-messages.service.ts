import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { getChannel } from '../directory/channels.service.js';
import { removeFilesOfMessages } from '../files/files.service.js';
import { deleteMessageRow } from './message-actions.repository.js';
import { clearLoading, deleteMessageInteraction, findMessageInteraction, insertMessageInteraction, updateInteractionMessage, type MessageInteraction } from './message-interactions.repository.js';
import { findStoredMessage, insertMessage } from './messages.repository.js';
import { requireMayPost } from './messages.service.js';
import type { StoredMessage } from './messages.js';

type BotActor = Extract<Actor, { kind: 'bot' }>;

/**
 * The messages an app's bot posts in answer to a command (issue #40 §2): the answer, a deferred
 * answer's placeholder (Discord's flag LOADING) and follow-ups, each carrying who used which
 * command (Discord's `interaction_metadata`). The interactions module decides what to post; this
 * stores it under the bot's own rights (View channel and Send messages, as its REST posts) and
 * tells live views.
 */

/** Who used which command: what the message records of it. */
export interface InteractionOfMessage {
  interactionId: string;
  type: number;
  userId: string;
  commandName: string;
}

/** A stored interaction message with what it records of its command. */
export interface InteractionMessage {
  message: StoredMessage;
  interaction: MessageInteraction;
}

async function channelOf(deps: Deps, channelId: string) {
  const channel = await getChannel(deps, channelId);
  if (!channel) throw ApiErrors.unknownChannel();
  return channel;
}

/** Reads one interaction message back, as stored; undefined when it is gone. */
export async function readInteractionMessage(deps: Deps, channelId: string, messageId: string): Promise<InteractionMessage | undefined> {
  const message = await findStoredMessage(deps.db, channelId, messageId);
  if (!message) return undefined;
  const interaction = await findMessageInteraction(deps.db, messageId);
  return interaction ? { message, interaction } : undefined;
}

/**
 * Posts the bot's message with its interaction. `loading`: a deferred answer's placeholder, which
 * may be empty (the page shows "<App> is thinking…"); otherwise content, embeds or files are
 * required (the caller's payload check has made sure). `messageId`: the id its files were stored
 * under beforehand (issue #42 §2), else a new one.
 */
export async function postInteractionMessage(
  deps: Deps,
  acting: Acting<BotActor>,
  channelId: string,
  body: { content: string; embeds: unknown[]; loading: boolean },
  interaction: InteractionOfMessage,
  messageId?: string,
): Promise<InteractionMessage> {
  const channel = await channelOf(deps, channelId);
  await requireMayPost(deps, acting.actor, channel);
  const id = messageId ?? deps.ids.next();
  await insertMessageInteraction(deps.db, { messageId: id, interactionId: interaction.interactionId, type: interaction.type, userId: interaction.userId, commandName: interaction.commandName, loading: body.loading });
  await insertMessage(deps.db, {
    id,
    channelId,
    authorId: acting.actor.id,
    webhookId: null,
    applicationId: acting.actor.applicationId,
    authorName: null,
    authorAvatarUrl: null,
    content: body.content,
    embeds: body.embeds,
    createdAt: deps.clock.now(),
  });
  await emitted(deps, acting, { type: 'message.created', serverId: channel.serverId, channelId, messageId: id });
  const stored = await readInteractionMessage(deps, channelId, id);
  if (!stored) throw ApiErrors.unknownMessage();
  return stored;
}

/**
 * Edits an interaction message of the bot. Filling a placeholder (LOADING) clears the flag and is
 * not an edit; later changes are. Undefined when the message is gone.
 */
export async function editInteractionMessage(
  deps: Deps,
  acting: Acting<BotActor>,
  channelId: string,
  messageId: string,
  changes: { content?: string; embeds?: unknown[] },
): Promise<InteractionMessage | undefined> {
  const current = await readInteractionMessage(deps, channelId, messageId);
  if (!current || current.message.authorId !== acting.actor.id) return undefined;
  const changed = await updateInteractionMessage(deps.db, channelId, messageId, acting.actor.id, { ...changes, editedAt: current.interaction.loading ? null : deps.clock.now() });
  if (!changed) return undefined;
  if (current.interaction.loading) await clearLoading(deps.db, messageId);
  const channel = await channelOf(deps, channelId);
  await emitted(deps, acting, { type: 'message.updated', serverId: channel.serverId, channelId, messageId });
  return readInteractionMessage(deps, channelId, messageId);
}

/** Deletes an interaction message of the bot; false when it was gone already. */
export async function deleteInteractionMessage(deps: Deps, acting: Acting<BotActor>, channelId: string, messageId: string): Promise<boolean> {
  const current = await readInteractionMessage(deps, channelId, messageId);
  if (!current || current.message.authorId !== acting.actor.id) return false;
  if (!(await deleteMessageRow(deps.db, channelId, messageId))) return false;
  await deleteMessageInteraction(deps.db, messageId);
  await removeFilesOfMessages(deps, [messageId]);
  const channel = await channelOf(deps, channelId);
  await emitted(deps, acting, { type: 'message.deleted', serverId: channel.serverId, channelId, messageId, authorId: acting.actor.id });
  return true;
}

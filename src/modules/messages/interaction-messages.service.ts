import type { Acting } from '../../core/acting.js';
import type { Actor, PersonActor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { getChannel } from '../directory/channels.service.js';
import { removeFilesOfMessages } from '../files/files.service.js';
import { deleteMessageRow } from './message-actions.repository.js';
import { clearLoading, deleteMessageInteraction, findMessageInteraction, insertMessageInteraction, updateInteractionMessage, type MessageInteraction } from './message-interactions.repository.js';
import { deleteEphemeralMessage, findEphemeralMessage, insertEphemeralMessage, updateEphemeralMessage, type StoredEphemeral } from './ephemeral-messages.repository.js';
import { findStoredMessage, insertMessage } from './messages.repository.js';
import { requireMayPost } from './messages.service.js';
import { interactionMessageView, type MessageView, type StoredMessage } from './messages.js';
import type { Channel } from '../directory/channels.js';
import { isSnowflake } from '../../core/snowflake.js';

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
  /** Discord's flag EPHEMERAL (64): for the person who used the command alone (ephemeral-messages.table.ts). */
  ephemeral: boolean;
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
  return interaction ? { message, interaction, ephemeral: false } : undefined;
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

/**
 * Issue #40 §2, Discord's ephemeral messages (flag 64): an answer, a deferral's placeholder or a
 * follow-up that the person who used the command alone sees, in their views of the channel, for
 * as long as the interaction's token can edit it (15 minutes). Stored apart from `messages`
 * (ephemeral-messages.table.ts), so no other reader can come across one; only that person's live
 * views are told of it (`message.ephemeral`). Unlike the app's public answers, the bot needs no
 * rights in the channel: as on Discord, only the person who asked reads it.
 */
export async function postEphemeralMessage(
  deps: Deps,
  acting: Acting<BotActor>,
  channelId: string,
  recipientId: string,
  body: { content: string; embeds: unknown[]; loading: boolean },
  interactionId: string,
  messageId?: string,
): Promise<InteractionMessage> {
  const id = messageId ?? deps.ids.next();
  await insertEphemeralMessage(deps.db, { id, interactionId, channelId, recipientId, authorId: acting.actor.id, content: body.content, embeds: body.embeds, loading: body.loading, createdAt: deps.clock.now() });
  await emitted(deps, acting, { type: 'message.ephemeral', channelId, recipientId, messageId: id });
  const stored = await readEphemeralMessage(deps, id);
  if (!stored) throw ApiErrors.unknownMessage();
  return stored;
}

/** An ephemeral message as an interaction message, with its one reader and expiry; undefined when gone or expired. */
export async function readEphemeralMessage(deps: Deps, messageId: string): Promise<(InteractionMessage & { recipientId: string }) | undefined> {
  const found = await findEphemeralMessage(deps.db, messageId);
  return found && found.expiresAt > deps.clock.now() ? ephemeralMessage(found) : undefined;
}

function ephemeralMessage(found: StoredEphemeral): InteractionMessage & { recipientId: string } {
  return { message: found.message, interaction: found.interaction, ephemeral: true, recipientId: found.recipientId };
}

/** Edits an ephemeral message of the bot (filling a deferral is not an edit); undefined when it is gone. */
export async function editEphemeralMessage(deps: Deps, acting: Acting<BotActor>, messageId: string, changes: { content?: string; embeds?: unknown[] }): Promise<InteractionMessage | undefined> {
  const current = await readEphemeralMessage(deps, messageId);
  if (!current || current.message.authorId !== acting.actor.id) return undefined;
  if (!(await updateEphemeralMessage(deps.db, messageId, { ...changes, editedAt: current.interaction.loading ? null : deps.clock.now() }))) return undefined;
  await emitted(deps, acting, { type: 'message.ephemeral', channelId: current.message.channelId, recipientId: current.recipientId, messageId });
  return readEphemeralMessage(deps, messageId);
}

/** Deletes an ephemeral message of the bot, with its files; false when it was gone already. */
export async function removeEphemeralMessage(deps: Deps, acting: Acting<BotActor>, messageId: string): Promise<boolean> {
  const current = await readEphemeralMessage(deps, messageId);
  if (!current || current.message.authorId !== acting.actor.id) return false;
  return dropEphemeral(deps, acting, current.message.channelId, current.recipientId, messageId);
}

/** Deletes an ephemeral message and its files and tells its reader's live views; false when it was gone already. */
async function dropEphemeral(deps: Deps, acting: Acting<Actor>, channelId: string, recipientId: string, messageId: string): Promise<boolean> {
  if (!(await deleteEphemeralMessage(deps.db, messageId))) return false;
  await removeFilesOfMessages(deps, [messageId]);
  await emitted(deps, acting, { type: 'message.ephemeral', channelId, recipientId, messageId });
  return true;
}

/**
 * Discord's "Dismiss message" (issue #40 §2): the one reader of an ephemeral message removes it
 * from their views (every open one, live); the app's later edits of it are then 10008, as for a
 * message it deleted. Anyone else, or a message not of this channel, gets 10008: an ephemeral
 * message's existence does not leak.
 */
export async function ephemeralToDismiss(deps: Deps, personId: string, channelId: string, messageId: string): Promise<{ channel: Channel; message: MessageView }> {
  const found = isSnowflake(messageId) ? await readEphemeralMessage(deps, messageId) : undefined;
  if (!found || found.recipientId !== personId || found.message.channelId !== channelId) throw ApiErrors.unknownMessage();
  return { channel: await channelOf(deps, channelId), message: interactionMessageView(found) };
}

export async function dismissEphemeralMessage(deps: Deps, acting: Acting<PersonActor>, channelId: string, messageId: string): Promise<{ channel: Channel }> {
  const { channel } = await ephemeralToDismiss(deps, acting.actor.id, channelId, messageId);
  if (!(await dropEphemeral(deps, acting, channelId, acting.actor.id, messageId))) throw ApiErrors.unknownMessage();
  return { channel };
}

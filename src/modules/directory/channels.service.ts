import { announceAccessChange } from '../../realtime/channel-events.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { OPERATOR, type Actor } from '../../core/actor.js';
import { authorize } from './access.service.js';
import { ServerAction } from './policy.js';
import { CHANNEL_NAME_MAX_LENGTH, CHANNEL_TOPIC_MAX_LENGTH, CHANNEL_TYPE_TEXT, normalizeChannelName, type Channel } from './channels.js';
import { countChannelMessages, deleteChannel as deleteChannelRow, findChannel, insertChannel, listChannels, maxChannelPosition } from './channels.repository.js';
import { codePointLength } from './servers.js';
import { findServer } from './servers.repository.js';

/**
 * Creates a text channel at the end of the server's list; the actor needs Manage channels.
 * Throws 10004 for an unknown server (or a non-member), 50013, and 50035 (`name`, `topic`).
 */
export async function createChannel(deps: Deps, serverId: string, input: { name: string; topic?: string | null }, actor: Actor = OPERATOR): Promise<Channel> {
  await authorize(deps, actor, serverId, ServerAction.manageChannels);
  const name = normalizeChannelName(input.name);
  if (name === undefined) {
    throw invalidField(['name'], 'CHANNEL_NAME_INVALID', `A channel name is 1–${CHANNEL_NAME_MAX_LENGTH} letters, digits, dashes or underscores (spaces become dashes).`);
  }
  const topicText = input.topic?.trim() ?? '';
  if (codePointLength(topicText) > CHANNEL_TOPIC_MAX_LENGTH) {
    throw invalidField(['topic'], 'BASE_TYPE_MAX_LENGTH', `A topic is at most ${CHANNEL_TOPIC_MAX_LENGTH} characters.`);
  }
  if (!isSnowflake(serverId) || !(await findServer(deps.db, serverId))) throw ApiErrors.unknownServer();
  const channel: Channel = {
    id: deps.ids.next(),
    serverId,
    type: CHANNEL_TYPE_TEXT,
    name,
    topic: topicText === '' ? null : topicText,
    position: (await maxChannelPosition(deps.db, serverId)) + 1,
    createdAt: deps.clock.now(),
  };
  await insertChannel(deps.db, channel);
  return channel;
}

/** Deletes a channel of this server with its messages; the actor needs Manage channels. Throws 10004, 50013, or 10003 when there is no such channel. */
export async function deleteChannel(deps: Deps, serverId: string, channelId: string, actor: Actor = OPERATOR): Promise<void> {
  await authorize(deps, actor, serverId, ServerAction.manageChannels);
  if (!isSnowflake(serverId) || !isSnowflake(channelId) || !(await deleteChannelRow(deps.db, serverId, channelId))) {
    throw ApiErrors.unknownChannel();
  }
  // Open live views of the channel end at once (issue #21 §5).
  announceAccessChange(deps.events, channelId);
}

/**
 * What deleting a channel would remove, for its confirmation page: the channel and its message
 * count. Same access as deleteChannel (Manage channels); 10003 when the server has no such channel.
 */
export async function channelDeletionPreview(deps: Deps, serverId: string, channelId: string, actor: Actor): Promise<{ channel: Channel; messages: number }> {
  await authorize(deps, actor, serverId, ServerAction.manageChannels);
  const channel = isSnowflake(channelId) ? await findChannel(deps.db, channelId) : undefined;
  if (!channel || channel.serverId !== serverId) throw ApiErrors.unknownChannel();
  return { channel, messages: await countChannelMessages(deps.db, channelId) };
}

/** A channel by id, or undefined (also for ids that are not snowflakes). */
export async function getChannel(deps: Deps, channelId: string): Promise<Channel | undefined> {
  if (!isSnowflake(channelId)) return undefined;
  return findChannel(deps.db, channelId);
}

export async function getChannels(deps: Deps, serverId: string): Promise<Channel[]> {
  if (!isSnowflake(serverId)) return [];
  return listChannels(deps.db, serverId);
}

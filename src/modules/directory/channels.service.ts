import { announceAccessChange } from '../../realtime/channel-events.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { OPERATOR, type Actor } from '../../core/actor.js';
import { authorize } from './access.service.js';
import { ServerAction } from './policy.js';
import { CHANNEL_NAME_MAX_LENGTH, CHANNEL_TOPIC_MAX_LENGTH, CHANNEL_TYPE_TEXT, normalizeChannelName, type Channel } from './channels.js';
import { countChannelMessages, deleteChannel as deleteChannelRow, findChannel, insertChannel, listChannels, maxChannelPosition, updateChannelRow, writeChannelOrder } from './channels.repository.js';
import { codePointLength } from './servers.js';
import { findServer } from './servers.repository.js';

/**
 * Creates a text channel at the end of the server's list; the actor needs Manage channels.
 * Throws 10004 for an unknown server (or a non-member), 50013, and 50035 (`name`, `topic`).
 */
export async function createChannel(deps: Deps, serverId: string, input: { name: string; topic?: string | null }, actor: Actor = OPERATOR): Promise<Channel> {
  await authorize(deps, actor, serverId, ServerAction.manageChannels);
  const { name, topic: topicText } = channelFields(input);
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

/** A channel form's name (slugged, channels.ts) and topic, or 50035 at the field. */
function channelFields(input: { name: string; topic?: string | null }): { name: string; topic: string } {
  const name = normalizeChannelName(input.name);
  if (name === undefined) {
    throw invalidField(['name'], 'CHANNEL_NAME_INVALID', `A channel name is 1–${CHANNEL_NAME_MAX_LENGTH} letters, digits, dashes or underscores (spaces become dashes).`);
  }
  const topic = input.topic?.trim() ?? '';
  if (codePointLength(topic) > CHANNEL_TOPIC_MAX_LENGTH) {
    throw invalidField(['topic'], 'BASE_TYPE_MAX_LENGTH', `A topic is at most ${CHANNEL_TOPIC_MAX_LENGTH} characters.`);
  }
  return { name, topic };
}

/** Renames a channel and sets its topic (empty clears it); Manage channels. Throws 10004, 50013, 50035, 10003. */
export async function updateChannel(deps: Deps, serverId: string, channelId: string, input: { name: string; topic?: string | null }, actor: Actor): Promise<void> {
  await authorize(deps, actor, serverId, ServerAction.manageChannels);
  const { name, topic } = channelFields(input);
  if (!isSnowflake(channelId) || !(await updateChannelRow(deps.db, serverId, channelId, { name, topic: topic === '' ? null : topic }))) {
    throw ApiErrors.unknownChannel();
  }
}

/**
 * Moves a channel one place up or down the server's list (Manage channels); at either end it stays.
 * The whole order is rewritten 0…n-1 in one transaction, which also repairs ties. Throws 10004, 50013, 10003.
 */
export async function moveChannel(deps: Deps, serverId: string, channelId: string, direction: 'up' | 'down', actor: Actor): Promise<void> {
  await authorize(deps, actor, serverId, ServerAction.manageChannels);
  await deps.db.transaction().execute(async (trx) => {
    const ids = (await listChannels(trx, serverId)).map((c) => c.id);
    const at = ids.indexOf(channelId);
    if (at < 0) throw ApiErrors.unknownChannel();
    const to = direction === 'up' ? at - 1 : at + 1;
    if (to < 0 || to >= ids.length) return;
    [ids[at], ids[to]] = [ids[to] as string, ids[at] as string];
    await writeChannelOrder(trx, serverId, ids);
  });
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

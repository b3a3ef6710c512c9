import { ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { Actor } from '../../core/actor.js';
import type { Acting } from '../../core/acting.js';
import type { FieldChange } from '../../events/domain-events.js';
import { changing } from '../../events/event-bus.js';
import { authorize } from './access.service.js';
import { ServerAction } from './policy.js';
import { CHANNEL_NAME_MAX_LENGTH, CHANNEL_TOPIC_MAX_LENGTH, CHANNEL_TYPE_TEXT, normalizeChannelName, type Channel } from './channels.js';
import { countChannelMessages, deleteChannel as deleteChannelRow, findChannel, insertChannel, listChannels, maxChannelPosition, updateChannelRow, writeChannelOrder } from './channels.repository.js';
import { codePointLength } from './servers.js';
import { findServer, webhookAvatarUrlsIn } from './servers.repository.js';
import { releaseUploadedImages } from '../resources/uploaded-images.service.js';

/**
 * Creates a text channel at the end of the server's list; the actor needs Manage channels.
 * Throws 10004 for an unknown server (or a non-member), 50013, and 50035 (`name`, `topic`).
 */
export async function createChannel(deps: Deps, acting: Acting<Actor>, serverId: string, input: { name: string; topic?: string | null }): Promise<Channel> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageChannels);
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
  await changing(deps, acting, async (trx, emit) => {
    await insertChannel(trx, channel);
    emit({ type: 'channel.created', serverId, channelId: channel.id, name });
  });
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
export async function updateChannel(deps: Deps, acting: Acting<Actor>, serverId: string, channelId: string, input: { name: string; topic?: string | null }): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageChannels);
  const fields = channelFields(input);
  const next = { name: fields.name, topic: fields.topic === '' ? null : fields.topic };
  const channel = await channelOf(deps, serverId, channelId);
  const changes: FieldChange[] = [];
  if (next.name !== channel.name) changes.push({ key: 'name', old: channel.name, new: next.name });
  if (next.topic !== channel.topic) changes.push({ key: 'topic', old: channel.topic, new: next.topic });
  await changing(deps, acting, async (trx, emit) => {
    if (!(await updateChannelRow(trx, serverId, channelId, next))) throw ApiErrors.unknownChannel();
    // Issue #37 §2: a form saved unchanged changes nothing worth a row in the audit log.
    if (changes.length > 0) emit({ type: 'channel.updated', serverId, channelId, changes });
  });
}

/** A channel of this server, or 10003. */
async function channelOf(deps: Deps, serverId: string, channelId: string): Promise<Channel> {
  const channel = isSnowflake(channelId) ? await findChannel(deps.db, channelId) : undefined;
  if (!channel || channel.serverId !== serverId) throw ApiErrors.unknownChannel();
  return channel;
}

/**
 * Moves a channel one place up or down the server's list (Manage channels); at either end it stays.
 * The whole order is rewritten 0…n-1 in one transaction, which also repairs ties. Throws 10004, 50013, 10003.
 */
export async function moveChannel(deps: Deps, acting: Acting<Actor>, serverId: string, channelId: string, direction: 'up' | 'down'): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageChannels);
  await changing(deps, acting, async (trx, emit) => {
    const ids = (await listChannels(trx, serverId)).map((c) => c.id);
    const at = ids.indexOf(channelId);
    if (at < 0) throw ApiErrors.unknownChannel();
    const to = direction === 'up' ? at - 1 : at + 1;
    if (to < 0 || to >= ids.length) return;
    [ids[at], ids[to]] = [ids[to] as string, ids[at] as string];
    await writeChannelOrder(trx, serverId, ids);
    // Issue #37 §2: the moved channel's place in the list, old → new (its neighbour's swap is implied).
    emit({ type: 'channel.updated', serverId, channelId, changes: [{ key: 'position', old: at, new: to }] });
  });
}

/** Deletes a channel of this server with its messages; the actor needs Manage channels. Throws 10004, 50013, or 10003 when there is no such channel. */
export async function deleteChannel(deps: Deps, acting: Acting<Actor>, serverId: string, channelId: string): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageChannels);
  const channel = await channelOf(deps, serverId, channelId);
  let avatars: string[] = [];
  await changing(deps, acting, async (trx, emit) => {
    avatars = await webhookAvatarUrlsIn(trx, { channelId });
    if (!(await deleteChannelRow(trx, serverId, channelId))) throw ApiErrors.unknownChannel();
    emit({ type: 'channel.deleted', serverId, channelId, name: channel.name });
    // Open live views of the channel end at once (issue #21 §5).
    emit({ type: 'access.changed', topicId: channelId });
  });
  // Issue #42 §3: its webhooks go with it, and their uploaded avatars' blobs with them.
  await releaseUploadedImages(deps, avatars);
}

/**
 * What deleting a channel would remove, for its confirmation page: the channel and its message
 * count. Same access as deleteChannel (Manage channels); 10003 when the server has no such channel.
 */
export async function channelDeletionPreview(deps: Deps, serverId: string, channelId: string, actor: Actor): Promise<{ channel: Channel; messages: number }> {
  await authorize(deps, actor, serverId, ServerAction.manageChannels);
  const channel = await channelOf(deps, serverId, channelId);
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

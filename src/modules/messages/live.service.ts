import { ApiErrors } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { ChannelEvent } from '../../realtime/channel-events.js';
import type { Deps } from '../../deps.js';
import { sessionStillSignsIn } from '../accounts/sessions.service.js';
import type { Channel } from '../directory/channels.js';
import { getChannel } from '../directory/channels.service.js';
import { memberPermissions } from '../directory/servers.service.js';
import { findDmPair } from './dms.repository.js';
import type { LiveUpdate } from './live.js';
import { CHANNEL_VIEW_LIMIT, interactionMessageView, toMessageView, type MessageView } from './messages.js';
import { findEphemeralMessage } from './ephemeral-messages.repository.js';
import { findStoredMessage, listMessagesAfter } from './messages.repository.js';
import { withFiles } from './messages.service.js';

/**
 * Live channel views (issue #5): who may follow a channel, and what to send them. Routes render;
 * this file only decides and loads.
 */

const notFound = ApiErrors.unknownChannel;

/** Whether `viewerId` may read `channel`: View channel in its server, or one of a DM's two people. */
async function mayView(deps: Deps, viewerId: string, channel: Channel): Promise<boolean> {
  if (channel.serverId !== null) {
    const held = await memberPermissions(deps, channel.serverId, viewerId);
    return held !== undefined && (held & Permission.VIEW_CHANNEL) === Permission.VIEW_CHANNEL;
  }
  const pair = await findDmPair(deps.db, channel.id);
  return pair !== undefined && (pair.userLow === viewerId || pair.userHigh === viewerId);
}

/**
 * The channel a viewer may follow live. Like the channel view, anyone else gets the same 404 as
 * for a channel that does not exist (its existence does not leak), also without View channel.
 */
export async function requireLiveChannel(deps: Deps, viewerId: string, channelId: string): Promise<Channel> {
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel || !(await mayView(deps, viewerId, channel))) throw notFound();
  return channel;
}

/**
 * Re-checked on every heartbeat of an open stream: the session is still signed in and unexpired
 * (read only: an open tab does not keep a session alive) and the person may still read the
 * channel. A removed member or a signed-out browser stops receiving within one heartbeat.
 */
export async function mayStillFollow(deps: Deps, sessionToken: string, viewerId: string, channelId: string): Promise<boolean> {
  if (!(await sessionStillSignsIn(deps, sessionToken, viewerId))) return false;
  const channel = await getChannel(deps, channelId);
  return channel !== undefined && (await mayView(deps, viewerId, channel));
}


/**
 * Every view open on this instance receives the same event object (channel-events.ts fans one
 * object out), so one load serves them all: N viewers cost one query per event, not N.
 */
const loads = new WeakMap<ChannelEvent, Promise<LiveUpdate>>();

/** The update to send for a channel event. An edited message that is gone by now is sent as a removal. */
export function liveUpdate(deps: Deps, event: ChannelEvent): Promise<LiveUpdate> {
  let pending = loads.get(event);
  if (!pending) {
    pending = loadUpdate(deps, event);
    loads.set(event, pending);
  }
  return pending;
}

async function loadUpdate(deps: Deps, event: ChannelEvent): Promise<LiveUpdate> {
  if (event.type === 'message_delete') return { kind: 'delete', messageId: event.messageId };
  const stored = await findStoredMessage(deps.db, event.channelId, event.messageId);
  if (!stored) return { kind: 'delete', messageId: event.messageId };
  const [message] = await withFiles(deps, [toMessageView(stored)]);
  return { kind: 'message', created: event.type === 'message_create', message: message ?? toMessageView(stored) };
}

/**
 * What was posted after `afterId` (the newest message a page shows, or the Last-Event-ID of a
 * reconnecting browser), oldest first, at most as many as the channel view shows.
 */
export async function messagesAfter(deps: Deps, channelId: string, afterId: string): Promise<MessageView[]> {
  if (!isSnowflake(afterId)) return [];
  const rows = await listMessagesAfter(deps.db, channelId, afterId, CHANNEL_VIEW_LIMIT);
  return withFiles(deps, rows.map(toMessageView));
}

/**
 * Issue #40 §2: what `viewerId`'s stream of `channelId` sends for an `ephemeral_message` on their
 * topic: the message, when it is theirs, in this channel and unexpired; its removal when it is
 * gone (deleted by its app; an id the page does not show is ignored); nothing for another channel's.
 */
export async function ephemeralUpdate(deps: Deps, viewerId: string, channelId: string, messageId: string): Promise<LiveUpdate | undefined> {
  const found = await findEphemeralMessage(deps.db, messageId);
  if (!found || found.expiresAt <= deps.clock.now()) return { kind: 'delete', messageId };
  if (found.recipientId !== viewerId || found.message.channelId !== channelId) return undefined;
  const [message] = await withFiles(deps, [interactionMessageView({ ...found, ephemeral: true })]);
  return message && { kind: 'message', created: false, message };
}

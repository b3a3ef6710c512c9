import type { Acting, Who } from '../../core/acting.js';
import type { Actor, PersonActor } from '../../core/actor.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { discardFiles, fileViews, filesOfMessages, receiveUpload, removeFilesOfMessages, settleMessageFiles, type Attachment, type Upload } from '../files/files.service.js';
import type { UploadPart } from '../files/uploads.js';
import { authorize } from '../directory/access.service.js';
import type { Channel } from '../directory/channels.js';
import { getChannel, getChannels } from '../directory/channels.service.js';
import type { Server } from '../directory/servers.js';
import { getServer, listServersForPerson } from '../directory/servers.service.js';
import { getPersonById } from '../directory/people.service.js';
import { memberNameColors } from '../directory/roles.service.js';
import { CHANNEL_VIEW_LIMIT, MESSAGE_MAX_LENGTH, checkContent, interactionMessageView, toMessageView, type MessageView } from './messages.js';
import { listEphemeralMessages } from './ephemeral-messages.repository.js';
import {
  deleteWebhookMessage,
  findWebhookMessage,
  findMessageChannelId,
  insertMessage,
  listLatestMessages,
  listMessagesBefore,
  listRecentWebhookAvatarUrls,
  updateWebhookMessage,
  type NewMessage,
} from './messages.repository.js';
import type { WebhookMessage } from './messages.js';
import { findDmPair } from './dms.repository.js';
import { findLastRead, listUnreadChannelIds, markRead } from './read-state.repository.js';
import { insertWebhookMessage } from './webhook-message.repository.js';
import { listMessageInteractions, type MessageInteraction } from './message-interactions.repository.js';

/**
 * Who may post in a channel (issue #37 §1: the service checks, not the page): in a server, View
 * channel and Send messages (10003 for a non-member, 403 50013 naming what is missing); in a DM,
 * one of its two people (10003 for anyone else). The operator has no account to post as.
 */
export async function requireMayPost(deps: Deps, actor: Actor, channel: Channel): Promise<string> {
  if (actor.kind === 'operator') throw ApiErrors.missingAccess();
  if (channel.serverId !== null) {
    await authorize(deps, actor, channel.serverId, { all: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES }, ApiErrors.unknownChannel);
    return actor.id;
  }
  const pair = await findDmPair(deps.db, channel.id);
  if (!pair || (pair.userLow !== actor.id && pair.userHigh !== actor.id)) throw ApiErrors.unknownChannel();
  return actor.id;
}

/** Files already stored for a message about to be posted (postFromComposer): its id and them. */
export interface PreparedFiles {
  messageId: string;
  files: readonly Attachment[];
}

/**
 * Posts a plain-text message as the acting person (or bot account), who must be allowed to post
 * there (requireMayPost). Throws 10003 for an unknown channel, 50006 for empty content and 50035
 * (`content`) beyond 2000 code points. Live views hear `message.created` once it is stored.
 * With `prepared` (files stored under the message's id beforehand), the message carries them
 * and may have no text, as Discord's.
 */
export async function postMessage(deps: Deps, acting: Acting<Actor>, channelId: string, rawContent: string, prepared?: PreparedFiles): Promise<MessageView> {
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel) throw ApiErrors.unknownChannel();
  const authorId = await requireMayPost(deps, acting.actor, channel);
  const withFiles = prepared !== undefined && prepared.files.length > 0;
  const checked = checkContent(rawContent);
  if (!checked.ok && !(checked.code === 'empty' && withFiles)) {
    if (checked.code === 'empty') throw ApiErrors.emptyMessage();
    throw invalidField(['content'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MESSAGE_MAX_LENGTH} or fewer in length.`);
  }
  const content = checked.ok ? checked.content : '';
  const author = await getPersonById(deps, authorId);
  if (!author) throw ApiErrors.unknownUser();
  const id = prepared?.messageId ?? deps.ids.next();
  const createdAt = deps.clock.now();
  await insertMessage(deps.db, {
    id,
    channelId,
    authorId,
    webhookId: null,
    applicationId: author.applicationId,
    authorName: null,
    authorAvatarUrl: null,
    content,
    embeds: [],
    createdAt,
  });
  // Contract 4: open channel views learn of it once it is stored (realtime/live-subscriber.ts).
  await emitted(deps, acting, { type: 'message.created', serverId: channel.serverId, channelId, messageId: id });
  const view = toMessageView({
    id,
    channelId,
    authorId,
    webhookId: null,
    authorName: null,
    authorAvatarUrl: null,
    content,
    embeds: '[]',
    createdAt,
    editedAt: null,
    user: { name: author.name, avatarUrl: author.avatarUrl, bot: author.bot },
  });
  return withFiles ? { ...view, attachments: fileViews(deps, prepared.files) } : view;
}

/** What the composer's multipart post (issue #42 §2) comes to: text to handle as a plain post (no file came), or the message posted with its files. */
export type ComposerPost = { kind: 'text'; content: string } | { kind: 'posted'; message: MessageView };

/**
 * The composer's multipart post (issue #42 §2 "People"): the person's files are stored as they
 * stream in (files.service.ts receiveUpload: GATEHOUSE_ATTACHMENT_MAX_BYTES per message, 10
 * files, nothing kept on any error), then the message is posted with them. Attach files is
 * checked, like a bot's, when the first file arrives and before a byte of it is stored (a form
 * without JavaScript always posts multipart, mostly without files, which need no such right).
 * Empty file parts (a file input left empty) are skipped. The text is the `content` field, or
 * `payload_json`'s `content` with its `attachments` descriptions (the composer's script).
 * Without files, the text comes back for the caller's usual path (commands included).
 */
export async function postFromComposer(deps: Deps, acting: Acting<PersonActor>, channelId: string, upload: Upload, onText?: (content: string) => void): Promise<ComposerPost> {
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel) throw ApiErrors.unknownChannel();
  await requireMayPost(deps, acting.actor, channel);
  const messageId = deps.ids.next();
  const received = await receiveUpload(deps, composerParts(deps, acting.actor, channel, upload, onText), { messageId, channelId: channel.id });
  const body = received.body as Record<string, unknown>;
  const content = typeof body['content'] === 'string' ? body['content'] : '';
  if (received.files.size === 0) return { kind: 'text', content };
  try {
    const files = await settleMessageFiles(deps, body, received.files);
    return { kind: 'posted', message: await postMessage(deps, acting, channel.id, content, { messageId, files: files.all }) };
  } catch (error) {
    await discardFiles(deps, [...received.files.values()]);
    throw error;
  }
}

/**
 * The upload's parts without empty file inputs, refusing the first real file when the person
 * lacks Attach files; `onText` hears the form's `content` as it arrives (before the files), so a
 * refused upload can give the typed text back.
 */
function composerParts(deps: Deps, actor: PersonActor, channel: Channel, upload: Upload, onText?: (content: string) => void): Upload {
  async function* parts(): AsyncGenerator<UploadPart> {
    let allowed = channel.serverId === null;
    for await (const part of upload.parts) {
      if (part.kind === 'field' && part.name === 'content') onText?.(part.value);
      if (part.kind === 'file' && part.filename === '') {
        // A form's file input left empty still sends a part, with no file name: no file. Read to its end so the body goes on.
        for await (const _ of part.stream) continue;
        continue;
      }
      if (part.kind === 'file' && !allowed && channel.serverId !== null) {
        await authorize(deps, actor, channel.serverId, { all: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.ATTACH_FILES }, ApiErrors.unknownChannel);
        allowed = true;
      }
      yield part;
    }
  }
  return { parts: parts(), asError: upload.asError };
}

/**
 * One page of a channel's history, oldest first: the newest messages, or with `before` those
 * older than that message id (keyset pagination, issue #24). One more row than shown is read to
 * know whether anything older remains. A `before` that is not a snowflake is refused (50035).
 */
export async function channelHistory(deps: Deps, channelId: string, before?: string, limit = CHANNEL_VIEW_LIMIT): Promise<{ messages: MessageView[]; hasOlder: boolean }> {
  if (before !== undefined && !isSnowflake(before)) throw invalidField(['before'], 'NUMBER_TYPE_COERCE', `Value "${before.slice(0, 40)}" is not snowflake.`);
  if (!isSnowflake(channelId)) return { messages: [], hasOlder: false };
  const rows = before === undefined ? await listLatestMessages(deps.db, channelId, limit + 1) : await listMessagesBefore(deps.db, channelId, before, limit + 1);
  const hasOlder = rows.length > limit;
  return { messages: await withFiles(deps, (hasOlder ? rows.slice(1) : rows).map(toMessageView)), hasOlder };
}

/**
 * Issue #40 §2: the newest page with the viewer's ephemeral messages in the channel placed among
 * its messages by id (only from the page's oldest message on: they last 15 minutes). Read state
 * and the "New messages" marker are worked out from the channel's messages alone.
 */
export async function withEphemeral(deps: Deps, viewerId: string, channelId: string, page: { messages: MessageView[]; hasOlder: boolean }): Promise<MessageView[]> {
  const oldest = page.hasOlder ? page.messages[0]?.id : undefined;
  const shown = (await ephemeralViews(deps, viewerId, channelId)).filter((m) => oldest === undefined || newer(m.id, oldest));
  if (shown.length === 0) return page.messages;
  return [...page.messages, ...shown].sort((a, b) => (newer(a.id, b.id) ? 1 : -1));
}

/** `viewerId`'s unexpired ephemeral messages in a channel, oldest first, as the channel view shows them (with their files). */
export async function ephemeralViews(deps: Deps, viewerId: string, channelId: string): Promise<MessageView[]> {
  const mine = await listEphemeralMessages(deps.db, viewerId, channelId, deps.clock.now());
  return withFiles(deps, mine.map((m) => interactionMessageView({ ...m, ephemeral: true })));
}

/** Issue #42 §3: the views with their files (one query for all), URLs signed for this viewer now. */
export async function withFiles(deps: Deps, views: MessageView[]): Promise<MessageView[]> {
  if (views.length === 0) return views;
  const [files, interactions] = await Promise.all([filesOfMessages(deps, views.map((v) => v.id)), interactionsOf(deps, views)]);
  if (files.size === 0 && interactions.size === 0) return views;
  return views.map((v) => {
    const own = files.get(v.id);
    const interaction = interactions.get(v.id);
    if (!own && !interaction) return v;
    return {
      ...v,
      ...(own ? { attachments: fileViews(deps, own) } : {}),
      ...(interaction ? { interaction: { userName: interaction.userName, commandName: interaction.commandName, loading: interaction.loading } } : {}),
    };
  });
}

/** Issue #40 §2: who used which command, for the apps' messages among these (only those can answer one). */
function interactionsOf(deps: Deps, views: readonly MessageView[]): Promise<Map<string, MessageInteraction>> {
  const ids = views.filter((v) => v.author.app).map((v) => v.id);
  return ids.length === 0 ? Promise.resolve(new Map()) : listMessageInteractions(deps.db, ids);
}

/** What the channel view shows besides its messages: the server and its channel list. */
export interface ChannelPageData {
  /** The channel shown, a server text channel. */
  channel: Channel & { serverId: string };
  /** The viewer's permissions in its server (what the page offers: the composer, settings, moderation). */
  permissions: bigint;
  server: Server;
  /** Every server the person is a member of, for switching (the sidebar's server list). */
  servers: { id: string; name: string }[];
  channels: Channel[];
  messages: MessageView[];
  /** Messages older than the first shown exist (the "Load older messages" link). */
  hasOlder: boolean;
  /** Channels of the server with messages this person has not read (bold in the list). */
  unreadChannelIds: ReadonlySet<string>;
  /** The first message shown that this person had not read when they opened the channel. */
  firstUnreadId?: string;
  /** Name colours (issue #24): each shown author's and the viewer's highest coloured role, by user id. */
  authorColors: ReadonlyMap<string, number>;
}

const newer = (a: string, b: string): boolean => BigInt(a) > BigInt(b);

/**
 * The channel view's data for the acting person, who needs View channel (issue #37 §1: checked
 * here): 10003 for an unknown channel, a DM (it has no view here), a server they are not in or a
 * channel they may not view, or a server gone meanwhile. Opening the newest page reads the channel
 * (issue #24 unread state): the person's mark moves to its newest message (`channel.read`), and the
 * first message after the old mark (by someone else) gets the "New messages" marker. An older page
 * (`before`) changes no mark.
 */
export async function loadChannelPage(deps: Deps, acting: Acting<PersonActor>, channelId: string, before?: string): Promise<ChannelPageData> {
  const found = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!found || found.serverId === null) throw ApiErrors.unknownChannel();
  const channel = { ...found, serverId: found.serverId };
  const permissions = await authorize(deps, acting.actor, channel.serverId, { all: Permission.VIEW_CHANNEL }, ApiErrors.unknownChannel);
  const viewerId = acting.actor.id;
  const [server, channels, history, lastRead, unread, memberOf] = await Promise.all([
    getServer(deps, channel.serverId),
    getChannels(deps, channel.serverId),
    channelHistory(deps, channel.id, before),
    findLastRead(deps.db, viewerId, channel.id),
    listUnreadChannelIds(deps.db, viewerId, channel.serverId),
    listServersForPerson(deps, viewerId),
  ]);
  if (!server) throw ApiErrors.unknownChannel();
  const unreadChannelIds = new Set(unread);
  const servers = memberOf.map((s) => ({ id: s.id, name: s.name }));
  // The viewer's own colour too: what they post next is coloured before a reload. A webhook's id
  // matches no member, so its messages stay uncoloured.
  const authorColors = await memberNameColors(deps, server.id, [viewerId, ...history.messages.map((m) => m.author.id)]);
  if (before !== undefined) return { channel, permissions, server, servers, channels, ...history, unreadChannelIds, authorColors };
  // An empty channel is read too (mark 0): what is posted next is new to this person.
  const readUpTo = history.messages.at(-1)?.id ?? '0';
  await markRead(deps.db, viewerId, channel.id, readUpTo);
  await emitted(deps, acting, { type: 'channel.read', userId: viewerId, channelId: channel.id, messageId: readUpTo });
  unreadChannelIds.delete(channel.id);
  const firstUnread = lastRead === undefined ? undefined : history.messages.find((m) => m.author.id !== viewerId && newer(m.id, lastRead));
  const messages = await withEphemeral(deps, viewerId, channel.id, history);
  return { channel, permissions, server, servers, channels, messages, hasOlder: history.hasOlder, unreadChannelIds, authorColors, ...(firstUnread ? { firstUnreadId: firstUnread.id } : {}) };
}

/**
 * Moves the acting person's read mark to `messageId`, a message of this server channel
 * (history.js, when messages arrive live while the page is open and visible). 10003 for a channel
 * they may not view (or a DM: its view has no read marks), 50035 for a malformed id, 10008 for a
 * message not in the channel.
 */
export async function readChannelUpTo(deps: Deps, acting: Acting<PersonActor>, channelId: string, messageId: string): Promise<void> {
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel || channel.serverId === null) throw ApiErrors.unknownChannel();
  await authorize(deps, acting.actor, channel.serverId, { all: Permission.VIEW_CHANNEL }, ApiErrors.unknownChannel);
  if (!isSnowflake(messageId)) throw invalidField(['messageId'], 'NUMBER_TYPE_COERCE', 'Value is not snowflake.');
  const storedIn = await findMessageChannelId(deps.db, messageId);
  // One that is stored nowhere was most likely deleted between the page showing it and reporting
  // it (history.js reports 500 ms after a live message arrives): nothing is marked and nothing is
  // wrong, so the page hears no error. Another channel's message is refused.
  if (storedIn === undefined) return;
  if (storedIn !== channelId) throw ApiErrors.unknownMessage();
  await markRead(deps.db, acting.actor.id, channelId, messageId);
  await emitted(deps, acting, { type: 'channel.read', userId: acting.actor.id, channelId, messageId });
}

// The messages a webhook posts, for webhooks/ (execute.service.ts, webhook-messages.service.ts)
// and the CDN (resources/cdn.service.ts). `storeWebhookMessage` is on the execute path (DESIGN §5): it
// returns the insert's promise and adds no await of its own.

/**
 * Stores a webhook execute's message, built in full by the caller (webhooks/execute.service.ts),
 * checked against the presented token where the database does it in the same statement
 * (messages/webhook-message.repository.ts). Resolves to false when that check refused it.
 */
export function storeWebhookMessage(deps: Deps, message: NewMessage, tokenHash: string, signed: boolean, username: string | null, avatarUrl: string | null): Promise<unknown> {
  return insertWebhookMessage(deps.db, message, tokenHash, signed, username, avatarUrl);
}

/** A message this webhook posted, or undefined (any other message, or a malformed id). */
export function messageOfWebhook(deps: Deps, webhookId: string, messageId: string): Promise<WebhookMessage | undefined> {
  return findWebhookMessage(deps.db, webhookId, messageId);
}

/** The webhook whose message changes: its id, and its server for the event. */
type MessagesWebhook = { readonly id: string; readonly serverId: string };

/** Edits a message this webhook posted (live views hear `message.updated`); undefined when there is no such message. */
export async function changeMessageOfWebhook(
  deps: Deps,
  acting: Acting<Who>,
  webhook: MessagesWebhook,
  messageId: string,
  changes: { content?: string; embeds?: unknown[]; editedAt: number },
): Promise<WebhookMessage | undefined> {
  const edited = await updateWebhookMessage(deps.db, webhook.id, messageId, changes);
  if (edited) await emitted(deps, acting, { type: 'message.updated', serverId: webhook.serverId, channelId: edited.channelId, messageId: edited.id });
  return edited;
}

/**
 * Deletes a message this webhook posted, returning its channel; undefined when there is none.
 * `message.deleted` names the webhook as the author: the audit log keeps it only when someone
 * else deleted it (modules/audit/audit.ts).
 */
export async function removeMessageOfWebhook(deps: Deps, acting: Acting<Who>, webhook: MessagesWebhook, messageId: string): Promise<{ channelId: string } | undefined> {
  const deleted = await deleteWebhookMessage(deps.db, webhook.id, messageId);
  // Issue #42 §1: its files go at once (the maintenance job's sweep would, later).
  if (deleted) await removeFilesOfMessages(deps, [messageId]);
  if (deleted) await emitted(deps, acting, { type: 'message.deleted', serverId: webhook.serverId, channelId: deleted.channelId, messageId, authorId: webhook.id });
  return deleted;
}

/** The avatar URLs this webhook's messages were posted with, among the channel's latest `limit`. */
export function recentWebhookAvatarUrls(deps: Deps, channelId: string, webhookId: string, limit: number): Promise<string[]> {
  return listRecentWebhookAvatarUrls(deps.db, channelId, webhookId, limit);
}

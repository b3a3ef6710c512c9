import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { AccessError, ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import type { Deps } from '../../deps.js';
import { changing, emitted } from '../../events/event-bus.js';
import { botChannelAccess, type BotChannelAccess, type BotPrincipal } from '../applications/bots.service.js';
import { getPersonById } from '../directory/people.service.js';
import { findDmPair } from './dms.repository.js';
import { messageIsEmpty } from './embed.js';
import { withInteractions, type InteractionMessageResource } from './interaction-metadata.js';
import { listMessageInteractions } from './message-interactions.repository.js';
import { deleteMessageRow } from './message-actions.repository.js';
import { parseMessagePayload } from './message-payload.js';
import { findApiMessage, listHistoryPage, updateAuthoredMessage, type HistoryAnchor } from './messages.repository.js';
import { presentDmChannel, presentGuildChannel, presentMessage, type DmChannelResource, type GuildChannelResource, type MessageResource, type MessageSource } from '../resources/resources.js';

/**
 * What bots read, edit and delete in channels (issue #40 §4), at Discord's paths with Discord's
 * objects, authorized by the bot's roles in the channel's server (posting: bot-messages.service.ts).
 * Discord's answers: a channel the bot cannot reach at all (unknown, another server's, someone
 * else's DM) is 404 10003, so other servers' channels do not leak; one of its servers that its
 * roles do not let it view is 403 50001 Missing Access.
 */

/** The bot's access to a channel it may view (View channel), else 10003 / 50001. */
async function viewableChannel(deps: Deps, bot: BotPrincipal, channelId: string): Promise<BotChannelAccess> {
  const access = await botChannelAccess(deps, bot, channelId);
  if ((access.permissions & Permission.VIEW_CHANNEL) === 0n) throw ApiErrors.missingAccess();
  return access;
}

const canReadHistory = (access: BotChannelAccess) => (access.permissions & Permission.READ_MESSAGE_HISTORY) !== 0n;

/** GET /channels/{id}: a server text channel, or a DM with the person as its recipient. */
export async function readBotChannel(deps: Deps, bot: BotPrincipal, channelId: string): Promise<GuildChannelResource | DmChannelResource> {
  const { channel, serverId } = await viewableChannel(deps, bot, channelId);
  if (serverId !== null) return presentGuildChannel({ ...channel, serverId });
  const pair = await findDmPair(deps.db, channel.id);
  const otherId = pair === undefined ? undefined : pair.userLow === bot.botUserId ? pair.userHigh : pair.userLow;
  const other = otherId === undefined ? undefined : await getPersonById(deps, otherId);
  return presentDmChannel(channel.id, other ? [other] : []);
}

/** A bot reads what it may see as Discord's message objects; one that answers a command carries who used which (issue #40 §2), in one query per page. */
async function presented(deps: Deps, messages: readonly MessageSource[]): Promise<Array<MessageResource | InteractionMessageResource>> {
  const interactions = await listMessageInteractions(deps.db, messages.filter((m) => m.applicationId !== null).map((m) => m.id));
  return withInteractions(messages.map(presentMessage), interactions);
}

async function presentedOne(deps: Deps, message: MessageSource): Promise<MessageResource | InteractionMessageResource> {
  return (await presented(deps, [message]))[0] as MessageResource | InteractionMessageResource;
}

/** How many messages a page of history holds unless `limit` says (Discord: 1–100, default 50; dms.schemas.ts HistoryQuery checks the range). */
const HISTORY_LIMIT_DEFAULT = 50;

/**
 * GET /channels/{id}/messages: a page of history, newest first. Without Read message history the
 * answer is an empty list, as Discord's ("no messages will be returned"). At most one of before,
 * after and around (50035 otherwise: Discord uses one and ignores the rest, which hides mistakes).
 */
export async function readBotHistory(deps: Deps, bot: BotPrincipal, channelId: string, query: { before?: string; after?: string; around?: string; limit?: number }): Promise<Array<MessageResource | InteractionMessageResource>> {
  const given = (['before', 'after', 'around'] as const).filter((key) => query[key] !== undefined);
  if (given.length > 1) throw invalidField([given[1] as string], 'ONE_OF', 'Only one of before, after and around may be given.');
  const access = await viewableChannel(deps, bot, channelId);
  if (!canReadHistory(access)) return [];
  const anchor: HistoryAnchor =
    query.before !== undefined ? { before: query.before } : query.after !== undefined ? { after: query.after } : query.around !== undefined ? { around: query.around } : {};
  const page = await listHistoryPage(deps.db, access.channel.id, anchor, query.limit ?? HISTORY_LIMIT_DEFAULT);
  return presented(deps, page);
}

/** GET /channels/{id}/messages/{id}: needs View channel and Read message history (50013). */
export async function readBotMessage(deps: Deps, bot: BotPrincipal, channelId: string, messageId: string): Promise<MessageResource | InteractionMessageResource> {
  const access = await viewableChannel(deps, bot, channelId);
  if (!canReadHistory(access)) throw ApiErrors.missingPermissions();
  const message = await findApiMessage(deps.db, access.channel.id, messageId);
  if (!message) throw ApiErrors.unknownMessage();
  return presentedOne(deps, message);
}

/** Discord's answer to editing someone else's message. */
const notYourMessage = () => new AccessError(403, 50005, 'Cannot edit a message authored by another user');

/**
 * PATCH /channels/{id}/messages/{id}: the bot's own message only (50005 for anyone else's), with
 * webhook edit's rules (message-payload.ts, partial): absent fields stay, embeds need Embed links
 * in a server, and the edit may not leave the message empty (50006). Live views hear `message.updated`.
 */
export async function editBotMessage(deps: Deps, acting: Acting<Actor>, bot: BotPrincipal, channelId: string, messageId: string, body: unknown): Promise<MessageResource | InteractionMessageResource> {
  const access = await viewableChannel(deps, bot, channelId);
  const current = await findApiMessage(deps.db, access.channel.id, messageId);
  if (!current) throw ApiErrors.unknownMessage();
  if (current.webhookId !== null || current.author.id !== bot.botUserId) throw notYourMessage();
  const parsed = parseMessagePayload(body ?? {}, { identityOverride: false, serviceName: deps.config.serviceName, partial: true });
  if (!parsed.ok) throw parsed.error;
  const { content, embeds } = parsed.value;
  if (embeds !== undefined && embeds.length > 0 && (access.permissions & Permission.EMBED_LINKS) === 0n) throw ApiErrors.missingPermissions();
  const next = { content: content ?? current.content, embeds: embeds ?? current.embeds };
  if (messageIsEmpty(next.content, next.embeds)) throw ApiErrors.emptyMessage();
  const editedAt = deps.clock.now();
  const changes: { content?: string; embeds?: unknown[]; editedAt: number } = { editedAt };
  if (content !== undefined) changes.content = content;
  if (embeds !== undefined) changes.embeds = embeds;
  if (!(await updateAuthoredMessage(deps.db, access.channel.id, current.id, bot.botUserId, changes))) throw ApiErrors.unknownMessage();
  await emitted(deps, acting, { type: 'message.updated', serverId: access.serverId, channelId: access.channel.id, messageId: current.id });
  return presentedOne(deps, { ...current, ...next, editedAt });
}

/**
 * DELETE /channels/{id}/messages/{id}: the bot's own message, or anyone's with Manage messages in
 * a server (50013 otherwise; in a DM only its own). As for people (message-actions.service.ts), a
 * moderator's delete of someone else's message is audited in the delete's transaction.
 */
export async function deleteBotMessage(deps: Deps, acting: Acting<Actor>, bot: BotPrincipal, channelId: string, messageId: string): Promise<void> {
  const access = await viewableChannel(deps, bot, channelId);
  const current = await findApiMessage(deps.db, access.channel.id, messageId);
  if (!current) throw ApiErrors.unknownMessage();
  const own = current.webhookId === null && current.author.id === bot.botUserId;
  const event = { type: 'message.deleted', serverId: access.serverId, channelId: access.channel.id, messageId: current.id, authorId: current.author.id } as const;
  if (own) {
    if (!(await deleteMessageRow(deps.db, access.channel.id, current.id))) throw ApiErrors.unknownMessage();
    await emitted(deps, acting, event);
    return;
  }
  if (access.serverId === null || (access.permissions & Permission.MANAGE_MESSAGES) === 0n) throw ApiErrors.missingPermissions();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteMessageRow(trx, access.channel.id, current.id))) throw ApiErrors.unknownMessage();
    emit(event);
  });
}

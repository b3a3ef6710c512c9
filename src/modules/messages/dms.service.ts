import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { isUniqueViolation } from '../../storage/types.js';
import type { BotPrincipal } from '../applications/bots.service.js';
import { isUserInstalled } from '../applications/user-installs.service.js';
import { JOINED_BY_OWN_ACT } from '../directory/members.js';
import { getPersonById } from '../directory/people.service.js';
import { type DmConversation, type DmConversationSummary, type DmParty } from './dms.js';
import { findDmChannelIdForPair, findDmPair, findMessageContents, findParty, insertDmChannel, listDmConversations, shareAServer } from './dms.repository.js';
import { channelHistory, withEphemeral } from './messages.service.js';
import { presentDmChannel, type DmChannelResource } from '../resources/resources.js';

/** POST /api/v1/users/@me/channels answers Discord's DM channel object (resources.ts). */
export type DmChannelRecord = DmChannelResource;

/**
 * Who an app's bot may message directly (SPEC §5.2): a person (never itself, never another bot)
 * who user-installed the app or shares a server with the bot that they joined by their own act
 * (created it, joined by an invite link, accepted an invitation: issue #21 §3). A membership
 * someone else made for them (an operator's `members add`, or one older than invitations) is not
 * their consent. A disabled person cannot be messaged (issue #39). Checked when a DM is opened and again on every message, so Remove (Settings →
 * Installed apps) or leaving the server takes effect at once.
 */
export async function botMayMessage(deps: Deps, app: { applicationId: string; botUserId: string }, user: Pick<DmParty, 'id' | 'bot'>): Promise<boolean> {
  if (user.bot || user.id === app.botUserId) return false;
  // Issue #39: a person the operator disabled is out of reach (50007) until enabled.
  if ((await getPersonById(deps, user.id))?.disabledAt !== null) return false;
  if (await isUserInstalled(deps, app.applicationId, user.id)) return true;
  return shareAServer(deps.db, app.botUserId, user.id, JOINED_BY_OWN_ACT);
}

/**
 * The recipient id of the open-DM body: `recipientId`, or Discord's `recipient_id`. The error
 * names the key that was sent. Missing or not a snowflake → 50035; an unknown user → 50035 too,
 * as Discord answers 400 for an id that names nobody (docs/user-installs.md).
 */
function recipientIdOf(body: unknown): { key: string; id: string } {
  const obj = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const key = obj['recipientId'] === undefined && obj['recipient_id'] !== undefined ? 'recipient_id' : 'recipientId';
  const value = obj[key];
  if (value === undefined || value === null || value === '') throw invalidField([key], 'BASE_TYPE_REQUIRED', 'This field is required');
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !isSnowflake(text)) throw invalidField([key], 'NUMBER_TYPE_COERCE', `Value "${String(value).slice(0, 40)}" is not snowflake.`);
  return { key, id: text };
}

/**
 * Opens, or returns, the DM channel between the bot and a person (POST /api/v1/users/@me/channels,
 * SPEC §5.2). The channel row (type 1, no server, empty name) and its dm_channels pair are written
 * in one transaction; when two opens race, the loser hits the pair's unique key, rolls back, and
 * returns the winner's channel. Refused with 50007 unless botMayMessage allows it. `acting` is the
 * bot's; no event: opening a conversation is neither audited nor seen by any live view.
 */
export async function openDm(deps: Deps, acting: Acting<Actor>, bot: BotPrincipal, body: unknown): Promise<DmChannelRecord> {
  const { key, id } = recipientIdOf(body);
  const other = await findParty(deps.db, id);
  if (!other) throw invalidField([key], 'USER_UNKNOWN', 'Unknown user.');
  if (!(await botMayMessage(deps, { applicationId: bot.application.id, botUserId: bot.botUserId }, other))) throw ApiErrors.cannotMessageUser();

  const record = (channelId: string): DmChannelRecord => presentDmChannel(channelId, [other]);
  const existing = await findDmChannelIdForPair(deps.db, bot.botUserId, other.id);
  if (existing) return record(existing);
  const channelId = deps.ids.next();
  try {
    await changing(deps, acting, async (trx) => {
      await insertDmChannel(trx, { channelId, userA: bot.botUserId, userB: other.id, createdAt: deps.clock.now() });
    });
    return record(channelId);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await findDmChannelIdForPair(deps.db, bot.botUserId, other.id);
    if (!winner) throw error;
    return record(winner);
  }
}

/**
 * For a message to a DM channel: the bot must still be allowed to message the other party (the
 * person may have removed the app and share no server with it) → else 50007. The caller has
 * already checked that the bot is one of the channel's two users.
 */
export async function requireBotMayPostInDm(deps: Deps, bot: BotPrincipal, channelId: string): Promise<void> {
  const pair = await findDmPair(deps.db, channelId);
  if (!pair) throw ApiErrors.unknownChannel();
  const otherId = pair.userLow === bot.botUserId ? pair.userHigh : pair.userLow;
  const other = await findParty(deps.db, otherId);
  if (!other || !(await botMayMessage(deps, { applicationId: bot.application.id, botUserId: bot.botUserId }, other))) throw ApiErrors.cannotMessageUser();
}

/** Snowflakes are time-ordered, so the newest message id (or the channel's, when empty) orders by activity. */
function activityKey(c: { channelId: string; lastMessageId: string | null }): bigint {
  return BigInt(c.lastMessageId ?? c.channelId);
}

/** The person's conversations, the most recently active first (/messages). */
export async function dmConversations(deps: Deps, userId: string): Promise<DmConversationSummary[]> {
  const rows = await listDmConversations(deps.db, userId);
  rows.sort((a, b) => {
    const x = activityKey(a);
    const y = activityKey(b);
    return x === y ? 0 : x > y ? -1 : 1;
  });
  const lastIds = rows.map((r) => r.lastMessageId).filter((id): id is string => id !== null);
  const contents = await findMessageContents(deps.db, lastIds);
  return rows.map((r) => {
    const content = r.lastMessageId ? contents.get(r.lastMessageId) : undefined;
    return {
      channelId: r.channelId,
      other: r.other,
      last: r.lastMessageId && content ? { at: content.createdAt, content: content.content, hasEmbeds: content.hasEmbeds } : null,
    };
  });
}

/**
 * A DM conversation for one of its two participants; anyone else — and any malformed or unknown
 * id — gets the same 404 (10003 Unknown Channel), so a conversation's existence does not leak.
 */
export async function loadDmConversation(deps: Deps, viewerId: string, channelId: string, before?: string): Promise<DmConversation> {
  if (!isSnowflake(channelId)) throw ApiErrors.unknownChannel();
  const pair = await findDmPair(deps.db, channelId);
  if (!pair || (pair.userLow !== viewerId && pair.userHigh !== viewerId)) throw ApiErrors.unknownChannel();
  const other = await findParty(deps.db, pair.userLow === viewerId ? pair.userHigh : pair.userLow);
  if (!other) throw ApiErrors.unknownChannel();
  const [history, mayMessage] = await Promise.all([
    channelHistory(deps, channelId, before),
    other.bot && other.applicationId !== null ? botMayMessage(deps, { applicationId: other.applicationId, botUserId: other.id }, { id: viewerId, bot: false }) : Promise.resolve(false),
  ]);
  // Issue #40 §2: the answers of the bot's app that are for the viewer alone, on the newest page.
  const messages = before === undefined ? await withEphemeral(deps, viewerId, channelId, history) : history.messages;
  return { channelId, other, messages, hasOlder: history.hasOlder, before, botMayStillMessage: mayMessage };
}

/**
 * The app's bot on the other side of `personId`'s DM `channelId`; undefined when the channel is
 * not a DM of theirs or the other party is a person (commands in DMs, issue #40 §2).
 */
export async function dmBotOf(deps: Deps, channelId: string, personId: string): Promise<{ applicationId: string; botUserId: string; name: string } | undefined> {
  if (!isSnowflake(channelId)) return undefined;
  const pair = await findDmPair(deps.db, channelId);
  if (!pair || (pair.userLow !== personId && pair.userHigh !== personId)) return undefined;
  const other = await findParty(deps.db, pair.userLow === personId ? pair.userHigh : pair.userLow);
  if (!other?.bot || other.applicationId === null) return undefined;
  return { applicationId: other.applicationId, botUserId: other.id, name: other.name };
}

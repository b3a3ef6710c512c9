import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { hasPrefix, hashSecret, issueSecret } from '../../core/secrets.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { isUniqueViolation } from '../../storage/types.js';
import type { Channel } from '../directory/channels.js';
import { getChannel } from '../directory/channels.service.js';
import type { Person } from '../directory/people.js';
import { createPerson, getPersonById, getPersonByUsername } from '../directory/people.service.js';
import { memberPermissions } from '../directory/servers.service.js';
import type { Application } from './applications.js';
import { isRegisteredApplication } from '../client-registration/client-registration.js';
import { getManagedApplication } from './applications.service.js';
import { attachBot, findApplicationByBotTokenHash, isDmParticipant, replaceBotTokenHash } from './bots.repository.js';
import { botUsername, parseBotAuthorization } from './bots.js';

/** Who a request with valid bot credentials acts as: the application and its bot account. */
export interface BotPrincipal {
  application: Application;
  botUserId: string;
}

/** The actor of a request with bot credentials: the bot account, acting for its application. */
export function botActor(bot: BotPrincipal): Actor {
  return { kind: 'bot', id: bot.botUserId, applicationId: bot.application.id };
}

/**
 * What a bot may do in a direct-message channel it is part of (there are no roles there): read it
 * (issue #40 §4) and post, with files (issue #42 §2: Discord has no Attach files in DMs, files are allowed).
 */
export const DM_PERMISSIONS = Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.EMBED_LINKS | Permission.ATTACH_FILES | Permission.READ_MESSAGE_HISTORY;

/**
 * Usernames tried before giving up: `name`, `name_2` … `name_5`, then random four-digit suffixes
 * (`name_4821`), so any number of apps sharing a name ("Test Bot") can each have a bot.
 */
const USERNAME_ATTEMPTS = 25;
const SEQUENTIAL_ATTEMPTS = 5;

const alreadyHasBot = () => invalidField(['bot'], 'APPLICATION_HAS_BOT', 'This application already has a bot. Reset its token instead.');
const hasNoBot = () => invalidField(['bot'], 'APPLICATION_HAS_NO_BOT', 'This application has no bot yet. Add one first.');

/**
 * Gives an application its bot (issue #4 "Bots in the developer portal"): a bot account — a
 * users row with bot = 1 and the app's id, named after the app, with the app's icon as avatar and
 * a unique username derived from the app's name — and a bot token, returned once here and stored
 * only as SHA-256 (DESIGN §3). The account and the link to it are written in one transaction.
 * An app the actor may not manage, or none → 404 10002; one that already has a bot → 50035 at `bot`.
 */
export async function enableBot(deps: Deps, acting: Acting, appId: string): Promise<{ botUserId: string; token: string }> {
  const app = await getManagedApplication(deps, acting.actor, appId);
  if (app.botUserId !== null) throw alreadyHasBot();
  // Issue #41 §3: nobody reviewed a registered app, so it gets no account that can join servers.
  if (isRegisteredApplication(app)) throw invalidField(['bot'], 'APPLICATION_REGISTERED', 'An application that registered itself (RFC 7591) cannot have a bot.');

  const token = issueSecret(deps.random, 'botToken');
  const botUserId = deps.ids.next();
  for (let attempt = 1; attempt <= USERNAME_ATTEMPTS; attempt += 1) {
    const suffix = attempt <= SEQUENTIAL_ATTEMPTS ? attempt : 1000 + (deps.random.bytes(2).readUInt16BE(0) % 9000);
    const username = botUsername(app.name, suffix);
    if (await getPersonByUsername(deps, username)) continue;
    try {
      await changing(deps, acting, async (trx, emit) => {
        const now = deps.clock.now();
        await createPerson(trx, { id: botUserId, username, name: app.name, email: null, passwordHash: null, bot: true, applicationId: app.id, avatarUrl: app.iconUrl, createdAt: now });
        // Rolls the account back when another request gave the app a bot meanwhile.
        if (!(await attachBot(trx, app.id, botUserId, token.hash, now))) throw alreadyHasBot();
        // Issue #37 §2: the app gaining a bot is a change of the app; the row names the account, never its token.
        emit({ type: 'app.updated', applicationId: app.id, changes: [{ key: 'bot_user_id', old: null, new: botUserId }] });
      });
      return { botUserId, token: token.plain };
    } catch (error) {
      // Someone took this username between the check and the insert: try the next one.
      if (isUniqueViolation(error)) continue;
      throw error;
    }
  }
  throw invalidField(['name'], 'BOT_USERNAME_UNAVAILABLE', 'No free username could be derived from this application name for its bot. Rename the application and try again.');
}

/**
 * Issues a new bot token and returns it (shown once). The old one stops working at once: one
 * UPDATE replaces the only stored hash. An app the actor may not manage, or none → 10002; an app
 * without a bot → 50035.
 */
export async function resetBotToken(deps: Deps, acting: Acting, appId: string): Promise<string> {
  const app = await getManagedApplication(deps, acting.actor, appId);
  if (app.botUserId === null) throw hasNoBot();
  const token = issueSecret(deps.random, 'botToken');
  await changing(deps, acting, async (trx, emit) => {
    if (!(await replaceBotTokenHash(trx, app.id, token.hash, deps.clock.now()))) throw hasNoBot();
    // The event names the app only: the token is shown once to the caller and kept nowhere else.
    emit({ type: 'bot_token.reset', applicationId: app.id });
  });
  return token.plain;
}

/** The app's bot account, when it has one (for the portal's Bot section). */
export async function findBotAccount(deps: Deps, app: Pick<Application, 'botUserId'>): Promise<Person | undefined> {
  return app.botUserId === null ? undefined : getPersonById(deps, app.botUserId);
}

/**
 * Bot credentials (DESIGN §1): `Authorization: Bot <token>`, scheme case-insensitive. Missing,
 * malformed (a Bearer token included), unknown or replaced tokens, and a disabled app's (issue
 * #39) → 401 `{code: 0}`. One indexed
 * lookup by the token's hash; a token without the bot prefix never reaches the database.
 */
export async function authenticateBot(deps: Deps, authorization: string | undefined): Promise<BotPrincipal> {
  const token = parseBotAuthorization(authorization);
  if (token === undefined || !hasPrefix(token, 'botToken')) throw ApiErrors.unauthorized();
  const application = await findApplicationByBotTokenHash(deps.db, hashSecret(token));
  // Issue #39: a disabled app's bot is inert: its token authenticates nothing until it is enabled.
  if (!application || application.botUserId === null || application.disabledAt !== null) throw ApiErrors.unauthorized();
  return { application, botUserId: application.botUserId };
}

/**
 * What a bot may do in a channel (issue #4 "Bot credentials": a bot reaches exactly the servers
 * it is in, with its roles' permissions). A malformed or unknown channel, or one of a server the
 * bot is not in → 404 10003 (so other servers' channels do not leak); a member without every bit
 * of `bits` → 403 50013. A direct-message channel is reachable only by its two people, with
 * DM_PERMISSIONS.
 */
export async function requireBotChannelPermission(deps: Deps, bot: BotPrincipal, channelId: string, bits: bigint): Promise<BotChannelAccess> {
  const access = await botChannelAccess(deps, bot, channelId);
  if ((access.permissions & bits) !== bits) throw ApiErrors.missingPermissions();
  return access;
}

/** A channel the bot reaches, and what it holds there. */
export interface BotChannelAccess {
  channel: Channel;
  serverId: string | null;
  permissions: bigint;
}

/**
 * The bot's permissions in a channel whatever they are: a malformed or unknown channel, one of a
 * server the bot is not in, or a DM it is not part of → 404 10003 (requireBotChannelPermission).
 */
export async function botChannelAccess(deps: Deps, bot: BotPrincipal, channelId: string): Promise<BotChannelAccess> {
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel) throw ApiErrors.unknownChannel();
  if (channel.serverId === null) {
    if (!(await isDmParticipant(deps.db, channel.id, bot.botUserId))) throw ApiErrors.unknownChannel();
    return { channel, serverId: null, permissions: DM_PERMISSIONS };
  }
  const held = await memberPermissions(deps, channel.serverId, bot.botUserId);
  if (held === undefined) throw ApiErrors.unknownChannel();
  return { channel, serverId: channel.serverId, permissions: held };
}

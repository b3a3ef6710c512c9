import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { callInteractionsEndpoint, logInteractionDelivery } from '../app-events/app-events.service.js';
import { commandAvailable, memberMayUse, neededPermissions, type CommandPlace, type CommandView } from '../applications/bots.js';
import { listApplicationCommands } from '../applications/commands.service.js';
import { installedCommandNamed, listServerInstalls, type InstalledCommand } from '../applications/installs.service.js';
import { permissionLabelList } from '../applications/installs.js';
import { authorize, memberPermissions } from '../directory/access.service.js';
import { check } from '../directory/policy.js';
import { isUserInstalled } from '../applications/user-installs.service.js';
import { getChannel } from '../directory/channels.service.js';
import { readOwnMember, readUser, resolveOptionTargets } from '../directory/guilds.service.js';
import { dmBotOf } from '../messages/dms.service.js';
import { readEphemeralMessage, readInteractionMessage, type InteractionMessage } from '../messages/interaction-messages.service.js';
import { interactionMessageView, type MessageView } from '../messages/messages.js';
import { interactionNow, newInteractionToken, recordInteraction, useAnswer } from './followups.service.js';
import type { StoredInteraction } from './interactions.repository.js';
import { checkAnswer, composerCommands, INVOKE_CHANNEL_RULE, INVOKE_PERSON_RULE, invokeChannelBucketKey, invokePersonBucketKey, InteractionContext, InteractionType, IntegrationType, optionTargets, parseSlashInput, targetMissing, typeOptions, type ComposerCommand } from './interactions.js';

/** Discord's interaction `version`. */
const INTERACTION_VERSION = 1;

/** What the invoker is told, in Discord's words, when an app's answer cannot be used. */
export const NO_RESPONSE = 'The application did not respond';
export const INVALID_ANSWER = "The application's answer was invalid";
const CANNOT_POST = 'The application may not post in this channel';
const ANSWER_GONE = 'The application answered, then deleted its answer';

/** What became of a command typed in the composer. */
export type InvocationOutcome =
  /** The app's bot posted its answer in the channel (type 4). */
  | { kind: 'posted'; message: MessageView; commandName: string }
  /** An ephemeral answer or deferral (flag 64): for the invoker alone, on their view of the channel (its page shows it). */
  | { kind: 'ephemeral'; commandName: string }
  /** Nothing was posted; `sentence` is what the invoker reads (the delivery log has why). */
  | { kind: 'failed'; sentence: string; commandName: string };

/** An installed app's command reachable from a channel. */
interface Reachable {
  applicationId: string;
  appName: string;
  botUserId: string;
  command: InstalledCommand;
}

/**
 * The server channel and the invoker's server-wide permissions there as the caller read them in
 * the same request (messages.routes.ts reads both for the page and the answer's own rights), so
 * invokeCommand need not read them again; ignored for any other channel.
 */
export interface InvokerStanding {
  channel: { id: string; serverId: string };
  permissions: bigint;
}

/** DM permissions Discord reports as an app's `app_permissions` in a DM with its bot: see, send, read history. */
const DM_APP_PERMISSIONS = Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.READ_MESSAGE_HISTORY;

/**
 * The apps whose commands `personId` reaches in the channel (issue #40 §2), in the order a typed
 * `/name` looks for the command: in a server, the apps installed with applications.commands that
 * have a bot; in a DM with an app's bot, that app when the person user-installed it
 * (applications.commands, integration type 1).
 */
async function reachableApps(deps: Deps, channel: { id: string; serverId: string | null }, personId: string): Promise<Array<Omit<Reachable, 'command'> & { commandNames: string[] }>> {
  if (channel.serverId === null) {
    const bot = await dmBotOf(deps, channel.id, personId);
    if (!bot || !(await isUserInstalled(deps, bot.applicationId, personId))) return [];
    const commands = (await listApplicationCommands(deps, bot.applicationId)).filter((c) => commandAvailable(c, 'bot-dm'));
    return [{ applicationId: bot.applicationId, appName: bot.name, botUserId: bot.botUserId, commandNames: commands.map((c) => c.name) }];
  }
  return (await listServerInstalls(deps, channel.serverId)).flatMap((install) => {
    const { id: applicationId, name: appName, botUserId } = install.application;
    return install.commandsEnabled && botUserId !== null ? [{ applicationId, appName, botUserId, commandNames: install.commands.map((c) => c.name) }] : [];
  });
}

/** The command `name` among the apps reachable in the channel; undefined when none has it. */
async function reachableCommand(deps: Deps, channel: { id: string; serverId: string | null }, personId: string, name: string): Promise<Reachable | undefined> {
  if (channel.serverId !== null) {
    // The same first app as reachableApps' order finds, in one prepared statement (docs/performance.md, Interactions).
    const found = await installedCommandNamed(deps, channel.serverId, name);
    return found && { applicationId: found.applicationId, appName: found.applicationName, botUserId: found.botUserId, command: found.command };
  }
  for (const app of await reachableApps(deps, channel, personId)) {
    if (!app.commandNames.includes(name)) continue;
    const command = (await listApplicationCommands(deps, app.applicationId)).find((c) => c.name === name && commandAvailable(c, 'bot-dm'));
    if (command) {
      const { id, type, options, defaultMemberPermissions, guildId } = command;
      return { applicationId: app.applicationId, appName: app.appName, botUserId: app.botUserId, command: { id, name, type, options, defaultMemberPermissions, guildId } };
    }
  }
  return undefined;
}

/**
 * What the composer's `/` list offers `personId` in the channel (issue #40 §2): the commands a
 * typed `/name` would run there, with their app, description and options. The caller has checked
 * that the person may view the channel and passes what they hold in its server (`held`; undefined
 * in a DM): without Use application commands the list is empty, as invoking would be refused,
 * and a command whose `default_member_permissions` they lack is left out, as on Discord.
 */
export async function commandsForComposer(deps: Deps, channel: { id: string; serverId: string | null }, personId: string, held: bigint | undefined): Promise<ComposerCommand[]> {
  if (channel.serverId !== null && (held === undefined || (held & Permission.USE_APPLICATION_COMMANDS) === 0n)) return [];
  const place: CommandPlace = channel.serverId === null ? 'bot-dm' : 'server';
  const usable = (c: CommandView) => commandAvailable(c, place) && (held === undefined || memberMayUse(c.defaultMemberPermissions, held));
  const apps = await reachableApps(deps, channel, personId);
  const serverId = channel.serverId ?? undefined;
  const withCommands = await Promise.all(apps.map(async (app) => ({ appName: app.appName, commands: (await listApplicationCommands(deps, app.applicationId, serverId)).filter(usable) })));
  return composerCommands(withCommands);
}

/**
 * Runs a composer message as an app's command when it is `/name …` and `name` is a command
 * reachable in that channel (issue #40 §2); undefined otherwise, and the message is posted as text.
 * In a server the person must hold Use application commands there (403 50013); in a DM with an
 * app's bot, their user install of that app is what makes its commands reachable. Options are
 * typed by the command's option types: a bad one is a 50035 at `content`
 * with the reason, and nothing is sent. The app's endpoint gets Discord's APPLICATION_COMMAND
 * interaction (3 s); its answer of type 4 is posted by the app's bot, or with flag 64 shown to the
 * invoker only; type 5 (deferred) posts the bot's "thinking" placeholder, which the app fills
 * through its follow-up routes (followups.service.ts). No answer, or one that is invalid, posts
 * nothing: the invoker reads NO_RESPONSE / INVALID_ANSWER and the app's delivery log records why.
 */
export async function invokeCommand(deps: Deps, acting: Acting<Actor>, channelId: string, content: string, known?: InvokerStanding): Promise<InvocationOutcome | undefined> {
  const input = parseSlashInput(content);
  if (!input) return undefined;
  const actor = acting.actor;
  if (actor.kind !== 'person') return undefined;
  const given = known !== undefined && known.channel.id === channelId ? known : undefined;
  const channel = given?.channel ?? (isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined);
  if (!channel) throw ApiErrors.unknownChannel();
  const reachable = await reachableCommand(deps, channel, actor.id, input.name);
  if (!reachable) return undefined;

  const serverId = channel.serverId;
  // Discord: invoking in a server needs to see the channel and Use application commands there; in a
  // DM, reachableCommand has found the person's user install of the bot's app.
  // The composer's route has just read the invoker's permissions in this server: checked here as
  // they stand, not read again (the server, member and permission rows, once per invocation).
  const need = { all: Permission.VIEW_CHANNEL | Permission.USE_APPLICATION_COMMANDS };
  const permissions =
    serverId === null
      ? undefined
      : given !== undefined
        ? check({ actor, held: given.permissions }, need, ApiErrors.unknownChannel)
        : await authorize(deps, actor, serverId, need, ApiErrors.unknownChannel);
  // Discord's default_member_permissions: the member needs those bits here (Administrators always may).
  if (permissions !== undefined && !memberMayUse(reachable.command.defaultMemberPermissions, permissions)) throw commandNeeds(reachable.command.name, reachable.command.defaultMemberPermissions);
  const typed = typeOptions(reachable.command.name, reachable.command.options, input.rest);
  if (!typed.ok) throw invalidField(['content'], 'APPLICATION_COMMAND_OPTIONS_INVALID', typed.message);
  // Discord's data.resolved: the users, members, roles and channels the options name, which must exist here.
  const targets = optionTargets(typed.options);
  const wanted = targets.users.length + targets.channels.length + targets.roles.length + targets.mentionables.length > 0;
  const resolution = wanted ? await resolveOptionTargets(deps, serverId, targets, permissions ?? 0n) : undefined;
  const missing = resolution?.missing[0];
  if (missing !== undefined) throw invalidField(['content'], 'APPLICATION_COMMAND_OPTIONS_INVALID', targetMissing(reachable.command.name, typed.options, missing));
  const limited = await invocationLimited(deps, reachable.applicationId, channel.id, actor.id);
  if (limited !== undefined) return { kind: 'failed', sentence: `You are using ${reachable.appName}'s commands too fast here: try again in ${Math.max(1, Math.ceil(limited / 1000))} s.`, commandName: reachable.command.name };

  // Discord: a server's interaction carries guild_id and the invoker as `member`, context 0 and the
  // server as the authorizing guild install; a DM's carries the invoker as `user`, context 1 (BOT_DM)
  // and the person as the authorizing user install, and no guild_id.
  const where = serverId === null || permissions === undefined ? await dmContext(deps, channel.id, actor.id) : await serverContext(deps, serverId, channel.id, actor.id, permissions, reachable.botUserId);
  const interactionId = deps.ids.next();
  const token = newInteractionToken(deps);
  // Stored before it is sent: the app may answer by callback or follow up at once, on any instance.
  await recordInteraction(deps, { id: interactionId, tokenHash: token.hash, applicationId: reachable.applicationId, botUserId: reachable.botUserId, channelId: channel.id, userId: actor.id, commandName: reachable.command.name });
  const interaction = {
    id: interactionId,
    application_id: reachable.applicationId,
    type: InteractionType.APPLICATION_COMMAND,
    data: {
      id: reachable.command.id,
      name: reachable.command.name,
      type: reachable.command.type,
      ...(typed.options.length > 0 ? { options: typed.options } : {}),
      ...(resolution ? { resolved: resolution.resolved } : {}),
      // Discord: the server a guild command is registered for.
      ...(reachable.command.guildId === null ? {} : { guild_id: reachable.command.guildId }),
    },
    ...where,
    // Issue #40 §2: the token authorizes the callback and follow-ups for 15 minutes (followups.service.ts).
    token: token.plain,
    version: INTERACTION_VERSION,
    locale: 'en-US',
    // Discord: no SKUs here, and the largest upload a follow-up may carry (GATEHOUSE_ATTACHMENT_MAX_BYTES).
    entitlements: [],
    attachment_size_limit: deps.config.attachmentMaxBytes,
  };

  const commandName = reachable.command.name;
  const answer = await callInteractionsEndpoint(deps, reachable.applicationId, JSON.stringify(interaction));
  // Discord: an app may answer by POST …/callback while its endpoint's request is open; that answer counts.
  const stored = await interactionNow(deps, interactionId);
  if (stored?.acknowledged) {
    if (answer !== undefined) await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, null);
    return answeredByCallback(deps, stored, commandName);
  }
  if (answer === undefined || stored === undefined) return { kind: 'failed', sentence: NO_RESPONSE, commandName };
  if (answer.failure !== null || answer.status === null) {
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, answer.failure ?? 'no answer');
    return { kind: 'failed', sentence: NO_RESPONSE, commandName };
  }
  const checked = checkAnswer(answer.status, answer.body, deps.config.serviceName);
  if (checked.kind === 'invalid') {
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, `The answer was refused: ${checked.reason}.`);
    return { kind: 'failed', sentence: INVALID_ANSWER, commandName };
  }
  try {
    const used = await useAnswer(deps, acting, stored, checked);
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, null);
    return outcomeOf(used.message, commandName);
  } catch (error) {
    // The bot's own rights decide where it posts (View channel and Send messages, as for its REST posts).
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    // A callback answered between the endpoint's answer and this one: that answer stands.
    if (error.code === 40060) return answeredByCallback(deps, (await interactionNow(deps, interactionId)) ?? stored, commandName);
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, `The answer could not be posted: ${error.message}.`);
    return { kind: 'failed', sentence: CANNOT_POST, commandName };
  }
}

/**
 * The refusal of a command the member may not use (403 50013, shown beside the composer with what
 * they typed): which permission it needs, or that it is for administrators.
 */
function commandNeeds(name: string, defaultMemberPermissions: string | null): ApiError {
  const needed = neededPermissions(defaultMemberPermissions ?? '0');
  return new ApiError(403, 50013, needed === 0n ? `Only administrators can use /${name} here.` : `You need the ${permissionLabelList(needed).join(', ')} permission to use /${name} here.`);
}

/** A DM interaction's context: the invoker as `user`, context 1 (BOT_DM), the person's user install. */
async function dmContext(deps: Deps, channelId: string, personId: string) {
  return {
    channel_id: channelId,
    user: await readUser(deps, personId),
    app_permissions: DM_APP_PERMISSIONS.toString(),
    context: InteractionContext.BOT_DM,
    authorizing_integration_owners: { [IntegrationType.USER_INSTALL]: personId },
  };
}

/**
 * A server interaction's context: guild_id, the invoker as `member` (their membership is what
 * `permissions` established), the bot's permissions there as `app_permissions`, context 0 and the
 * server's install. The member and the bot's permissions are read together: under load each read
 * that waits for a write group's COMMIT costs the invocation a turn of the event loop.
 */
async function serverContext(deps: Deps, serverId: string, channelId: string, personId: string, permissions: bigint, botUserId: string) {
  const [member, appPermissions] = await Promise.all([readOwnMember(deps, serverId, personId), memberPermissions(deps, serverId, botUserId)]);
  return {
    guild_id: serverId,
    guild: { id: serverId, locale: 'en-US', features: [] },
    guild_locale: 'en-US',
    channel_id: channelId,
    member: { ...member, permissions: permissions.toString() },
    app_permissions: (appPermissions ?? 0n).toString(),
    context: InteractionContext.GUILD,
    authorizing_integration_owners: { [IntegrationType.GUILD_INSTALL]: serverId },
  };
}

/** What the invoker is shown of the app's answer: its message, public or for them alone. */
function outcomeOf(stored: InteractionMessage, commandName: string): InvocationOutcome {
  return stored.ephemeral ? { kind: 'ephemeral', commandName } : { kind: 'posted', message: interactionMessageView(stored), commandName };
}

/** What the invoker sees of an answer the app sent by POST …/callback while its endpoint's request was open. */
async function answeredByCallback(deps: Deps, interaction: StoredInteraction, commandName: string): Promise<InvocationOutcome> {
  const id = interaction.originalMessageId;
  const message = id === null ? undefined : interaction.ephemeral ? await readEphemeralMessage(deps, id) : await readInteractionMessage(deps, interaction.channelId, id);
  // Deleted by the app already: nothing is left to show, as when nothing was posted.
  return message ? outcomeOf(message, commandName) : { kind: 'failed', sentence: ANSWER_GONE, commandName };
}

/**
 * Issue #40 §2: invocations per app and channel, and per person and app (a person cannot flood
 * an app), in the shared rate-limit store; undefined when allowed, else ms until it is.
 */
async function invocationLimited(deps: Deps, applicationId: string, channelId: string, personId: string): Promise<number | undefined> {
  const now = deps.clock.now();
  const person = await deps.buckets.take(invokePersonBucketKey(applicationId, personId), INVOKE_PERSON_RULE, now);
  if (!person.allowed) return person.resetAfterMs;
  const channel = await deps.buckets.take(invokeChannelBucketKey(applicationId, channelId), INVOKE_CHANNEL_RULE, now);
  return channel.allowed ? undefined : channel.resetAfterMs;
}

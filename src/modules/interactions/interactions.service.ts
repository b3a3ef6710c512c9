import { actingAs, type Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { callInteractionsEndpoint, logInteractionDelivery } from '../app-events/app-events.service.js';
import { listApplicationCommands } from '../applications/commands.service.js';
import { listServerInstalls } from '../applications/installs.service.js';
import { authorize, memberPermissions } from '../directory/access.service.js';
import { getChannel } from '../directory/channels.service.js';
import { readGuildMember } from '../directory/guilds.service.js';
import type { MessageView } from '../messages/messages.js';
import { postMessage } from '../messages/messages.service.js';
import { checkAnswer, InteractionType, parseSlashInput, typeOptions } from './interactions.js';

/** Discord's interaction `version`. */
const INTERACTION_VERSION = 1;

/** What the invoker is told, in Discord's words, when an app's answer cannot be used. */
export const NO_RESPONSE = 'The application did not respond';
export const INVALID_ANSWER = "The application's answer was invalid";
const CANNOT_POST = 'The application may not post in this channel';

/** What became of a command typed in the composer. */
export type InvocationOutcome =
  /** The app's bot posted its answer in the channel (type 4). */
  | { kind: 'posted'; message: MessageView; commandName: string }
  /** An ephemeral answer (flag 64): shown to the invoker only, stored nowhere. */
  | { kind: 'ephemeral'; content: string; appName: string; commandName: string }
  /** Nothing was posted; `sentence` is what the invoker reads (the delivery log has why). */
  | { kind: 'failed'; sentence: string; commandName: string };

/** An installed app's command reachable from a channel. */
interface Reachable {
  applicationId: string;
  appName: string;
  botUserId: string;
  command: { id: string; name: string; type: number; options: Record<string, unknown>[] };
}

/**
 * The command `name` of the apps installed in the channel's server with applications.commands
 * (issue #40 §2). Undefined when none has it (and in DMs: commands of user installs are not
 * reachable from the composer yet).
 */
async function reachableCommand(deps: Deps, channel: { id: string; serverId: string | null }, name: string): Promise<Reachable | undefined> {
  if (channel.serverId === null) return undefined;
  for (const install of await listServerInstalls(deps, channel.serverId)) {
    const { id: applicationId, name: appName, botUserId } = install.application;
    if (!install.commandsEnabled || botUserId === null || !install.commands.some((c) => c.name === name)) continue;
    const command = (await listApplicationCommands(deps, applicationId)).find((c) => c.name === name);
    if (command) return { applicationId, appName, botUserId, command: { id: command.id, name: command.name, type: command.type, options: command.options } };
  }
  return undefined;
}

/**
 * Runs a composer message as an app's command when it is `/name …` and `name` is a command
 * reachable in that channel (issue #40 §2); undefined otherwise, and the message is posted as text.
 * The person must be allowed to post there, and in a server hold Use application commands (403
 * 50013). Options are typed by the command's option types: a bad one is a 50035 at `content`
 * with the reason, and nothing is sent. The app's endpoint gets Discord's APPLICATION_COMMAND
 * interaction (3 s); its answer of type 4 is posted by the app's bot, or with flag 64 shown to the
 * invoker only. No answer, or one that is invalid, posts nothing: the invoker reads
 * NO_RESPONSE / INVALID_ANSWER and the app's delivery log records why.
 */
export async function invokeCommand(deps: Deps, acting: Acting<Actor>, channelId: string, content: string): Promise<InvocationOutcome | undefined> {
  const input = parseSlashInput(content);
  if (!input) return undefined;
  const actor = acting.actor;
  if (actor.kind !== 'person') return undefined;
  const channel = isSnowflake(channelId) ? await getChannel(deps, channelId) : undefined;
  if (!channel) throw ApiErrors.unknownChannel();
  const reachable = await reachableCommand(deps, channel, input.name);
  if (!reachable) return undefined;

  const serverId = channel.serverId;
  if (serverId === null) return undefined;
  // Discord: invoking needs to see the channel and Use application commands there.
  const permissions = await authorize(deps, actor, serverId, { all: Permission.VIEW_CHANNEL | Permission.USE_APPLICATION_COMMANDS }, ApiErrors.unknownChannel);
  const typed = typeOptions(reachable.command.name, reachable.command.options, input.rest);
  if (!typed.ok) throw invalidField(['content'], 'APPLICATION_COMMAND_OPTIONS_INVALID', typed.message);

  const appPermissions = (await memberPermissions(deps, serverId, reachable.botUserId)) ?? 0n;
  const member = { ...(await readGuildMember(deps, actor.id, serverId, actor.id)), permissions: permissions.toString() };
  const interaction = {
    id: deps.ids.next(),
    application_id: reachable.applicationId,
    type: InteractionType.APPLICATION_COMMAND,
    data: {
      id: reachable.command.id,
      name: reachable.command.name,
      type: reachable.command.type,
      ...(typed.options.length > 0 ? { options: typed.options } : {}),
    },
    guild_id: serverId,
    channel_id: channel.id,
    member,
    // Follow-ups are not offered yet: the token only identifies this interaction to the app.
    token: deps.random.bytes(48).toString('base64url'),
    version: INTERACTION_VERSION,
    app_permissions: appPermissions.toString(),
    locale: 'en-US',
  };

  const commandName = reachable.command.name;
  const answer = await callInteractionsEndpoint(deps, reachable.applicationId, JSON.stringify(interaction));
  if (answer === undefined) return { kind: 'failed', sentence: NO_RESPONSE, commandName };
  if (answer.failure !== null || answer.status === null) {
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, answer.failure ?? 'no answer');
    return { kind: 'failed', sentence: NO_RESPONSE, commandName };
  }
  const checked = checkAnswer(answer.status, answer.body);
  if (checked.kind === 'invalid') {
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, `The answer was refused: ${checked.reason}.`);
    return { kind: 'failed', sentence: INVALID_ANSWER, commandName };
  }
  if (checked.kind === 'deferred') {
    // Follow-ups (POST /webhooks/{application_id}/{token}) are not built yet: a deferred answer could never be completed.
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, 'The answer was refused: deferred answers (type 5) need follow-ups, which Gatehouse does not accept yet.');
    return { kind: 'failed', sentence: INVALID_ANSWER, commandName };
  }
  if (checked.ephemeral) {
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, null);
    return { kind: 'ephemeral', content: checked.content, appName: reachable.appName, commandName };
  }
  const botActing = actingAs(acting, { kind: 'bot', id: reachable.botUserId, applicationId: reachable.applicationId } as const);
  try {
    const message = await postMessage(deps, botActing, channel.id, checked.content);
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, null);
    return { kind: 'posted', message, commandName };
  } catch (error) {
    // The bot's own rights decide where it posts (View channel and Send messages, as for its REST posts).
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    await logInteractionDelivery(deps, reachable.applicationId, `/${commandName}`, answer, `The answer could not be posted: ${error.message}.`);
    return { kind: 'failed', sentence: CANNOT_POST, commandName };
  }
}

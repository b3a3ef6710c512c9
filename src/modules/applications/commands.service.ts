import { addFieldError, ApiError, ApiErrors, type ErrorTree } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { findApplication } from './applications.repository.js';
import type { BotPrincipal } from './bots.service.js';
import { byName, checkCommand, checkCommands, COMMANDS_MAX, offeredInServer, patchedCommandBody, presentCommand, type ApplicationCommand, type CommandInput, type CommandProblem, type CommandView } from './bots.js';
import { deleteCommand, deleteCommandsExcept, insertCommand, listCommands, listCommandsIn, listAllGuildCommands, updateCommand, type CommandScope } from './commands.repository.js';
import { getServer } from '../directory/servers.service.js';
import { isInstalledInServer } from './installs.repository.js';

/**
 * The application `appId` when `actor` is its own bot: unknown or malformed id → 404 10002;
 * another application's bot, or anyone else → 403 50001 (issue #4: commands take that app's bot
 * credentials).
 */
async function requireOwnApplication(deps: Deps, actor: Actor, appId: string): Promise<string> {
  const app = isSnowflake(appId) ? await findApplication(deps.db, appId) : undefined;
  if (!app) throw ApiErrors.unknownApplication();
  if (actor.kind !== 'bot' || app.id !== actor.applicationId) throw ApiErrors.missingAccess();
  return app.id;
}

/**
 * Whose commands a request addresses: the app's global ones, or with `guildId` those it registered
 * for that server (Discord's guild commands), which it may do only where it is installed: any
 * other server, known or not, is Discord's 403 50001.
 */
async function requireScope(deps: Deps, actor: Actor, appId: string, guildId: string | undefined): Promise<CommandScope> {
  const applicationId = await requireOwnApplication(deps, actor, appId);
  if (guildId === undefined) return { applicationId, guildId: null };
  if (!isSnowflake(guildId) || !(await isInstalledInServer(deps.db, guildId, applicationId))) throw ApiErrors.missingAccess();
  return { applicationId, guildId };
}

/** Bit 0 of Discord's integration types and contexts: a server install, a server channel. */
const SERVER_ONLY = 1;

/**
 * A checked command as `scope` stores it. Discord: `integration_types`, `contexts` and
 * `dm_permission` are for global commands only; a guild command runs in its server's channels
 * under the server install, whatever was sent.
 */
function scoped<T extends CommandInput>(scope: CommandScope, input: T): T {
  return scope.guildId === null ? input : { ...input, integrationTypes: SERVER_ONLY, contexts: SERVER_ONLY };
}

/** Announced after each change (issue #37 §2: not audited). */
function announce(deps: Deps, acting: Acting, scope: CommandScope): Promise<void> {
  return emitted(deps, acting, { type: 'commands.updated', applicationId: scope.applicationId, serverId: scope.guildId });
}

/** The actor a bot's read is checked as. */
const botActor = (bot: BotPrincipal): Actor => ({ kind: 'bot', id: bot.botUserId, applicationId: bot.application.id });

/** GET /api/v1/applications/{id}/commands (or …/guilds/{guild_id}/commands): the commands, by name. */
export async function getCommands(deps: Deps, bot: BotPrincipal, appId: string, guildId?: string): Promise<CommandView[]> {
  const scope = await requireScope(deps, botActor(bot), appId, guildId);
  return (await listCommands(deps.db, scope)).map(presentCommand);
}

/**
 * PUT /api/v1/applications/{id}/commands (or …/guilds/{guild_id}/commands): replaces the
 * scope's commands with `body` (issue #4 "bulk overwrite"). Every problem is a 50035 at its path
 * and nothing changes; otherwise, in one transaction, commands named as before keep their ids and
 * are rewritten, new names are added and missing names deleted. Answers the stored list, as GET would.
 */
export async function overwriteCommands(deps: Deps, acting: Acting, appId: string, body: unknown, guildId?: string): Promise<CommandView[]> {
  const scope = await requireScope(deps, acting.actor, appId, guildId);
  const checked = checkCommands(body);
  if (!checked.ok) throw invalidCommands(checked.problems);
  const now = deps.clock.now();
  const stored = await deps.db.transaction().execute(async (trx) => {
    const existing = new Map((await listCommands(trx, scope)).map((c) => [c.name, c]));
    await deleteCommandsExcept(
      trx,
      scope,
      checked.value.map((c) => c.name),
    );
    const result: ApplicationCommand[] = [];
    for (const input of checked.value.map((c) => scoped(scope, c))) {
      const before = existing.get(input.name);
      if (before) {
        const command = { ...before, ...input };
        await updateCommand(trx, command);
        result.push(command);
      } else {
        const command = { id: deps.ids.next(), applicationId: scope.applicationId, guildId: scope.guildId, createdAt: now, ...input };
        await insertCommand(trx, command);
        result.push(command);
      }
    }
    return result;
  });
  await announce(deps, acting, scope);
  return stored.sort(byName).map(presentCommand);
}

/** Discord's 50035 with every problem at its path in the body. */
function invalidCommands(problems: readonly CommandProblem[]): ApiError {
  const tree: ErrorTree = {};
  for (const problem of problems) addFieldError(tree, problem.path, { code: problem.code, message: problem.message });
  return ApiErrors.invalidFormBody(tree);
}

/** Discord's answer for a command id the application does not have. */
function unknownCommand(): ApiError {
  return new ApiError(404, 10063, 'Unknown application command');
}

/** One of the scope's commands by id, or Discord's 10063. */
async function commandOf(db: Deps['db'], scope: CommandScope, commandId: string): Promise<{ command: ApplicationCommand; all: ApplicationCommand[] }> {
  const all = await listCommands(db, scope);
  const command = isSnowflake(commandId) ? all.find((c) => c.id === commandId) : undefined;
  if (!command) throw unknownCommand();
  return { command, all };
}

/**
 * POST /api/v1/applications/{id}/commands (Discord's "Create Global Application Command"; under
 * …/guilds/{guild_id}/ the guild one): one command under the rules of the bulk overwrite. A
 * command of the same name is overwritten and keeps its id (200); a new one is added (201), at
 * most COMMANDS_MAX per scope (30032 beyond).
 */
export async function createCommand(deps: Deps, acting: Acting, appId: string, body: unknown, guildId?: string): Promise<{ command: CommandView; created: boolean }> {
  const scope = await requireScope(deps, acting.actor, appId, guildId);
  const checked = checkCommand(body);
  if (!checked.ok) throw invalidCommands(checked.problems);
  const input = scoped(scope, checked.value);
  const result = await deps.db.transaction().execute(async (trx) => {
    const all = await listCommands(trx, scope);
    const before = all.find((c) => c.name === input.name);
    if (before) {
      const command = { ...before, ...input };
      await updateCommand(trx, command);
      return { command, created: false };
    }
    if (all.length >= COMMANDS_MAX) throw new ApiError(400, 30032, `Maximum number of application commands reached (${COMMANDS_MAX})`);
    const command = { id: deps.ids.next(), applicationId: scope.applicationId, guildId: scope.guildId, createdAt: deps.clock.now(), ...input };
    await insertCommand(trx, command);
    return { command, created: true };
  });
  await announce(deps, acting, scope);
  return { command: presentCommand(result.command), created: result.created };
}

/** GET /api/v1/applications/{id}/commands/{command_id} (or the guild one's). */
export async function getCommand(deps: Deps, bot: BotPrincipal, appId: string, commandId: string, guildId?: string): Promise<CommandView> {
  const scope = await requireScope(deps, botActor(bot), appId, guildId);
  return presentCommand((await commandOf(deps.db, scope, commandId)).command);
}

/**
 * PATCH /api/v1/applications/{id}/commands/{command_id}: the fields sent replace the command's,
 * and the result is checked as a whole (a new name must be free: 50035 at `name`). Keeps its id.
 */
export async function editCommand(deps: Deps, acting: Acting, appId: string, commandId: string, body: unknown, guildId?: string): Promise<CommandView> {
  const scope = await requireScope(deps, acting.actor, appId, guildId);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidCommands([{ path: [], code: 'BASE_TYPE_BAD_TYPE', message: 'Must be an object.' }]);
  const edited = await deps.db.transaction().execute(async (trx) => {
    const { command, all } = await commandOf(trx, scope, commandId);
    const checked = checkCommand(patchedCommandBody(command, body as Record<string, unknown>));
    if (!checked.ok) throw invalidCommands(checked.problems);
    if (all.some((c) => c.id !== command.id && c.name === checked.value.name)) {
      throw invalidCommands([{ path: ['name'], code: 'APPLICATION_COMMANDS_DUPLICATE_NAME', message: `Another command is already named "${checked.value.name}".` }]);
    }
    const next = { ...command, ...scoped(scope, checked.value) };
    await updateCommand(trx, next);
    return next;
  });
  await announce(deps, acting, scope);
  return presentCommand(edited);
}

/** DELETE /api/v1/applications/{id}/commands/{command_id} (or the guild one's): 10063 when the scope has no such command. */
export async function removeCommand(deps: Deps, acting: Acting, appId: string, commandId: string, guildId?: string): Promise<void> {
  const scope = await requireScope(deps, acting.actor, appId, guildId);
  if (!isSnowflake(commandId) || !(await deleteCommand(deps.db, scope, commandId))) throw unknownCommand();
  await announce(deps, acting, scope);
}

/**
 * An application's commands for pages and the composer, by name: its global ones, or with
 * `serverId` those it offers in that server (its guild commands there replacing global ones of
 * the same name).
 */
export async function listApplicationCommands(deps: Deps, appId: string, serverId?: string): Promise<CommandView[]> {
  if (!isSnowflake(appId)) return [];
  const commands = serverId === undefined ? await listCommands(deps.db, { applicationId: appId, guildId: null }) : offeredInServer(await listCommandsIn(deps.db, appId, serverId));
  return commands.map(presentCommand);
}

/** An application's guild commands for its portal page: by server (by name, then id), each server's by name. */
export async function listGuildCommandsByServer(deps: Deps, appId: string): Promise<Array<{ server: { id: string; name: string }; commands: CommandView[] }>> {
  if (!isSnowflake(appId)) return [];
  const byServer = new Map<string, { server: { id: string; name: string }; commands: CommandView[] }>();
  for (const command of await listAllGuildCommands(deps.db, appId)) {
    const serverId = command.guildId as string;
    let entry = byServer.get(serverId);
    if (entry === undefined) {
      // The servers module's name for it (a guild command is deleted with its server).
      const server = await getServer(deps, serverId);
      byServer.set(serverId, (entry = { server: { id: serverId, name: server?.name ?? serverId }, commands: [] }));
    }
    entry.commands.push(presentCommand(command));
  }
  const servers = [...byServer.values()].sort((a, b) => a.server.name.localeCompare(b.server.name) || (a.server.id < b.server.id ? -1 : 1));
  for (const entry of servers) entry.commands.sort(byName);
  return servers;
}

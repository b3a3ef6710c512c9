import { addFieldError, ApiError, ApiErrors, type ErrorTree } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { findApplication } from './applications.repository.js';
import type { BotPrincipal } from './bots.service.js';
import { byName, checkCommand, checkCommands, COMMANDS_MAX, patchedCommandBody, presentCommand, type ApplicationCommand, type CommandProblem, type CommandView } from './bots.js';
import { deleteCommand, deleteCommandsExcept, insertCommand, listCommands, updateCommand } from './commands.repository.js';

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

/** GET /api/v1/applications/{id}/commands: the app's commands, by name. */
export async function getCommands(deps: Deps, bot: BotPrincipal, appId: string): Promise<CommandView[]> {
  const id = await requireOwnApplication(deps, { kind: 'bot', id: bot.botUserId, applicationId: bot.application.id }, appId);
  return (await listCommands(deps.db, id)).map(presentCommand);
}

/**
 * PUT /api/v1/applications/{id}/commands: replaces the app's commands with `body` (issue #4
 * "bulk overwrite"). Every problem is a 50035 at its path and nothing changes; otherwise, in
 * one transaction, commands named as before keep their ids and are rewritten, new names are
 * added and missing names deleted. Answers the stored list, as GET would.
 */
export async function overwriteCommands(deps: Deps, acting: Acting, appId: string, body: unknown): Promise<CommandView[]> {
  const id = await requireOwnApplication(deps, acting.actor, appId);
  const checked = checkCommands(body);
  if (!checked.ok) throw invalidCommands(checked.problems);
  const now = deps.clock.now();
  const stored = await deps.db.transaction().execute(async (trx) => {
    const existing = new Map((await listCommands(trx, id)).map((c) => [c.name, c]));
    await deleteCommandsExcept(
      trx,
      id,
      checked.value.map((c) => c.name),
    );
    const result: ApplicationCommand[] = [];
    for (const input of checked.value) {
      const before = existing.get(input.name);
      if (before) {
        const command = { ...before, ...input };
        await updateCommand(trx, command);
        result.push(command);
      } else {
        const command = { id: deps.ids.next(), applicationId: id, createdAt: now, ...input };
        await insertCommand(trx, command);
        result.push(command);
      }
    }
    return result;
  });
  // Issue #37 §2: not audited, so announced after the commit (global commands: no server).
  await emitted(deps, acting, { type: 'commands.updated', applicationId: id, serverId: null });
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

/** One of the application's commands by id, or Discord's 10063. */
async function commandOf(db: Deps['db'], appId: string, commandId: string): Promise<{ command: ApplicationCommand; all: ApplicationCommand[] }> {
  const all = await listCommands(db, appId);
  const command = isSnowflake(commandId) ? all.find((c) => c.id === commandId) : undefined;
  if (!command) throw unknownCommand();
  return { command, all };
}

/**
 * POST /api/v1/applications/{id}/commands (Discord's "Create Global Application Command"): one
 * command under the rules of the bulk overwrite. A command of the same name is overwritten and
 * keeps its id (200); a new one is added (201), at most COMMANDS_MAX (30032 beyond).
 */
export async function createCommand(deps: Deps, acting: Acting, appId: string, body: unknown): Promise<{ command: CommandView; created: boolean }> {
  const id = await requireOwnApplication(deps, acting.actor, appId);
  const checked = checkCommand(body);
  if (!checked.ok) throw invalidCommands(checked.problems);
  const input = checked.value;
  const result = await deps.db.transaction().execute(async (trx) => {
    const all = await listCommands(trx, id);
    const before = all.find((c) => c.name === input.name);
    if (before) {
      const command = { ...before, ...input };
      await updateCommand(trx, command);
      return { command, created: false };
    }
    if (all.length >= COMMANDS_MAX) throw new ApiError(400, 30032, `Maximum number of application commands reached (${COMMANDS_MAX})`);
    const command = { id: deps.ids.next(), applicationId: id, createdAt: deps.clock.now(), ...input };
    await insertCommand(trx, command);
    return { command, created: true };
  });
  await emitted(deps, acting, { type: 'commands.updated', applicationId: id, serverId: null });
  return { command: presentCommand(result.command), created: result.created };
}

/** GET /api/v1/applications/{id}/commands/{command_id}. */
export async function getCommand(deps: Deps, bot: BotPrincipal, appId: string, commandId: string): Promise<CommandView> {
  const id = await requireOwnApplication(deps, { kind: 'bot', id: bot.botUserId, applicationId: bot.application.id }, appId);
  return presentCommand((await commandOf(deps.db, id, commandId)).command);
}

/**
 * PATCH /api/v1/applications/{id}/commands/{command_id}: the fields sent replace the command's,
 * and the result is checked as a whole (a new name must be free: 50035 at `name`). Keeps its id.
 */
export async function editCommand(deps: Deps, acting: Acting, appId: string, commandId: string, body: unknown): Promise<CommandView> {
  const id = await requireOwnApplication(deps, acting.actor, appId);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidCommands([{ path: [], code: 'BASE_TYPE_BAD_TYPE', message: 'Must be an object.' }]);
  const edited = await deps.db.transaction().execute(async (trx) => {
    const { command, all } = await commandOf(trx, id, commandId);
    const checked = checkCommand(patchedCommandBody(command, body as Record<string, unknown>));
    if (!checked.ok) throw invalidCommands(checked.problems);
    if (all.some((c) => c.id !== command.id && c.name === checked.value.name)) {
      throw invalidCommands([{ path: ['name'], code: 'APPLICATION_COMMANDS_DUPLICATE_NAME', message: `Another command is already named "${checked.value.name}".` }]);
    }
    const next = { ...command, ...checked.value };
    await updateCommand(trx, next);
    return next;
  });
  await emitted(deps, acting, { type: 'commands.updated', applicationId: id, serverId: null });
  return presentCommand(edited);
}

/** DELETE /api/v1/applications/{id}/commands/{command_id}: 10063 when the app has no such command. */
export async function removeCommand(deps: Deps, acting: Acting, appId: string, commandId: string): Promise<void> {
  const id = await requireOwnApplication(deps, acting.actor, appId);
  if (!isSnowflake(commandId) || !(await deleteCommand(deps.db, id, commandId))) throw unknownCommand();
  await emitted(deps, acting, { type: 'commands.updated', applicationId: id, serverId: null });
}

/** An application's commands for pages (the portal, a server's Integrations), by name. */
export async function listApplicationCommands(deps: Deps, appId: string): Promise<CommandView[]> {
  if (!isSnowflake(appId)) return [];
  return (await listCommands(deps.db, appId)).map(presentCommand);
}

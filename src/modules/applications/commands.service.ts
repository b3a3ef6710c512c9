import { addFieldError, ApiErrors, type ErrorTree } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import type { Deps } from '../../deps.js';
import { emitted } from '../../events/event-bus.js';
import { findApplication } from './applications.repository.js';
import type { BotPrincipal } from './bots.service.js';
import { byName, checkCommands, presentCommand, type ApplicationCommand, type CommandView } from './bots.js';
import { deleteCommandsExcept, insertCommand, listCommands, updateCommand } from './commands.repository.js';

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
  if (!checked.ok) {
    const tree: ErrorTree = {};
    for (const problem of checked.problems) addFieldError(tree, problem.path, { code: problem.code, message: problem.message });
    throw ApiErrors.invalidFormBody(tree);
  }
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

/** An application's commands for pages (the portal, a server's Integrations), by name. */
export async function listApplicationCommands(deps: Deps, appId: string): Promise<CommandView[]> {
  if (!isSnowflake(appId)) return [];
  return (await listCommands(deps.db, appId)).map(presentCommand);
}

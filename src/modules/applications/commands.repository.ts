import type { ExpressionBuilder, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import type { ApplicationCommandsTable } from './bots.table.js';
import { byName, type ApplicationCommand } from './bots.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Whose commands: an application's global ones (`guildId` null) or those it registered for one server. */
export interface CommandScope {
  applicationId: string;
  guildId: string | null;
}

/** A server's guild commands and the global ones (`where` of a statement on application_commands). */
export function globalOrIn(serverId: string) {
  return (eb: ExpressionBuilder<Database, 'application_commands'>) => eb.or([eb('guild_id', 'is', null), eb('guild_id', '=', serverId)]);
}

/** The rows of `scope`'s server, or the global ones (`where` of each statement below). */
function inGuildOf(scope: CommandScope) {
  return (eb: ExpressionBuilder<Database, 'application_commands'>) => (scope.guildId === null ? eb('guild_id', 'is', null) : eb('guild_id', '=', scope.guildId));
}

function toCommand(row: Selectable<ApplicationCommandsTable>): ApplicationCommand {
  return {
    id: toId(row.id),
    applicationId: toId(row.application_id),
    name: row.name,
    description: row.description,
    options: JSON.parse(row.options) as Record<string, unknown>[],
    type: toNum(row.type),
    createdAt: toNum(row.created_at),
    defaultMemberPermissions: row.default_member_permissions,
    integrationTypes: toNumOrNull(row.integration_types),
    contexts: toNumOrNull(row.contexts),
    guildId: toIdOrNull(row.guild_id),
  };
}

/** The commands of `scope`, by name. */
export async function listCommands(db: Db, scope: CommandScope): Promise<ApplicationCommand[]> {
  const rows = await db.selectFrom('application_commands').selectAll().where('application_id', '=', scope.applicationId).where(inGuildOf(scope)).execute();
  // Sorted here, not in SQL: the databases' collations order '-' and '_' differently.
  return rows.map(toCommand).sort(byName);
}

/** An application's global commands and those it registered for server `serverId`, by name. */
export async function listCommandsIn(db: Db, applicationId: string, serverId: string): Promise<ApplicationCommand[]> {
  const rows = await db.selectFrom('application_commands').selectAll().where('application_id', '=', applicationId).where(globalOrIn(serverId)).execute();
  return rows.map(toCommand).sort(byName);
}

/** An application's guild commands in every server (the portal's Bot section). */
export async function listAllGuildCommands(db: Db, applicationId: string): Promise<ApplicationCommand[]> {
  const rows = await db.selectFrom('application_commands').selectAll().where('application_id', '=', applicationId).where('guild_id', 'is not', null).execute();
  return rows.map(toCommand);
}

export async function insertCommand(db: Db, command: ApplicationCommand): Promise<void> {
  await db
    .insertInto('application_commands')
    .values({
      id: command.id,
      application_id: command.applicationId,
      guild_id: command.guildId,
      name: command.name,
      description: command.description,
      options: JSON.stringify(command.options),
      type: command.type,
      created_at: command.createdAt,
      default_member_permissions: command.defaultMemberPermissions,
      integration_types: command.integrationTypes,
      contexts: command.contexts,
    })
    .execute();
}

/** Rewrites a command (a PATCH may rename it: the caller has checked the name is free); its id and scope stay. */
export async function updateCommand(db: Db, command: ApplicationCommand): Promise<void> {
  await db
    .updateTable('application_commands')
    .set({
      name: command.name,
      description: command.description,
      options: JSON.stringify(command.options),
      type: command.type,
      default_member_permissions: command.defaultMemberPermissions,
      integration_types: command.integrationTypes,
      contexts: command.contexts,
    })
    .where('id', '=', command.id)
    .execute();
}

/** Deletes the commands of `scope` whose names are not in `keep`. */
export async function deleteCommandsExcept(db: Db, scope: CommandScope, keep: readonly string[]): Promise<void> {
  let query = db.deleteFrom('application_commands').where('application_id', '=', scope.applicationId).where(inGuildOf(scope));
  if (keep.length > 0) query = query.where('name', 'not in', [...keep]);
  await query.execute();
}

/** Deletes one command of `scope`; false when it has none with that id. */
export async function deleteCommand(db: Db, scope: CommandScope, commandId: string): Promise<boolean> {
  const result = await db.deleteFrom('application_commands').where('application_id', '=', scope.applicationId).where('id', '=', commandId).where(inGuildOf(scope)).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

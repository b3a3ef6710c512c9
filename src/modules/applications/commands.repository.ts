import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum, toNumOrNull } from '../../storage/types.js';
import type { ApplicationCommandsTable } from './bots.table.js';
import { byName, type ApplicationCommand } from './bots.js';

type Db = Kysely<Database> | Transaction<Database>;

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
  };
}

/** An application's commands, by name. */
export async function listCommands(db: Db, applicationId: string): Promise<ApplicationCommand[]> {
  const rows = await db.selectFrom('application_commands').selectAll().where('application_id', '=', applicationId).execute();
  // Sorted here, not in SQL: the databases' collations order '-' and '_' differently.
  return rows.map(toCommand).sort(byName);
}

export async function insertCommand(db: Db, command: ApplicationCommand): Promise<void> {
  await db
    .insertInto('application_commands')
    .values({
      id: command.id,
      application_id: command.applicationId,
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

/** Rewrites a command (a PATCH may rename it: the caller has checked the name is free); its id stays. */
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

/** Deletes the application's commands whose names are not in `keep`. */
export async function deleteCommandsExcept(db: Db, applicationId: string, keep: readonly string[]): Promise<void> {
  let query = db.deleteFrom('application_commands').where('application_id', '=', applicationId);
  if (keep.length > 0) query = query.where('name', 'not in', [...keep]);
  await query.execute();
}

/** Deletes one of the application's commands; false when it has none with that id. */
export async function deleteCommand(db: Db, applicationId: string, commandId: string): Promise<boolean> {
  const result = await db.deleteFrom('application_commands').where('application_id', '=', applicationId).where('id', '=', commandId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

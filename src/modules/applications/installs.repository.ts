import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { globalOrIn } from './commands.repository.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toBool, toId, toIdOrNull, toNum } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A bot installed into a server (SPEC §1.3), as recorded for Server settings → Integrations. */
export interface ServerInstall {
  applicationId: string;
  serverId: string;
  installerId: string;
  /** What the bot's managed role holds (decimal string in storage). */
  permissions: bigint;
  /** applications.commands was granted with bot: the app's commands are available in the server. */
  commands: boolean;
  createdAt: number;
  updatedAt: number;
}

/** One row of the Integrations list: the install with what the page shows about app, bot and installer. */
export interface ServerInstallRow extends ServerInstall {
  applicationName: string;
  applicationIconUrl: string | null;
  botUserId: string | null;
  installerUsername: string | null;
  installerName: string | null;
}

/**
 * Records an install, or updates the existing one (installing again: issue #4 "Installing again
 * updates that role"). One portable upsert on the (application_id, server_id) key, so two installs
 * at once leave exactly one row; created_at keeps the first install's time.
 */
export async function upsertServerInstall(db: Db, install: Omit<ServerInstall, 'createdAt' | 'updatedAt'>, now: number): Promise<void> {
  await db
    .insertInto('server_installs')
    .values({
      application_id: install.applicationId,
      server_id: install.serverId,
      installer_id: install.installerId,
      permissions: install.permissions.toString(),
      commands: install.commands ? 1 : 0,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['application_id', 'server_id']).doUpdateSet({
        installer_id: install.installerId,
        permissions: install.permissions.toString(),
        commands: install.commands ? 1 : 0,
        updated_at: now,
      }),
    )
    .execute();
}

/** The install columns of a server_installs row (alone or joined), as a domain object. */
function toServerInstall(row: {
  application_id: string | bigint;
  server_id: string | bigint;
  installer_id: string | bigint;
  permissions: string;
  commands: number | bigint | string | boolean;
  created_at: number | bigint | string;
  updated_at: number | bigint | string;
}): ServerInstall {
  return {
    applicationId: toId(row.application_id),
    serverId: toId(row.server_id),
    installerId: toId(row.installer_id),
    permissions: BigInt(row.permissions),
    commands: toBool(row.commands),
    createdAt: toNum(row.created_at),
    updatedAt: toNum(row.updated_at),
  };
}

export async function deleteServerInstall(db: Db, serverId: string, applicationId: string): Promise<boolean> {
  const result = await db.deleteFrom('server_installs').where('server_id', '=', serverId).where('application_id', '=', applicationId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A server's installs, oldest first, with app and installer names (the installer may have been deleted). */
export async function listServerInstallRows(db: Db, serverId: string): Promise<ServerInstallRow[]> {
  const rows = await db
    .selectFrom('server_installs')
    .innerJoin('applications', 'applications.id', 'server_installs.application_id')
    .leftJoin('users', 'users.id', 'server_installs.installer_id')
    .select([
      'server_installs.application_id',
      'server_installs.server_id',
      'server_installs.installer_id',
      'server_installs.permissions',
      'server_installs.commands',
      'server_installs.created_at',
      'server_installs.updated_at',
      'applications.name as application_name',
      'applications.icon_url as application_icon_url',
      'applications.bot_user_id',
      'users.username as installer_username',
      'users.name as installer_name',
    ])
    .where('server_installs.server_id', '=', serverId)
    .orderBy('server_installs.created_at')
    .orderBy('server_installs.application_id')
    .execute();
  return rows.map((row) => ({
    ...toServerInstall(row),
    applicationName: row.application_name,
    applicationIconUrl: row.application_icon_url,
    botUserId: toIdOrNull(row.bot_user_id),
    installerUsername: row.installer_username ?? null,
    installerName: row.installer_name ?? null,
  }));
}

/** The global commands of several apps and those they registered for `serverId`, by app id then name (Integrations lists them under each app). */
export async function listCommandsOfApplications(db: Db, serverId: string, applicationIds: readonly string[]): Promise<Array<{ applicationId: string; name: string; description: string; guildId: string | null }>> {
  if (applicationIds.length === 0) return [];
  const rows = await db
    .selectFrom('application_commands')
    .select(['application_id', 'name', 'description', 'guild_id'])
    .where('application_id', 'in', applicationIds)
    .where(globalOrIn(serverId))
    .orderBy('application_id')
    .orderBy('name')
    .execute();
  return rows.map((r) => ({ applicationId: toId(r.application_id), name: r.name, description: r.description, guildId: toIdOrNull(r.guild_id) }));
}

/** One command of an app installed in a server with its commands and a bot (installedCommandRow). */
export interface InstalledCommandRow {
  applicationId: string;
  applicationName: string;
  botUserId: string;
  /** guildId: the server of a guild command; null: a global one. */
  command: { id: string; name: string; type: number; options: Record<string, unknown>[]; defaultMemberPermissions: string | null; guildId: string | null };
}

// The server's installs in the order listServerInstallRows lists them, narrowed to those whose
// commands are on, whose app has a bot and has a command of that name, global or registered for
// this server (the server's first: it replaces the global one), that runs under a server install
// (integration type 0) in a server channel (context 0): bit 0 of each set.
const installedCommandByName = prepareQuery<{ serverId: string; name: string }>()((db, v) =>
  db
    .selectFrom('server_installs')
    .innerJoin('applications', 'applications.id', 'server_installs.application_id')
    .innerJoin('application_commands', (join) =>
      join
        .onRef('application_commands.application_id', '=', 'server_installs.application_id')
        .on((eb) => eb.or([eb('application_commands.guild_id', 'is', null), eb('application_commands.guild_id', '=', eb.ref('server_installs.server_id'))])),
    )
    .select([
      'server_installs.application_id',
      'applications.name as application_name',
      'applications.bot_user_id',
      'application_commands.id as command_id',
      'application_commands.name as command_name',
      'application_commands.type',
      'application_commands.options',
      'application_commands.default_member_permissions',
      'application_commands.guild_id',
    ])
    .where('server_installs.server_id', '=', v.serverId)
    .where('server_installs.commands', '=', 1)
    .where('applications.bot_user_id', 'is not', null)
    .where('application_commands.name', '=', v.name)
    .where(sql<boolean>`(application_commands.integration_types is null or (application_commands.integration_types & 1) <> 0)`)
    .where(sql<boolean>`(application_commands.contexts is null or (application_commands.contexts & 1) <> 0)`)
    .orderBy('server_installs.created_at')
    .orderBy('server_installs.application_id')
    .orderBy(sql`case when application_commands.guild_id is null then 1 else 0 end`)
    .limit(1),
);

/**
 * The command `name` of the first app installed in the server with applications.commands and a
 * bot that has one (issue #40 §2: what a typed `/name` runs there), in one prepared statement
 * instead of listing every install and its commands.
 */
export async function installedCommandRow(db: Db, serverId: string, name: string): Promise<InstalledCommandRow | undefined> {
  const row = await firstRow(installedCommandByName(db, { serverId, name }));
  if (!row || row.bot_user_id === null) return undefined;
  return {
    applicationId: toId(row.application_id),
    applicationName: row.application_name,
    botUserId: toId(row.bot_user_id),
    command: {
      id: toId(row.command_id),
      name: row.command_name,
      type: toNum(row.type),
      options: JSON.parse(row.options) as Record<string, unknown>[],
      defaultMemberPermissions: row.default_member_permissions,
      guildId: toIdOrNull(row.guild_id),
    },
  };
}

/** The role an app's install manages in a server, if any (roles.managed_application_id). */
export async function findManagedRoleId(db: Db, serverId: string, applicationId: string): Promise<string | undefined> {
  const row = await db.selectFrom('roles').select('id').where('server_id', '=', serverId).where('managed_application_id', '=', applicationId).orderBy('id').executeTakeFirst();
  return row ? toId(row.id) : undefined;
}

/** What the app's managed roles in the server hold together; undefined when it has none there. */
export async function findManagedRolePermissions(db: Db, serverId: string, applicationId: string): Promise<bigint | undefined> {
  const rows = await db.selectFrom('roles').select('permissions').where('server_id', '=', serverId).where('managed_application_id', '=', applicationId).execute();
  return rows.length === 0 ? undefined : rows.reduce((bits, row) => bits | BigInt(row.permissions), 0n);
}

/** Deletes every role the app manages in the server; assignments cascade. */
export async function deleteManagedRoles(db: Db, serverId: string, applicationId: string): Promise<void> {
  await db.deleteFrom('roles').where('server_id', '=', serverId).where('managed_application_id', '=', applicationId).execute();
}

/** Gives a member a role unless they hold it already. */
export async function assignRoleIfMissing(db: Db, serverId: string, userId: string, roleId: string): Promise<void> {
  await db
    .insertInto('member_roles')
    .values({ server_id: serverId, user_id: userId, role_id: roleId })
    .onConflict((oc) => oc.columns(['server_id', 'user_id', 'role_id']).doNothing())
    .execute();
}

/** The servers an app's bot is installed in (issue #39: what deleting the app removes), oldest install first. */
export async function listInstalledServerIds(db: Db, applicationId: string): Promise<string[]> {
  const rows = await db.selectFrom('server_installs').select('server_id').where('application_id', '=', applicationId).orderBy('created_at').execute();
  return rows.map((r) => toId(r.server_id));
}

/** Whether the app is installed in the server (issue #40 §2: where it may register guild commands). */
export async function isInstalledInServer(db: Db, serverId: string, applicationId: string): Promise<boolean> {
  const row = await db.selectFrom('server_installs').select('server_id').where('server_id', '=', serverId).where('application_id', '=', applicationId).executeTakeFirst();
  return row !== undefined;
}

/** How many servers and people have installed the app (issue #39: the operator's counts). */
export async function countInstalls(db: Db, applicationId: string): Promise<{ servers: number; people: number }> {
  const [servers, people] = await Promise.all([
    db.selectFrom('server_installs').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).where('application_id', '=', applicationId).executeTakeFirstOrThrow(),
    db.selectFrom('user_installs').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).where('application_id', '=', applicationId).executeTakeFirstOrThrow(),
  ]);
  return { servers: Number(servers.n), people: Number(people.n) };
}

import type { Transaction } from 'kysely';
import { PageError } from '../../core/errors.js';
import { permissionNames } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { joinServerAsBot, removeMemberInTransaction } from '../directory/members.service.js';
import { requireMemberInReach } from '../directory/policy.js';
import { appendRoleInTransaction, updateRoleInTransaction } from '../directory/roles.service.js';
import { memberPermissions } from '../directory/servers.service.js';
import { findApplication } from './applications.repository.js';
import {
  assignRoleIfMissing,
  deleteManagedRoles,
  deleteServerInstall,
  findManagedRoleId,
  listCommandsOfApplications,
  listServerInstallRows,
  upsertServerInstall,
} from './installs.repository.js';
import { permissionLabelList, type InstalledApp } from './installs.js';
import { insertUserInstall } from './user-installs.repository.js';

/** The apps installed in a server (the caller has checked that the viewer may see the page). */
export async function listServerInstalls(deps: Deps, serverId: string): Promise<InstalledApp[]> {
  if (!isSnowflake(serverId)) return [];
  const rows = await listServerInstallRows(deps.db, serverId);
  const commands = await listCommandsOfApplications(
    deps.db,
    rows.filter((r) => r.commands).map((r) => r.applicationId),
  );
  return rows.map((r) => ({
    application: { id: r.applicationId, name: r.applicationName, iconUrl: r.applicationIconUrl, botUserId: r.botUserId },
    permissions: { bits: r.permissions, names: permissionNames(r.permissions), labels: permissionLabelList(r.permissions) },
    commandsEnabled: r.commands,
    commands: r.commands ? commands.filter((c) => c.applicationId === r.applicationId).map(({ name, description }) => ({ name, description })) : [],
    installer: { id: r.installerId, username: r.installerUsername, name: r.installerName },
    installedAt: r.createdAt,
    updatedAt: r.updatedAt,
  }));
}

/** What one bot install writes; the authorize flow computes it (installs.ts) and checks who may. */
export interface ServerInstallPlan {
  application: { id: string; name: string; botUserId: string };
  serverId: string;
  installerId: string;
  /** requested ∩ held ∩ ticked, minus Administrator (grantedPermissions). */
  granted: bigint;
  /** applications.commands was requested with bot. */
  commands: boolean;
}

/**
 * Writes a bot install inside the caller's transaction (issue #4 "Authorize"): the bot joins the
 * server if it is not a member yet; its managed role — named after the app — holds exactly
 * `granted`, created, updated or (when nothing is granted) deleted; the server_installs row is
 * created or updated. Installing again therefore converges on the new grant.
 */
export async function writeServerInstall(deps: Deps, trx: Transaction<Database>, plan: ServerInstallPlan): Promise<void> {
  const now = deps.clock.now();
  const { serverId, application } = plan;
  const botId = application.botUserId;
  await joinServerAsBot(trx, serverId, botId, now);

  const roleId = await findManagedRoleId(trx, serverId, application.id);
  if (plan.granted === 0n) {
    // Issue #4: no role when nothing is granted, so a reinstall with less removes it.
    await deleteManagedRoles(trx, serverId, application.id);
  } else if (roleId !== undefined) {
    await updateRoleInTransaction(trx, serverId, roleId, { name: application.name, permissions: plan.granted });
    await assignRoleIfMissing(trx, serverId, botId, roleId);
  } else {
    const id = deps.ids.next();
    await appendRoleInTransaction(trx, { id, serverId, name: application.name, permissions: plan.granted, color: 0, managedApplicationId: application.id, createdAt: now });
    await assignRoleIfMissing(trx, serverId, botId, id);
  }
  await upsertServerInstall(trx, { applicationId: application.id, serverId, installerId: plan.installerId, permissions: plan.granted, commands: plan.commands }, now);
}

/** Records a user install (applications.commands without bot) inside the caller's transaction. */
export async function writeUserInstall(deps: Deps, trx: Transaction<Database>, applicationId: string, userId: string): Promise<void> {
  await insertUserInstall(trx, { applicationId, userId, createdAt: deps.clock.now() });
}

/**
 * Removes an app's bot from a server (Server settings → Integrations; the route checks Manage
 * server): the bot's membership, its managed role and the install record go, all or nothing.
 * Webhooks the bot created stay (issue #4). Throws a 404 page when the app is not installed here,
 * and 403 (50013) when the bot holds a permission the actor lacks: a bot is a member like any
 * other, and its managed role does not take it out of reach (docs/permissions.md rule 4, issue #21 §5).
 */
export async function removeBot(deps: Deps, serverId: string, applicationId: string, actorPermissions: bigint): Promise<void> {
  const notInstalled = () => new PageError(404, 'App not installed', 'This app is not installed in this server.');
  if (!isSnowflake(serverId) || !isSnowflake(applicationId)) throw notInstalled();
  const installed = await findApplication(deps.db, applicationId);
  const botPermissions = installed?.botUserId ? await memberPermissions(deps, serverId, installed.botUserId) : undefined;
  if (botPermissions !== undefined) requireMemberInReach(actorPermissions, botPermissions);
  const removed = await deps.db.transaction().execute(async (trx) => {
    const app = await findApplication(trx, applicationId);
    if (!(await deleteServerInstall(trx, serverId, applicationId))) return false;
    await deleteManagedRoles(trx, serverId, applicationId);
    if (app?.botUserId) await removeMemberInTransaction(trx, serverId, app.botUserId);
    return true;
  });
  if (!removed) throw notInstalled();
}

import type { Transaction } from 'kysely';
import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiError } from '../../core/errors.js';
import { Permission, has, permissionNames } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { DomainEvent } from '../../events/domain-events.js';
import { changing, type Emit } from '../../events/event-bus.js';
import type { Database } from '../../storage/database.js';
import { isUniqueViolation } from '../../storage/types.js';
import { authorize } from '../directory/access.service.js';
import { joinServerAsBot, removeMemberInTransaction } from '../directory/members.service.js';
import { requireMemberInReach, roleBitsOutOfReach, ServerAction } from '../directory/policy.js';
import { appendRoleInTransaction, updateRoleInTransaction } from '../directory/roles.service.js';
import { getServer, listServersForPerson, memberPermissions } from '../directory/servers.service.js';
import type { Application } from './applications.js';
import { findApplication } from './applications.repository.js';
import { offeredInServer } from './bots.js';
import {
  assignRoleIfMissing,
  deleteManagedRoles,
  deleteServerInstall,
  findManagedRoleId,
  findManagedRolePermissions,
  countInstalls,
  installedCommandRow,
  listCommandsOfApplications,
  listInstalledServerIds,
  listServerInstallRows,
  upsertServerInstall,
  type InstalledCommandRow,
} from './installs.repository.js';
import {
  describeRequestedPermissions,
  grantedPermissions,
  permissionLabelList,
  tickedPermissions,
  type InstallConsent,
  type InstalledApp,
  type InstallRequest,
} from './installs.js';
import { insertUserInstall } from './user-installs.repository.js';

/** The command a typed `/name` runs, as the interaction describes it. */
export type InstalledCommand = InstalledCommandRow['command'];

/**
 * What a typed `/name` runs in a server's channel (issue #40 §2): the command of that name of the
 * first app (in install order) installed with applications.commands and a bot; undefined when none has one.
 */
export async function installedCommandNamed(deps: Deps, serverId: string, name: string): Promise<InstalledCommandRow | undefined> {
  return isSnowflake(serverId) ? installedCommandRow(deps.db, serverId, name) : undefined;
}

/** The apps installed in a server (the caller has checked that the viewer may see the page). */
export async function listServerInstalls(deps: Deps, serverId: string): Promise<InstalledApp[]> {
  if (!isSnowflake(serverId)) return [];
  const rows = await listServerInstallRows(deps.db, serverId);
  const enabled = rows.filter((r) => r.commands).map((r) => r.applicationId);
  const commands = offeredInServer(await listCommandsOfApplications(deps.db, serverId, enabled));
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

/**
 * Bot installs (issue #4) live here, in three steps the authorize flow calls one each:
 * installConsentView (what the consent screen shows), planServerInstall (what the answer may
 * install, never trusting the form) and writeInstall (the writes, all or nothing).
 */

/**
 * The install part of the consent screen (issue #4): for a bot, the servers where the person
 * holds Manage server (owners and Administrators hold it), the chosen one — the link's server_id
 * when it is among them, else the only one — and the requested permissions marked against what
 * the person holds there.
 */
export async function installConsentView(deps: Deps, install: InstallRequest, userId: string): Promise<InstallConsent> {
  if (!install.bot) {
    return { kind: 'user', commands: install.commands, servers: [], chosenServer: undefined, locked: false, lockedUnavailable: false, permissions: [] };
  }
  const eligible = (await listServersForPerson(deps, userId)).filter((s) => has(s.permissions, Permission.MANAGE_SERVER));
  const named = install.serverId === undefined ? undefined : eligible.find((s) => s.id === install.serverId);
  const chosen = named ?? (!install.lockServer && eligible.length === 1 ? eligible[0] : undefined);
  return {
    kind: 'bot',
    commands: install.commands,
    servers: eligible.map((s) => ({ id: s.id, name: s.name })),
    chosenServer: chosen ? { id: chosen.id, name: chosen.name } : undefined,
    locked: install.lockServer,
    lockedUnavailable: install.lockServer && named === undefined,
    permissions: describeRequestedPermissions(install.permissions, chosen?.permissions),
  };
}

/**
 * A bot install the consent form's answer may make, or why it may not (the caller words the page).
 * 'out-of-reach': the bot is installed there already and its managed role holds `missing`, which
 * the person lacks.
 */
export type InstallPlanResult =
  | { ok: true; plan: ServerInstallPlan }
  | { ok: false; problem: 'no-server' | 'not-allowed' }
  | { ok: false; problem: 'out-of-reach'; missing: string[] };

/**
 * Issue #36 §5, docs/permissions.md rule 3: installing again rewrites the bot's managed role, so
 * it needs that role within the installer's reach, as editing any role does; otherwise a
 * moderator could strip a bot of permissions they do not hold by reinstalling it with fewer.
 * The labels of the role's bits the installer lacks; [] when they may.
 */
async function managedRoleOutOfReach(deps: Deps, serverId: string, applicationId: string, held: bigint): Promise<string[]> {
  const current = await findManagedRolePermissions(deps.db, serverId, applicationId);
  return current === undefined ? [] : permissionLabelList(roleBitsOutOfReach(held, current));
}

/**
 * The bot install the consent form asks for, never trusting the form (issue #4): the chosen
 * server must be one where the person holds Manage server now, and the granted permissions are
 * recomputed from what they hold there — requested ∩ held ∩ still ticked (`ticked`: the form's
 * permission values), minus Administrator. A server the person is not in and one where they lack
 * Manage server look alike.
 */
export async function planServerInstall(deps: Deps, app: Application, install: InstallRequest, installerId: string, ticked: unknown): Promise<InstallPlanResult> {
  const serverId = install.serverId;
  if (serverId === undefined) return { ok: false, problem: 'no-server' };
  const held = await memberPermissions(deps, serverId, installerId);
  if (held === undefined || !has(held, Permission.MANAGE_SERVER)) return { ok: false, problem: 'not-allowed' };
  const missing = await managedRoleOutOfReach(deps, serverId, app.id, held);
  if (missing.length > 0) return { ok: false, problem: 'out-of-reach', missing };
  const server = await getServer(deps, serverId);
  return {
    ok: true,
    plan: {
      application: { id: app.id, name: app.name, botUserId: app.botUserId as string },
      serverId,
      serverName: server?.name,
      installerId,
      granted: grantedPermissions(install.permissions, held, tickedPermissions(ticked)),
      commands: install.commands,
    },
  };
}

/** What the code of an app that requires the code grant recorded about its bot install. */
export interface RecordedInstall {
  serverId: string | null;
  /** The granted permissions as a decimal string. */
  permissions: string | null;
  userId: string;
  scopes: readonly string[];
}

/**
 * The bot install a code carries for an app that requires the code grant (issue #21 §5), written
 * in the exchange's transaction so only a code the app actually redeems adds the bot. The
 * person's right to add it is checked again, since up to 10 minutes have passed: they must still
 * hold Manage server there ('not-allowed' otherwise) and reach the bot's managed role if it is
 * installed there already ('out-of-reach'), and the bot gets what was granted and they still hold. Undefined when the code carries no such install.
 */
export async function planInstallAtExchange(deps: Deps, app: Application, recorded: RecordedInstall): Promise<ServerInstallPlan | 'not-allowed' | 'out-of-reach' | undefined> {
  if (!app.botRequireCodeGrant || recorded.serverId === null || recorded.permissions === null || app.botUserId === null) return undefined;
  const held = await memberPermissions(deps, recorded.serverId, recorded.userId);
  if (held === undefined || !has(held, Permission.MANAGE_SERVER)) return 'not-allowed';
  // Issue #36 §5: the bot may have been installed meanwhile by someone holding more.
  if ((await managedRoleOutOfReach(deps, recorded.serverId, app.id, held)).length > 0) return 'out-of-reach';
  const granted = BigInt(recorded.permissions);
  return {
    application: { id: app.id, name: app.name, botUserId: app.botUserId },
    serverId: recorded.serverId,
    installerId: recorded.userId,
    granted: has(held, Permission.ADMINISTRATOR) ? granted : granted & held,
    commands: recorded.scopes.includes('applications.commands'),
  };
}

/** What one authorization installs: a bot into a server, or the app's commands for the person. */
export type InstallWrite = { kind: 'server'; plan: ServerInstallPlan } | { kind: 'user'; applicationId: string; userId: string };

/**
 * Writes an install and the rest of its authorization (`alongside`: grant, code, consent, and
 * their events through `emit`) in one transaction, all or nothing, with its event (issue #37 §2: bot.installed or user_install.created,
 * recorded in that commit). `acting` is the person who agreed. Two installs of the same bot into the
 * same server at once can both find it not yet a member; the loser fails on the primary key and runs
 * once more, now finding it (the failed run's events went with its rollback).
 */
export async function writeInstall(deps: Deps, acting: Acting, install: InstallWrite | undefined, alongside?: (trx: Transaction<Database>, emit: Emit) => Promise<void>): Promise<void> {
  const writes = async (trx: Transaction<Database>, emit: Emit): Promise<void> => {
    if (install?.kind === 'server') await installInServer(deps, trx, emit, install.plan);
    else if (install?.kind === 'user') await writeUserInstall(deps, trx, emit, install.applicationId, install.userId);
    if (alongside) await alongside(trx, emit);
  };
  try {
    await changing(deps, acting, writes);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    await changing(deps, acting, writes);
  }
}

/** What one bot install writes: planServerInstall (or planInstallAtExchange) computes it and checks who may. */
export interface ServerInstallPlan {
  application: { id: string; name: string; botUserId: string };
  serverId: string;
  /** For the confirmation page of a plain install; undefined when the plan was not made for one. */
  serverName?: string | undefined;
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
 * created or updated. Installing again therefore converges on the new grant, and is recorded again
 * (Discord records every BOT_ADD). Emits bot.installed with what was granted.
 */
async function installInServer(deps: Deps, trx: Transaction<Database>, emit: Emit, plan: ServerInstallPlan): Promise<void> {
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
  // Issue #37 §2: the scopes the install carries, and the permissions as Discord writes them (a decimal string).
  emit({ type: 'bot.installed', serverId, applicationId: application.id, botUserId: botId, scopes: plan.commands ? 'bot applications.commands' : 'bot', permissions: plan.granted.toString() });
}

/**
 * A bot install inside a transaction the caller runs (the code exchange of an app that requires the
 * code grant, issue #21 §5: the install commits with the code's consumption). Its bot.installed event
 * is recorded in that transaction (issue #37 §2: the audit row in the install's own commit) and
 * returned: the caller delivers it (`deps.bus.deliver`) once the transaction has committed, and
 * drops it if it rolled back.
 */
export async function writeServerInstall(deps: Deps, acting: Acting, trx: Transaction<Database>, plan: ServerInstallPlan): Promise<DomainEvent[]> {
  const events: DomainEvent[] = [];
  await installInServer(deps, trx, (event) => events.push(event), plan);
  await deps.bus.recordWith(trx, acting, events);
  return events;
}

/** Records a user install (applications.commands without bot) inside the caller's transaction; a new one emits user_install.created. */
async function writeUserInstall(deps: Deps, trx: Transaction<Database>, emit: Emit, applicationId: string, userId: string): Promise<void> {
  if (await insertUserInstall(trx, { applicationId, userId, createdAt: deps.clock.now() })) emit({ type: 'user_install.created', applicationId, userId });
}

/**
 * Removes an app's bot from a server (Server settings → Integrations): the bot's membership, its
 * managed role and the install record go, all or nothing. Webhooks the bot created stay (issue #4).
 * The actor needs Manage server there (404 10004 for a non-member, 403 50013 otherwise), and the
 * bot must be within their reach: a bot is a member like any other, and its managed role does not
 * take it out of reach (docs/permissions.md rule 4, issue #21 §5; 403 50013). 404 when the app is
 * not installed here.
 */
export async function removeBot(deps: Deps, acting: Acting, serverId: string, applicationId: string): Promise<void> {
  const actor = acting.actor;
  const actorPermissions = await authorize(deps, actor, serverId, ServerAction.manageServer);
  const notInstalled = () => new ApiError(404, 0, 'This app is not installed in this server.');
  if (!isSnowflake(applicationId)) throw notInstalled();
  const installed = await findApplication(deps.db, applicationId);
  const botPermissions = installed?.botUserId ? await memberPermissions(deps, serverId, installed.botUserId) : undefined;
  if (botPermissions !== undefined && actor.kind !== 'operator') requireMemberInReach(actorPermissions, botPermissions);
  const removed = await changing(deps, acting, async (trx, emit) => {
    const app = await findApplication(trx, applicationId);
    if (!(await deleteServerInstall(trx, serverId, applicationId))) return false;
    await deleteManagedRoles(trx, serverId, applicationId);
    if (app?.botUserId) {
      await removeMemberInTransaction(trx, serverId, app.botUserId);
      emit({ type: 'bot.removed', serverId, applicationId, botUserId: app.botUserId });
    }
    return true;
  });
  if (!removed) throw notInstalled();
}

/** The installed app removeBot would remove, for its confirmation page: Manage server, as removeBot; 404 when not installed here. */
export async function botRemovalPreview(deps: Deps, actor: Actor, serverId: string, applicationId: string): Promise<InstalledApp> {
  await authorize(deps, actor, serverId, ServerAction.manageServer);
  const app = (await listServerInstalls(deps, serverId)).find((a) => a.application.id === applicationId);
  if (!app) throw new ApiError(404, 0, 'This app is not installed in this server.');
  return app;
}

/**
 * A step of deleting an app (issue #39): its bot leaves every server it was installed in — the
 * membership, its managed role and the install record, as removeBot does one server — each a
 * bot.removed. Returns the servers it left.
 */
export async function removeBotFromEveryServer(trx: Transaction<Database>, emit: Emit, app: Pick<Application, 'id' | 'botUserId'>): Promise<string[]> {
  const serverIds = await listInstalledServerIds(trx, app.id);
  for (const serverId of serverIds) {
    await deleteServerInstall(trx, serverId, app.id);
    await deleteManagedRoles(trx, serverId, app.id);
    if (app.botUserId !== null) {
      await removeMemberInTransaction(trx, serverId, app.botUserId);
      emit({ type: 'bot.removed', serverId, applicationId: app.id, botUserId: app.botUserId });
    }
  }
  return serverIds;
}

/** How many servers and people have the app installed (issue #39: what disabling or deleting it affects). */
export function appInstallCounts(deps: Deps, applicationId: string): Promise<{ servers: number; people: number }> {
  return countInstalls(deps.db, applicationId);
}

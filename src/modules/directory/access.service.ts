import type { Actor } from '../../core/actor.js';
import { ApiErrors, type ApiError } from '../../core/errors.js';
import { ALL_PERMISSIONS, computePermissions } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { findMember } from './members.repository.js';
import { check, MFA_GATED_PERMISSIONS, underMfaLevel, type Need, type Standing } from './policy.js';
import { findBotOwnerId, isBotAccount } from './mfa-level.repository.js';
import { hasSecondFactor } from '../mfa/mfa.service.js';
import { listPermissionRows } from './roles.repository.js';
import type { Server } from './servers.js';
import { findServer } from './servers.repository.js';

/**
 * Where the directory services learn what an actor holds in a server; policy.ts decides with it.
 * Every mutating directory service calls `authorize` before it changes anything.
 */

export function permissionsFrom(server: Pick<Server, 'id' | 'ownerId'>, userId: string, rows: ReadonlyArray<{ id: string; serverId: string; permissions: string }>): bigint {
  let everyone = 0n;
  const roles: bigint[] = [];
  for (const row of rows) {
    if (row.serverId !== server.id) continue;
    if (row.id === server.id) everyone = BigInt(row.permissions);
    else roles.push(BigInt(row.permissions));
  }
  return computePermissions({ isOwner: server.ownerId === userId, everyone, roles });
}

/**
 * A member's server-wide permissions (owner → all; @everyone ∪ roles; Administrator → all), or
 * undefined when the person is not a member or the server does not exist.
 */
export async function memberPermissions(deps: Deps, serverId: string, userId: string): Promise<bigint | undefined> {
  return (await memberStanding(deps, serverId, userId))?.permissions;
}

/**
 * The server and a member's server-wide permissions there (as memberPermissions), for callers that
 * present the server too and need not read it twice (issue #40 §4: GET /guilds/{id}).
 */
export async function memberStanding(deps: Deps, serverId: string, userId: string): Promise<{ server: Server; permissions: bigint } | undefined> {
  if (!isSnowflake(serverId) || !isSnowflake(userId)) return undefined;
  const server = await findServer(deps.db, serverId);
  if (!server) return undefined;
  const member = await findMember(deps.db, serverId, userId);
  if (!member) return undefined;
  const rows = await listPermissionRows(deps.db, userId, [serverId]);
  const held = permissionsFrom(server, userId, rows);
  // Issue #38 §4: at MFA level 1 the moderator bits need a second factor; ask only when they matter.
  if (server.mfaLevel === 0 || (held & MFA_GATED_PERMISSIONS) === 0n) return { server, permissions: held };
  return { server, permissions: underMfaLevel(held, server.mfaLevel, await answersWithSecondFactor(deps, userId)) };
}

/**
 * Whether the account's moderator permissions survive a server's MFA level: a person's own second
 * factor; a bot's owner's (Discord: a bot owned by someone without 2FA loses them too).
 */
async function answersWithSecondFactor(deps: Deps, userId: string): Promise<boolean> {
  if (!(await isBotAccount(deps.db, userId))) return hasSecondFactor(deps, userId);
  const ownerId = await findBotOwnerId(deps.db, userId);
  return ownerId !== undefined && (await hasSecondFactor(deps, ownerId));
}

/** What the actor holds in a server (the operator: everything). */
async function standingIn(deps: Deps, actor: Actor, serverId: string): Promise<Standing> {
  if (actor.kind === 'operator') return { actor, held: ALL_PERMISSIONS };
  return { actor, held: await memberPermissions(deps, serverId, actor.id) };
}

/**
 * The actor's permissions in a server when `need` is met (policy.ts `check`): 10004 (or
 * `unknown`) for a non-member, 50013 naming what is missing for a member without it.
 */
export async function authorize(deps: Deps, actor: Actor, serverId: string, need: Need, unknown?: () => ApiError): Promise<bigint> {
  return check(await standingIn(deps, actor, serverId), need, unknown);
}

/** A person's permissions in a server when they hold every bit of `bits` (`0n`: membership alone). */
export async function requireServerPermission(deps: Deps, serverId: string, userId: string, bits: bigint, unknown: () => ApiError = ApiErrors.unknownServer): Promise<bigint> {
  return authorize(deps, { kind: 'person', id: userId }, serverId, { all: bits }, unknown);
}

/** Like requireServerPermission, but one of several bits suffices (e.g. Create invite or Manage server). */
export async function requireAnyServerPermission(deps: Deps, serverId: string, userId: string, anyOf: bigint): Promise<bigint> {
  return authorize(deps, { kind: 'person', id: userId }, serverId, { any: anyOf });
}

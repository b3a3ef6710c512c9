import type { Actor } from '../../core/actor.js';
import { ApiErrors, type ApiError } from '../../core/errors.js';
import { ALL_PERMISSIONS } from '../../core/permissions.js';
import type { Deps } from '../../services.js';
import { check, type Need, type Standing } from './policy.js';
import { memberPermissions } from './servers.service.js';

/** What the actor holds in a server (policy.ts decides with it). */
export async function standingIn(deps: Deps, actor: Actor, serverId: string): Promise<Standing> {
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

import { ApiError, PageError } from '../../core/errors.js';
import { PERMISSION_LABELS, Permission, permissionNames } from '../../core/permissions.js';
import type { Deps } from '../../deps.js';
import { memberPermissions } from './servers.service.js';
import { ungrantableBits } from './roles.js';

/**
 * Authorization for server actions, kept apart from the operations themselves so the CLI can act
 * as an operator with no actor (docs/permissions.md). Routes call these first.
 */

/** Plain-words labels of the bits set in `bits`, for messages. */
export function permissionLabels(bits: bigint): string {
  return permissionNames(bits)
    .map((name) => PERMISSION_LABELS[name])
    .join(', ');
}

/** What a non-member is told: the same as for a server that does not exist. */
export interface NotFound {
  title: string;
  detail: string;
}
export const SERVER_NOT_FOUND: NotFound = { title: 'Server not found', detail: 'This server does not exist, or you are not a member of it.' };
export const CHANNEL_NOT_FOUND: NotFound = { title: 'Channel not found', detail: 'This channel does not exist, or you are not a member of its server.' };

/**
 * The actor's permissions in a server when they hold every bit of `bits` (`0n` only needs
 * membership). A non-member gets a 404 so that a server's existence does not leak; a member
 * without the permission gets a 403 naming it.
 */
export async function requireServerPermission(deps: Deps, serverId: string, userId: string, bits: bigint, notFound: NotFound = SERVER_NOT_FOUND): Promise<bigint> {
  const held = await memberPermissions(deps, serverId, userId);
  if (held === undefined) throw new PageError(404, notFound.title, notFound.detail);
  if ((held & bits) !== bits) {
    throw new PageError(403, 'Missing permission', `You need the ${permissionLabels(bits & ~held)} permission in this server to do this.`);
  }
  return held;
}

/** Like requireServerPermission, but one of several bits suffices (e.g. Create invite or Manage server). */
export async function requireAnyServerPermission(deps: Deps, serverId: string, userId: string, anyOf: bigint): Promise<bigint> {
  const held = await memberPermissions(deps, serverId, userId);
  if (held === undefined) throw new PageError(404, SERVER_NOT_FOUND.title, SERVER_NOT_FOUND.detail);
  if ((held & anyOf) === 0n) {
    throw new PageError(403, 'Missing permission', `You need one of these permissions in this server: ${permissionLabels(anyOf)}.`);
  }
  return held;
}

/**
 * docs/permissions.md, "Who may grant what": nobody grants a permission they do not hold, and
 * only the owner or an Administrator grants Administrator. Throws a 403 (50013) naming the bits.
 */
export function requireGrantable(actorPermissions: bigint, requested: bigint): void {
  const missing = ungrantableBits(actorPermissions, requested);
  if (missing === 0n) return;
  if (missing & Permission.ADMINISTRATOR) {
    throw new ApiError(403, 50013, 'Only the server owner or an Administrator can give out the Administrator permission.');
  }
  throw new ApiError(403, 50013, `You cannot grant permissions you do not have yourself: ${permissionLabels(missing)}.`);
}

/**
 * docs/permissions.md, "Roles within reach": a role can be edited, deleted, given or taken away
 * only by someone who holds every permission it carries (our stand-in for Discord's role
 * hierarchy), so a moderator cannot strip or hand out an Administrator role.
 */
export function requireRoleInReach(actorPermissions: bigint, role: { name: string; permissions: bigint }): void {
  const missing = ungrantableBits(actorPermissions, role.permissions);
  if (missing === 0n) return;
  throw new ApiError(403, 50013, `The role "${role.name}" has permissions you do not have (${permissionLabels(missing)}), so you cannot change who holds it or what it allows.`);
}

/** Removing a member: they must not hold anything the actor lacks (so a moderator cannot remove an Administrator). */
export function requireMemberInReach(actorPermissions: bigint, targetPermissions: bigint): void {
  if (ungrantableBits(actorPermissions, targetPermissions) === 0n) return;
  throw new ApiError(403, 50013, 'This member has permissions you do not have, so you cannot remove them.');
}

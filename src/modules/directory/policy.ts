import type { Actor } from '../../core/actor.js';
import { AccessError, ApiError, ApiErrors } from '../../core/errors.js';
import { ALL_PERMISSIONS, PERMISSION_LABELS, Permission, permissionNames } from '../../core/permissions.js';
import { ungrantableBits } from './roles.js';

/**
 * Who may do what in a server (docs/permissions.md), as pure decisions over what the actor holds
 * there; the directory services look the holdings up and call these before they change anything,
 * so a page, the API and the CLI meet the same rules. The operator (CLI) acts outside every
 * server's permissions and may do anything.
 */

/** What an action needs: every bit of `all` (`0n`: membership alone), or one bit of `any`. */
export type Need = { all: bigint } | { any: bigint };

export const ServerAction = {
  view: { all: 0n },
  manageServer: { all: Permission.MANAGE_SERVER },
  manageChannels: { all: Permission.MANAGE_CHANNELS },
  manageRoles: { all: Permission.MANAGE_ROLES },
  /** The settings overview: any of the sections' permissions (View audit log: the Audit log section, modules/audit/). */
  openSettings: { any: Permission.MANAGE_SERVER | Permission.MANAGE_CHANNELS | Permission.MANAGE_ROLES | Permission.KICK_MEMBERS | Permission.VIEW_AUDIT_LOG },
  /**
   * The members section: inviting needs Manage server, giving roles Manage roles, removing Kick
   * members (issue #36 §5: a moderator holding only Kick members kicks from the member list).
   */
  seeMembers: { any: Permission.MANAGE_SERVER | Permission.MANAGE_ROLES | Permission.KICK_MEMBERS },
  createInvite: { any: Permission.CREATE_INSTANT_INVITE | Permission.MANAGE_SERVER },
  removeMember: { any: Permission.KICK_MEMBERS | Permission.MANAGE_SERVER },
} as const satisfies Record<string, Need>;

/** What the actor holds in a server: a member's permissions, ALL for the operator, undefined for a non-member. */
export interface Standing {
  actor: Actor;
  /** The actor's permissions there (undefined: not a member, or no such server). */
  held: bigint | undefined;
}

export function can(standing: Standing, need: Need): boolean {
  if (standing.actor.kind === 'operator') return true;
  const held = standing.held;
  if (held === undefined) return false;
  return 'all' in need ? (held & need.all) === need.all : (held & need.any) !== 0n;
}

/** Plain-words labels of the bits set in `bits`, for messages. */
function permissionLabels(bits: bigint): string {
  return permissionNames(bits)
    .map((name) => PERMISSION_LABELS[name])
    .join(', ');
}

/**
 * The permissions the actor acts with when `need` is met. A non-member gets the not-found error
 * (`unknown`, 10004 by default) so a server's existence does not leak; a member without the
 * permission gets 50013 naming it.
 */
export function check(standing: Standing, need: Need, unknown: () => ApiError = ApiErrors.unknownServer): bigint {
  if (standing.actor.kind === 'operator') return ALL_PERMISSIONS;
  const held = standing.held;
  if (held === undefined) {
    const error = unknown();
    throw new AccessError(error.status, error.code, error.message);
  }
  if (can(standing, need)) return held;
  if ('all' in need) throw new AccessError(403, 50013, `You need the ${permissionLabels(need.all & ~held)} permission in this server to do this.`);
  throw new AccessError(403, 50013, `You need one of these permissions in this server: ${permissionLabels(need.any)}.`);
}

/**
 * "Who may grant what": nobody grants a permission they do not hold, and only the owner or an
 * Administrator grants Administrator. Throws a 403 (50013) naming the bits.
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
 * "Roles within reach": a role can be edited, deleted, given or taken away only by someone who
 * holds every permission it carries (our stand-in for Discord's role hierarchy), so a moderator
 * cannot strip or hand out an Administrator role.
 */
export function requireRoleInReach(actorPermissions: bigint, role: { name: string; permissions: bigint }): void {
  const missing = ungrantableBits(actorPermissions, role.permissions);
  if (missing === 0n) return;
  throw new ApiError(403, 50013, `The role "${role.name}" has permissions you do not have (${permissionLabels(missing)}), so you cannot change who holds it or what it allows.`);
}

/**
 * Rule 3 as a question, for callers that word their own refusal: the bits of a role the actor
 * lacks (0n: the role is within reach). Reinstalling a bot rewrites its managed role, so the
 * installer must reach that role (issue #36 §5).
 */
export function roleBitsOutOfReach(actorPermissions: bigint, rolePermissions: bigint): bigint {
  return ungrantableBits(actorPermissions, rolePermissions);
}

/** Removing a member: they must not hold anything the actor lacks (so a moderator cannot remove an Administrator). */
export function requireMemberInReach(actorPermissions: bigint, targetPermissions: bigint): void {
  if (ungrantableBits(actorPermissions, targetPermissions) === 0n) return;
  throw new ApiError(403, 50013, 'This member has permissions you do not have, so you cannot remove them.');
}

/**
 * Every role given or taken away must be within the actor's reach, and so must every app-managed
 * role the member holds (issue #21 §5): it cannot be changed by hand, so without this a bot
 * holding permissions the actor lacks could be edited anyway.
 */
export function requireRoleChangesInReach(
  actorPermissions: bigint,
  roles: ReadonlyArray<{ id: string; name: string; permissions: bigint; managedApplicationId: string | null }>,
  before: readonly string[],
  after: readonly string[],
): void {
  const changed = new Set([...before.filter((id) => !after.includes(id)), ...after.filter((id) => !before.includes(id))]);
  if (changed.size === 0) return;
  for (const role of roles) if (changed.has(role.id) || (role.managedApplicationId !== null && before.includes(role.id))) requireRoleInReach(actorPermissions, role);
}

/**
 * Discord's moderator permissions, the ones a server's MFA level withholds from members without a
 * second factor (Discord's "2FA requirement": Kick, Ban, Administrator, Manage channels, server,
 * roles, messages, webhooks, threads, expressions, Timeout members).
 */
export const MFA_GATED_PERMISSIONS =
  Permission.KICK_MEMBERS |
  Permission.BAN_MEMBERS |
  Permission.ADMINISTRATOR |
  Permission.MANAGE_CHANNELS |
  Permission.MANAGE_SERVER |
  Permission.MANAGE_MESSAGES |
  Permission.MANAGE_ROLES |
  Permission.MANAGE_WEBHOOKS |
  Permission.MANAGE_SERVER_EXPRESSIONS |
  Permission.MANAGE_THREADS |
  Permission.MODERATE_MEMBERS;

/** Discord's guild `mfa_level`: 0 none, 1 elevated (moderators need a second factor). */
export type MfaLevel = 0 | 1;

/**
 * The permissions a member acts with under the server's MFA level (issue #38 §4): at level 1,
 * without a second factor (a bot: without its owner's), the moderator bits count as absent, so
 * every check that reads them refuses as it would for a member who never had them. The rest stays.
 */
export function underMfaLevel(held: bigint, mfaLevel: MfaLevel, hasSecondFactor: boolean): bigint {
  if (mfaLevel === 0 || hasSecondFactor) return held;
  return held & ~MFA_GATED_PERMISSIONS;
}

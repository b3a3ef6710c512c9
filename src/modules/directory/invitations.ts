import { Permission } from '../../core/permissions.js';
import { isEveryoneRole, ungrantableBits, type Role } from './roles.js';

/**
 * Invitations to a person by username (issue #21 §3), as their server's managers see them and as
 * acceptance re-checks them (issue #36 §3: "a pending invitation outlives the person who sent it").
 */

/** Issue #36 §3: an invitation lasts 7 days (the default lifetime of an invite link, too). */
export const INVITATION_LIFETIME_MS = 7 * 86_400_000;

/** A pending invitation as Server settings → Invites lists it: who sent it, not to whom (docs/permissions.md, "No username oracle"). */
export interface ServerInvitation {
  id: string;
  serverId: string;
  inviterId: string;
  inviterName: string;
  roleIds: string[];
  createdAt: number;
  expiresAt: number;
  /** Whether its sender may still invite (Manage server); when not, accepting it fails (invitationGrant). */
  senderCanInvite: boolean;
}

/** What accepting an invitation grants, decided again at acceptance from what its sender holds then. */
export type InvitationGrant = { ok: true; roleIds: string[] } | { ok: false };

/**
 * Issue #36 §3: accepting re-checks that the sender may still grant what the invitation grants.
 * Membership needs what sending it needed (Manage server; `held` undefined: the sender is no
 * longer a member) — without it the invitation fails. Each offered role needs Manage roles and
 * the role within the sender's reach (policy.ts "Roles within reach"); a role the sender can no
 * longer give is left out and the person joins with the rest, which the sender could give them
 * directly anyway. `roles` are the server's roles as they are now: deleted ones are left out too.
 */
export function invitationGrant(
  held: bigint | undefined,
  offered: readonly string[],
  roles: ReadonlyArray<Pick<Role, 'id' | 'serverId' | 'permissions' | 'managedApplicationId'>>,
): InvitationGrant {
  if (held === undefined || (held & Permission.MANAGE_SERVER) === 0n) return { ok: false };
  if ((held & Permission.MANAGE_ROLES) === 0n) return { ok: true, roleIds: [] };
  const roleIds = offered.filter((id) => {
    const role = roles.find((r) => r.id === id);
    return role !== undefined && !isEveryoneRole(role) && role.managedApplicationId === null && ungrantableBits(held, role.permissions) === 0n;
  });
  return { ok: true, roleIds };
}

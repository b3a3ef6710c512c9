import { ALL_PERMISSIONS, Permission, has, type PermissionName } from '../../core/permissions.js';

/** A role of a server; the @everyone role has the server's id (as on Discord). */
export interface Role {
  id: string;
  serverId: string;
  name: string;
  permissions: bigint;
  color: number;
  position: number;
  /** Set for a bot's managed role, which only installs change. */
  managedApplicationId: string | null;
  createdAt: number;
}

export const ROLE_NAME_MAX_LENGTH = 100;
export const EVERYONE_ROLE_NAME = '@everyone';
/** Colours are 24-bit RGB integers; 0 means "no colour". */
export const MAX_ROLE_COLOR = 0xffffff;

export function isEveryoneRole(role: Pick<Role, 'id' | 'serverId'>): boolean {
  return role.id === role.serverId;
}

/**
 * docs/permissions.md, "Who may grant what": an actor may put onto a role (or give through a role)
 * only bits the actor holds, and Administrator only when the actor is the owner or holds
 * Administrator. An actor's computed permissions already hold every bit for the owner and for
 * Administrators, so one subset test covers both rules.
 * Returns the bits the actor may not grant (0n when the grant is allowed).
 */
export function ungrantableBits(actorPermissions: bigint, requested: bigint): bigint {
  const missing = requested & ~actorPermissions & ALL_PERMISSIONS;
  if (has(requested, Permission.ADMINISTRATOR) && !has(actorPermissions, Permission.ADMINISTRATOR)) {
    return missing | Permission.ADMINISTRATOR;
  }
  return missing;
}

/**
 * Permission bits from the role editor's checkboxes (one value per permission name). Returns
 * undefined when a value is not a permission name.
 */
export function permissionsFromNames(values: readonly string[]): bigint | undefined {
  let bits = 0n;
  for (const value of values) {
    if (!Object.hasOwn(Permission, value)) return undefined;
    bits |= Permission[value as PermissionName];
  }
  return bits;
}

/**
 * A colour from a form: '' (none) or '#rrggbb' / 'rrggbb'. Returns undefined when it is neither.
 */
export function parseColor(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return 0;
  const match = /^#?([0-9a-fA-F]{6})$/.exec(trimmed);
  return match?.[1] === undefined ? undefined : Number.parseInt(match[1], 16);
}

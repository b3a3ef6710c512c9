import type { Transaction } from 'kysely';
import { INVISIBLE_CHARACTER_MESSAGE, invisibleCharacter } from '../../core/names.js';
import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { Actor } from '../../core/actor.js';
import type { Acting } from '../../core/acting.js';
import type { FieldChange } from '../../events/domain-events.js';
import { changing } from '../../events/event-bus.js';
import type { Database } from '../../storage/database.js';
import { authorize } from './access.service.js';
import { ServerAction, requireGrantable, requireRoleInReach } from './policy.js';
import { MAX_ROLE_COLOR, ROLE_NAME_MAX_LENGTH, isEveryoneRole, type Role } from './roles.js';
import { deleteRole as deleteRoleRow, findRole, insertRole, listRoles, listTopRoleColors, maxRolePosition, updateRole as updateRoleRow } from './roles.repository.js';
import { codePointLength } from './servers.js';
import { findServer } from './servers.repository.js';

function validName(raw: string): string {
  const name = raw.trim();
  const length = codePointLength(name);
  if (length < 1 || length > ROLE_NAME_MAX_LENGTH) throw invalidField(['name'], 'BASE_TYPE_BAD_LENGTH', `A role name is 1–${ROLE_NAME_MAX_LENGTH} characters.`);
  // Issue #21 §4: every display name refuses invisible and text-direction characters (core/names.ts).
  const invisible = invisibleCharacter(name);
  if (invisible !== undefined) throw invalidField(['name'], 'BASE_TYPE_INVALID', INVISIBLE_CHARACTER_MESSAGE);
  // "@everyone" names the implicit role; a second one would be indistinguishable in lists.
  if (name.toLowerCase() === '@everyone') throw invalidField(['name'], 'ROLE_NAME_RESERVED', 'That name is reserved for the role every member has.');
  return name;
}

function validColor(color: number | undefined): number | undefined {
  if (color === undefined) return undefined;
  if (!Number.isInteger(color) || color < 0 || color > MAX_ROLE_COLOR) throw invalidField(['color'], 'NUMBER_TYPE_MAX', 'A colour is an RGB value from 0 to 16777215 (#ffffff).');
  return color;
}

const managedRoleError = () => new ApiError(403, 50013, 'This role is managed by an app: it changes only when the app is installed again or removed.');
const everyoneRoleError = () => new ApiError(400, 50028, 'The @everyone role cannot be deleted or renamed.');

/** Finds a role of this server or throws 10011. */
export async function getRole(deps: Deps, serverId: string, roleId: string): Promise<Role> {
  const role = isSnowflake(serverId) && isSnowflake(roleId) ? await findRole(deps.db, serverId, roleId) : undefined;
  if (!role) throw ApiErrors.unknownRole();
  return role;
}

export async function getRoles(deps: Deps, serverId: string): Promise<Role[]> {
  if (!isSnowflake(serverId)) return [];
  return listRoles(deps.db, serverId);
}

/** Members' name colours in a server (their highest coloured role's; absent when none), for the channel view. */
export async function memberNameColors(deps: Pick<Deps, 'db'>, serverId: string, userIds: readonly string[]): Promise<Map<string, number>> {
  if (!isSnowflake(serverId)) return new Map();
  return listTopRoleColors(deps.db, serverId, [...new Set(userIds)].filter(isSnowflake));
}

/**
 * Creates a role above the others. The actor needs Manage roles and may only give out bits they
 * hold (policy.ts). Throws 10004, 50013 or 50035 (`name`, `color`).
 */
export async function createRole(deps: Deps, acting: Acting<Actor>, serverId: string, input: { name: string; permissions: bigint; color?: number }): Promise<Role> {
  const held = await authorize(deps, acting.actor, serverId, ServerAction.manageRoles);
  requireGrantable(held, input.permissions);
  const name = validName(input.name);
  const color = validColor(input.color) ?? 0;
  if (!isSnowflake(serverId) || !(await findServer(deps.db, serverId))) throw ApiErrors.unknownServer();
  const role: Role = {
    id: deps.ids.next(),
    serverId,
    name,
    permissions: input.permissions,
    color,
    position: (await maxRolePosition(deps.db, serverId)) + 1,
    managedApplicationId: null,
    createdAt: deps.clock.now(),
  };
  await changing(deps, acting, async (trx, emit) => {
    await insertRole(trx, role);
    // Issue #37 §2: permissions as a decimal string, as Discord's API writes a bitfield.
    emit({ type: 'role.created', serverId, roleId: role.id, name, permissions: role.permissions.toString(), color });
  });
  return role;
}

/**
 * Changes a role's name, permissions or colour. @everyone keeps its name; a managed role is not
 * editable here. The actor needs Manage roles, the role within reach and every bit it gives
 * (policy.ts). Returns the new role. Throws 10004, 10011, 50013 or 50035.
 */
export async function updateRole(deps: Deps, acting: Acting<Actor>, serverId: string, roleId: string, changes: { name?: string; permissions?: bigint; color?: number }): Promise<Role> {
  const held = await authorize(deps, acting.actor, serverId, ServerAction.manageRoles);
  const role = await getRole(deps, serverId, roleId);
  requireRoleInReach(held, role);
  if (changes.permissions !== undefined) requireGrantable(held, changes.permissions);
  if (role.managedApplicationId !== null) throw managedRoleError();
  let name: string | undefined;
  if (changes.name !== undefined && changes.name.trim() !== role.name) {
    if (isEveryoneRole(role)) throw everyoneRoleError();
    name = validName(changes.name);
  }
  const color = validColor(changes.color);
  const next = { ...role, ...(name !== undefined ? { name } : {}), ...(changes.permissions !== undefined ? { permissions: changes.permissions } : {}), ...(color !== undefined ? { color } : {}) };
  const fields = roleChanges(role, next);
  await changing(deps, acting, async (trx, emit) => {
    await updateRoleRow(trx, serverId, roleId, {
      ...(name !== undefined ? { name } : {}),
      ...(changes.permissions !== undefined ? { permissions: changes.permissions } : {}),
      ...(color !== undefined ? { color } : {}),
    });
    // Issue #37 §2: a form saved unchanged changes nothing worth a row in the audit log.
    if (fields.length > 0) emit({ type: 'role.updated', serverId, roleId, changes: fields });
    // Permissions taken away may end someone's right to read a channel they follow live.
    if (next.permissions !== role.permissions) emit({ type: 'access.changed', topicId: serverId });
  });
  return next;
}

/** What differs between a role and its new state: name, permissions (decimal strings) and colour, old → new. */
function roleChanges(role: Role, next: Role): FieldChange[] {
  const changes: FieldChange[] = [];
  if (next.name !== role.name) changes.push({ key: 'name', old: role.name, new: next.name });
  if (next.permissions !== role.permissions) changes.push({ key: 'permissions', old: role.permissions.toString(), new: next.permissions.toString() });
  if (next.color !== role.color) changes.push({ key: 'color', old: role.color, new: next.color });
  return changes;
}

/** Deletes a role (never @everyone, never a managed role); members lose it. The actor needs Manage roles and the role within reach. */
export async function deleteRole(deps: Deps, acting: Acting<Actor>, serverId: string, roleId: string): Promise<void> {
  const held = await authorize(deps, acting.actor, serverId, ServerAction.manageRoles);
  const role = await getRole(deps, serverId, roleId);
  requireRoleInReach(held, role);
  if (isEveryoneRole(role)) throw everyoneRoleError();
  if (role.managedApplicationId !== null) throw managedRoleError();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteRoleRow(trx, serverId, roleId))) throw ApiErrors.unknownRole();
    emit({ type: 'role.deleted', serverId, roleId, name: role.name });
    // Members lose the role: what it let them read, they may no longer (issue #21 §5).
    emit({ type: 'access.changed', topicId: serverId });
  });
}

// A bot install (applications/installs.service.ts) writes its app's managed role in the
// transaction that also writes the bot's membership and install row (issue #4): these take it.

/** Adds a role below every existing one. */
export async function appendRoleInTransaction(trx: Transaction<Database>, role: Omit<Role, 'position'>): Promise<void> {
  const position = (await maxRolePosition(trx, role.serverId)) + 1;
  await insertRole(trx, { ...role, position });
}

export function updateRoleInTransaction(trx: Transaction<Database>, serverId: string, roleId: string, changes: { name?: string; permissions?: bigint; color?: number }): Promise<void> {
  return updateRoleRow(trx, serverId, roleId, changes);
}

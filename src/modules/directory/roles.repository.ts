import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { prepareQuery } from '../../storage/prepared.js';
import { toId, toIdOrNull, toNum } from '../../storage/types.js';
import type { RolesTable } from './directory.table.js';
import type { Role } from './roles.js';

type Db = Kysely<Database> | Transaction<Database>;

export function toRole(row: Selectable<RolesTable>): Role {
  return {
    id: toId(row.id),
    serverId: toId(row.server_id),
    name: row.name,
    permissions: BigInt(row.permissions),
    color: toNum(row.color),
    position: toNum(row.position),
    managedApplicationId: toIdOrNull(row.managed_application_id),
    createdAt: toNum(row.created_at),
  };
}

export async function insertRole(db: Db, role: Role): Promise<void> {
  await db
    .insertInto('roles')
    .values({
      id: role.id,
      server_id: role.serverId,
      name: role.name,
      permissions: role.permissions.toString(),
      color: role.color,
      position: role.position,
      managed_application_id: role.managedApplicationId,
      created_at: role.createdAt,
    })
    .execute();
}

export async function findRole(db: Db, serverId: string, roleId: string): Promise<Role | undefined> {
  const row = await db.selectFrom('roles').selectAll().where('server_id', '=', serverId).where('id', '=', roleId).executeTakeFirst();
  return row ? toRole(row) : undefined;
}

/** A server's roles, @everyone first (position 0), then by position and age. */
export async function listRoles(db: Db, serverId: string): Promise<Role[]> {
  const rows = await db.selectFrom('roles').selectAll().where('server_id', '=', serverId).orderBy('position').orderBy('id').execute();
  return rows.map(toRole);
}

/** The highest position in use, so a new role goes on top. */
export async function maxRolePosition(db: Db, serverId: string): Promise<number> {
  const row = await db.selectFrom('roles').select((eb) => eb.fn.max('position').as('max')).where('server_id', '=', serverId).executeTakeFirst();
  return row?.max === null || row?.max === undefined ? 0 : toNum(row.max);
}

export async function updateRole(db: Db, serverId: string, roleId: string, changes: { name?: string; permissions?: bigint; color?: number }): Promise<void> {
  const set: { name?: string; permissions?: string; color?: number } = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.permissions !== undefined) set.permissions = changes.permissions.toString();
  if (changes.color !== undefined) set.color = changes.color;
  if (Object.keys(set).length === 0) return;
  await db.updateTable('roles').set(set).where('server_id', '=', serverId).where('id', '=', roleId).execute();
}

/** Deletes a role; its assignments go with it (member_roles.role_id cascades on both databases). */
export async function deleteRole(db: Db, serverId: string, roleId: string): Promise<boolean> {
  const result = await db.deleteFrom('roles').where('server_id', '=', serverId).where('id', '=', roleId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * The permission strings that apply to a member: @everyone's (the role whose id is the server's)
 * and those of every role assigned to them, in the servers given.
 */
export async function listPermissionRows(db: Db, userId: string, serverIds: readonly string[]): Promise<Array<{ id: string; serverId: string; permissions: string }>> {
  if (serverIds.length === 0) return [];
  const rows = serverIds.length === 1 ? (await permissionRowsInServer(db, { userId, serverId: serverIds[0] as string })).rows : await permissionRows(db, userId, { in: serverIds }).execute();
  return rows.map((row) => ({ id: toId(row.id), serverId: toId(row.server_id), permissions: row.permissions }));
}

/** @everyone and the person's roles in each of the servers, by the rule of listPermissionRows. */
function permissionRows(db: Db, userId: string, servers: { in: readonly string[] } | { is: string }) {
  return db
    .selectFrom('roles')
    .select(['roles.id', 'roles.server_id', 'roles.permissions'])
    .where((eb) => ('in' in servers ? eb('roles.server_id', 'in', servers.in) : eb('roles.server_id', '=', servers.is)))
    .where((eb) =>
      eb.or([
        eb('roles.id', '=', eb.ref('roles.server_id')),
        eb(
          'roles.id',
          'in',
          eb.selectFrom('member_roles').select('member_roles.role_id').where('member_roles.user_id', '=', userId).whereRef('member_roles.server_id', '=', 'roles.server_id'),
        ),
      ]),
    );
}

// Prepared (storage/prepared.ts): one server's rows are read by every permission check there (access.service.ts memberStanding).
const permissionRowsInServer = prepareQuery<{ userId: string; serverId: string }>()((db, v) => permissionRows(db, v.userId, { is: v.serverId }));

/**
 * Each of these members' display colour in this server (issue #24, Discord's rule): the colour of
 * their highest role (by position; the older one on a tie) whose colour is not 0. Members
 * without a coloured role are absent from the map.
 */
export async function listTopRoleColors(db: Db, serverId: string, userIds: readonly string[]): Promise<Map<string, number>> {
  const colors = new Map<string, number>();
  if (userIds.length === 0) return colors;
  const rows = await db
    .selectFrom('member_roles')
    .innerJoin('roles', 'roles.id', 'member_roles.role_id')
    .select(['member_roles.user_id', 'roles.color'])
    .where('member_roles.server_id', '=', serverId)
    .where('member_roles.user_id', 'in', userIds)
    .where('roles.color', '!=', 0)
    .orderBy('roles.position', 'desc')
    .orderBy('roles.id', 'asc')
    .execute();
  for (const row of rows) {
    const userId = toId(row.user_id);
    if (!colors.has(userId)) colors.set(userId, toNum(row.color));
  }
  return colors;
}

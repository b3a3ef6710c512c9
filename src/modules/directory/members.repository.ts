import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toBool, toId, toNum } from '../../storage/types.js';
import type { Member, MemberWithPerson } from './members.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertMember(db: Db, member: { serverId: string; userId: string; joinedAt: number }): Promise<void> {
  await db.insertInto('members').values({ server_id: member.serverId, user_id: member.userId, nickname: null, joined_at: member.joinedAt }).execute();
}

export async function findMember(db: Db, serverId: string, userId: string): Promise<Member | undefined> {
  const row = await db.selectFrom('members').selectAll().where('server_id', '=', serverId).where('user_id', '=', userId).executeTakeFirst();
  if (!row) return undefined;
  const roles = await db.selectFrom('member_roles').select('role_id').where('server_id', '=', serverId).where('user_id', '=', userId).orderBy('role_id').execute();
  return {
    serverId: toId(row.server_id),
    userId: toId(row.user_id),
    nickname: row.nickname,
    joinedAt: toNum(row.joined_at),
    roleIds: roles.map((r) => toId(r.role_id)),
  };
}

/** Removes a membership; its role assignments cascade. */
export async function deleteMember(db: Db, serverId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('members').where('server_id', '=', serverId).where('user_id', '=', userId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Replaces a member's role assignments with exactly `roleIds` (never @everyone, which is implicit). */
export async function replaceMemberRoles(db: Db, serverId: string, userId: string, roleIds: readonly string[]): Promise<void> {
  await db.deleteFrom('member_roles').where('server_id', '=', serverId).where('user_id', '=', userId).execute();
  if (roleIds.length === 0) return;
  await db
    .insertInto('member_roles')
    .values(roleIds.map((roleId) => ({ server_id: serverId, user_id: userId, role_id: roleId })))
    .execute();
}

/** A server's members with their profiles and roles, by join order. */
export async function listMembers(db: Db, serverId: string): Promise<MemberWithPerson[]> {
  const rows = await db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(['members.server_id', 'members.user_id', 'members.nickname', 'members.joined_at', 'users.username', 'users.name', 'users.avatar_url', 'users.bot'])
    .where('members.server_id', '=', serverId)
    .orderBy('members.joined_at')
    .orderBy('members.user_id')
    .execute();
  const assignments = await db.selectFrom('member_roles').select(['user_id', 'role_id']).where('server_id', '=', serverId).orderBy('role_id').execute();
  const rolesByUser = new Map<string, string[]>();
  for (const a of assignments) {
    const key = toId(a.user_id);
    const list = rolesByUser.get(key) ?? [];
    list.push(toId(a.role_id));
    rolesByUser.set(key, list);
  }
  return rows.map((row) => {
    const userId = toId(row.user_id);
    return {
      serverId: toId(row.server_id),
      userId,
      nickname: row.nickname,
      joinedAt: toNum(row.joined_at),
      roleIds: rolesByUser.get(userId) ?? [],
      person: { id: userId, username: row.username, name: row.name, avatarUrl: row.avatar_url, bot: toBool(row.bot) },
    };
  });
}

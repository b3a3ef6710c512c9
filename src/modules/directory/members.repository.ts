import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toBool, toId, toNum } from '../../storage/types.js';
import type { ServerInvitation } from './invitations.js';
import type { JoinedVia, Member, MemberInvitation, MemberWithPerson } from './members.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertMember(db: Db, member: { serverId: string; userId: string; joinedAt: number; joinedVia: JoinedVia }): Promise<void> {
  await db
    .insertInto('members')
    .values({ server_id: member.serverId, user_id: member.userId, nickname: null, joined_at: member.joinedAt, joined_via: member.joinedVia })
    .execute();
}

// Prepared (storage/prepared.ts): every permission check in a server reads the member (access.service.ts memberStanding).
const memberByIds = prepareQuery<{ serverId: string; userId: string }>()((db, v) => db.selectFrom('members').selectAll().where('server_id', '=', v.serverId).where('user_id', '=', v.userId));
const roleIdsOfMember = prepareQuery<{ serverId: string; userId: string }>()((db, v) =>
  db.selectFrom('member_roles').select('role_id').where('server_id', '=', v.serverId).where('user_id', '=', v.userId).orderBy('role_id'),
);

export async function findMember(db: Db, serverId: string, userId: string): Promise<Member | undefined> {
  const row = await firstRow(memberByIds(db, { serverId, userId }));
  if (!row) return undefined;
  const roles = (await roleIdsOfMember(db, { serverId, userId })).rows;
  return {
    serverId: toId(row.server_id),
    userId: toId(row.user_id),
    nickname: row.nickname,
    joinedAt: toNum(row.joined_at),
    joinedVia: row.joined_via as JoinedVia,
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
    .select(['members.server_id', 'members.user_id', 'members.nickname', 'members.joined_at', 'members.joined_via', 'users.username', 'users.name', 'users.avatar_url', 'users.bot'])
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
      joinedVia: row.joined_via as JoinedVia,
      roleIds: rolesByUser.get(userId) ?? [],
      person: { id: userId, username: row.username, name: row.name, avatarUrl: row.avatar_url, bot: toBool(row.bot) },
    };
  });
}

// --- Invitations (issue #21 §3: adding a person is an invitation they accept or decline) ---

function splitIds(text: string): string[] {
  return text === '' ? [] : text.split(',');
}

/**
 * Records an invitation; false when one is already pending for this person and server (nothing
 * changes). An expired one in its place is replaced (issue #36 §3: a new invitation may follow).
 */
export async function insertInvitation(
  db: Db,
  invitation: { id: string; serverId: string; userId: string; inviterId: string; roleIds: readonly string[]; createdAt: number; expiresAt: number },
): Promise<boolean> {
  const result = await db
    .insertInto('member_invitations')
    .values({
      id: invitation.id,
      server_id: invitation.serverId,
      user_id: invitation.userId,
      inviter_id: invitation.inviterId,
      role_ids: invitation.roleIds.join(','),
      created_at: invitation.createdAt,
      expires_at: invitation.expiresAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['server_id', 'user_id'])
        .doUpdateSet((eb) => ({
          id: eb.ref('excluded.id'),
          inviter_id: eb.ref('excluded.inviter_id'),
          role_ids: eb.ref('excluded.role_ids'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('member_invitations.expires_at', '<=', invitation.createdAt),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** A person's pending (unexpired) invitations with the server's and inviter's names, oldest first. */
export async function listInvitationsForUser(db: Db, userId: string, now: number): Promise<MemberInvitation[]> {
  const rows = await db
    .selectFrom('member_invitations')
    .innerJoin('servers', 'servers.id', 'member_invitations.server_id')
    .innerJoin('users', 'users.id', 'member_invitations.inviter_id')
    .select([
      'member_invitations.id',
      'member_invitations.server_id',
      'member_invitations.user_id',
      'member_invitations.inviter_id',
      'member_invitations.role_ids',
      'member_invitations.created_at',
      'member_invitations.expires_at',
      'servers.name as server_name',
      'users.name as inviter_name',
    ])
    .where('member_invitations.user_id', '=', userId)
    .where('member_invitations.expires_at', '>', now)
    .orderBy('member_invitations.id')
    .execute();
  return rows.map((row) => ({
    id: toId(row.id),
    serverId: toId(row.server_id),
    serverName: row.server_name,
    userId: toId(row.user_id),
    inviterId: toId(row.inviter_id),
    inviterName: row.inviter_name,
    roleIds: splitIds(row.role_ids),
    createdAt: toNum(row.created_at),
    expiresAt: toNum(row.expires_at),
  }));
}

/** A server's pending (unexpired) invitations with their senders' names, oldest first; never to whom (docs/permissions.md). */
export async function listInvitationsOfServer(db: Db, serverId: string, now: number): Promise<Array<Omit<ServerInvitation, 'senderCanInvite'>>> {
  const rows = await db
    .selectFrom('member_invitations')
    .innerJoin('users', 'users.id', 'member_invitations.inviter_id')
    .select(['member_invitations.id', 'member_invitations.inviter_id', 'member_invitations.role_ids', 'member_invitations.created_at', 'member_invitations.expires_at', 'users.name as inviter_name'])
    .where('member_invitations.server_id', '=', serverId)
    .where('member_invitations.expires_at', '>', now)
    .orderBy('member_invitations.id')
    .execute();
  return rows.map((row) => ({
    id: toId(row.id),
    serverId,
    inviterId: toId(row.inviter_id),
    inviterName: row.inviter_name,
    roleIds: splitIds(row.role_ids),
    createdAt: toNum(row.created_at),
    expiresAt: toNum(row.expires_at),
  }));
}

/** One of a server's invitations, for cancelling it (who sent it decides who may); expired ones included. */
export async function findServerInvitation(db: Db, serverId: string, invitationId: string): Promise<{ inviterId: string; userId: string } | undefined> {
  const row = await db.selectFrom('member_invitations').select(['inviter_id', 'user_id']).where('server_id', '=', serverId).where('id', '=', invitationId).executeTakeFirst();
  return row ? { inviterId: toId(row.inviter_id), userId: toId(row.user_id) } : undefined;
}

/** Withdraws one of a server's invitations; false when there is none (answered or cancelled meanwhile). */
export async function deleteServerInvitation(db: Db, serverId: string, invitationId: string): Promise<boolean> {
  const result = await db.deleteFrom('member_invitations').where('server_id', '=', serverId).where('id', '=', invitationId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** One of the person's invitations as it stands (expired ones included), or undefined. */
export async function findInvitation(db: Db, invitationId: string, userId: string): Promise<{ serverId: string; inviterId: string; roleIds: string[]; expiresAt: number } | undefined> {
  const row = await db
    .selectFrom('member_invitations')
    .select(['server_id', 'inviter_id', 'role_ids', 'expires_at'])
    .where('id', '=', invitationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row ? { serverId: toId(row.server_id), inviterId: toId(row.inviter_id), roleIds: splitIds(row.role_ids), expiresAt: toNum(row.expires_at) } : undefined;
}

/**
 * Deletes one of the person's invitations and returns what it offered, or undefined when there is
 * none (already answered, withdrawn with its server, or never theirs): an atomic take, so accepting
 * twice at once joins once.
 */
export async function takeInvitation(db: Db, invitationId: string, userId: string): Promise<{ serverId: string; roleIds: string[] } | undefined> {
  const row = await db
    .selectFrom('member_invitations')
    .select(['server_id', 'role_ids'])
    .where('id', '=', invitationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return undefined;
  const result = await db.deleteFrom('member_invitations').where('id', '=', invitationId).where('user_id', '=', userId).executeTakeFirst();
  if (result.numDeletedRows === 0n) return undefined;
  return { serverId: toId(row.server_id), roleIds: splitIds(row.role_ids) };
}

/** Removes any pending invitation of a person to a server (they joined another way). */
export async function deleteInvitationsFor(db: Db, serverId: string, userId: string): Promise<void> {
  await db.deleteFrom('member_invitations').where('server_id', '=', serverId).where('user_id', '=', userId).execute();
}

import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../services.js';
import { isUniqueViolation } from '../../storage/types.js';
import type { Member, MemberWithPerson } from './members.js';
import { deleteMember, findMember, insertMember, listMembers, replaceMemberRoles } from './members.repository.js';
import { findPersonById, findPersonByUsername } from './people.repository.js';
import type { Person } from './people.js';
import { isEveryoneRole, type Role } from './roles.js';
import { listRoles } from './roles.repository.js';
import { findServer } from './servers.repository.js';

const alreadyMember = () => invalidField(['username'], 'ALREADY_MEMBER', 'That person is already a member of this server.');
const ownerCannotLeave = () => new ApiError(403, 50013, "The server's owner cannot be removed.");

/**
 * The roles `roleIds` name, checked: each must be a role of this server other than @everyone
 * (which every member holds implicitly) and not managed by an app (installs assign those).
 * Throws 50035 at `roles`.
 */
async function assignableRoles(deps: Deps, serverId: string, roleIds: readonly string[]): Promise<Role[]> {
  const unique = [...new Set(roleIds)];
  if (unique.length === 0) return [];
  const roles = await listRoles(deps.db, serverId);
  const picked: Role[] = [];
  for (const id of unique) {
    const role = roles.find((r) => r.id === id);
    if (!role || isEveryoneRole(role)) throw invalidField(['roles'], 'UNKNOWN_ROLE', 'One of the chosen roles does not exist in this server.');
    if (role.managedApplicationId !== null) throw invalidField(['roles'], 'ROLE_MANAGED', `The role "${role.name}" is managed by an app and cannot be given by hand.`);
    picked.push(role);
  }
  return picked;
}

/** A person by username for "add member" forms; throws 50035 at `username` when nobody has it. */
export async function findPersonToAdd(deps: Deps, username: string): Promise<Person> {
  const person = await findPersonByUsername(deps.db, username.trim().replace(/^@/, ''));
  if (!person) throw invalidField(['username'], 'UNKNOWN_USER', 'Nobody has that username.');
  if (person.bot) throw invalidField(['username'], 'BOT_USER', 'Bots join a server when someone adds their app to it.');
  return person;
}

/**
 * Makes a person a member with the given roles, all or nothing. The caller checks Manage server
 * (and Manage roles, reach for each role when roles are given). Throws 10004, 10013 or 50035.
 */
export async function addMember(deps: Deps, serverId: string, userId: string, roleIds: readonly string[] = []): Promise<Member> {
  if (!isSnowflake(serverId) || !(await findServer(deps.db, serverId))) throw ApiErrors.unknownServer();
  if (!isSnowflake(userId) || !(await findPersonById(deps.db, userId))) throw ApiErrors.unknownUser();
  const roles = await assignableRoles(deps, serverId, roleIds);
  if (await findMember(deps.db, serverId, userId)) throw alreadyMember();
  const joinedAt = deps.clock.now();
  try {
    await deps.db.transaction().execute(async (trx) => {
      await insertMember(trx, { serverId, userId, joinedAt });
      await replaceMemberRoles(
        trx,
        serverId,
        userId,
        roles.map((r) => r.id),
      );
    });
  } catch (error) {
    // Two adds at once: the primary key lets exactly one through.
    if (isUniqueViolation(error)) throw alreadyMember();
    throw error;
  }
  return { serverId, userId, nickname: null, joinedAt, roleIds: roles.map((r) => r.id) };
}

/** Removes a member (never the owner). The caller checks permissions and reach. Throws 10013 when not a member. */
export async function removeMember(deps: Deps, serverId: string, userId: string): Promise<void> {
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) throw ApiErrors.unknownServer();
  if (server.ownerId === userId) throw ownerCannotLeave();
  if (!isSnowflake(userId) || !(await deleteMember(deps.db, serverId, userId))) throw ApiErrors.unknownUser();
}

/**
 * Sets a member's roles to exactly `roleIds`, keeping any app-managed roles they hold (those come
 * and go with installs). The caller checks Manage roles and reach for every role added or removed.
 */
export async function setMemberRoles(deps: Deps, serverId: string, userId: string, roleIds: readonly string[]): Promise<Member> {
  const member = isSnowflake(serverId) && isSnowflake(userId) ? await findMember(deps.db, serverId, userId) : undefined;
  if (!member) throw ApiErrors.unknownUser();
  const roles = await assignableRoles(deps, serverId, roleIds);
  const all = await listRoles(deps.db, serverId);
  const managedKept = member.roleIds.filter((id) => all.find((r) => r.id === id)?.managedApplicationId != null);
  const next = [...new Set([...roles.map((r) => r.id), ...managedKept])].sort();
  await deps.db.transaction().execute(async (trx) => replaceMemberRoles(trx, serverId, userId, next));
  return { ...member, roleIds: next };
}

export async function getMember(deps: Deps, serverId: string, userId: string): Promise<Member | undefined> {
  if (!isSnowflake(serverId) || !isSnowflake(userId)) return undefined;
  return findMember(deps.db, serverId, userId);
}

export async function getMembers(deps: Deps, serverId: string): Promise<MemberWithPerson[]> {
  if (!isSnowflake(serverId)) return [];
  return listMembers(deps.db, serverId);
}

import type { Transaction } from 'kysely';
import { AccessError, ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { Actor, PersonActor } from '../../core/actor.js';
import type { Acting } from '../../core/acting.js';
import { changing } from '../../events/event-bus.js';
import { Permission } from '../../core/permissions.js';
import { authorize, memberPermissions } from './access.service.js';
import { ServerAction, requireMemberInReach, requireRoleChangesInReach } from './policy.js';
import type { Database } from '../../storage/database.js';
import { isUniqueViolation } from '../../storage/types.js';
import type { Member, MemberInvitation } from './members.js';
import { throttleCreation } from './creation-throttle.js';
import { INVITATION_LIFETIME_MS, invitationGrant } from './invitations.js';
import {
  deleteMember,
  findInvitation,
  findMember,
  insertInvitation,
  insertMember,
  listInvitationsForUser,
  replaceMemberRoles,
  takeInvitation,
} from './members.repository.js';
import { findPersonById, findPersonByUsername } from './people.repository.js';
import type { Person } from './people.js';
import { isEveryoneRole, type Role } from './roles.js';
import { listRoles } from './roles.repository.js';
import { findServer } from './servers.repository.js';

/** Discord's Unknown Member: the person acted on is not a member (an error page, not a form message). */
const unknownMember = () => new AccessError(404, 10007, 'Unknown Member');
const alreadyMember = () => invalidField(['username'], 'ALREADY_MEMBER', 'That person is already a member of this server.');
const ownerCannotLeave = () => new ApiError(403, 50013, "The server's owner cannot be removed.");
const ownerCannotDepart = () => new ApiError(403, 50013, "The server's owner cannot leave it: delete the server instead.");
const unknownInvitation = () => new ApiError(404, 10013, 'This invitation does not exist, or was already answered.');
const expiredInvitation = () => new ApiError(410, 10013, 'This invitation has expired. Ask for a new one.');
// Issue #36 §3: the sender was removed, or lost Manage server, after sending it.
const revokedInvitation = (serverName: string) =>
  new ApiError(410, 10013, `This invitation no longer works: the person who sent it can no longer invite people to ${serverName}. Ask someone there for a new invitation or an invite link.`);

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
  // Issue #39: the operator's own forms say why, unlike a member's invite form.
  if (person.disabledAt !== null) throw invalidField(['username'], 'DISABLED_USER', 'That account is disabled: enable it first (gatehouse people enable).');
  return person;
}

/**
 * Makes a person a member with the given roles, all or nothing: the operator's action
 * (`gatehouse members add`, seed-demo), trusted, so it needs no acceptance; such a membership is
 * not the person's own act and never counts as consent to bot DMs (members.ts JOINED_BY_OWN_ACT).
 * People add others only by invitation (inviteMember), so any other actor gets 50013. Throws
 * 10004, 10013 or 50035.
 */
export async function addMember(deps: Deps, acting: Acting<Actor>, serverId: string, userId: string, roleIds: readonly string[] = []): Promise<Member> {
  if (acting.actor.kind !== 'operator') throw ApiErrors.missingPermissions();
  if (!isSnowflake(serverId) || !(await findServer(deps.db, serverId))) throw ApiErrors.unknownServer();
  if (!isSnowflake(userId) || !(await findPersonById(deps.db, userId))) throw ApiErrors.unknownUser();
  const roles = await assignableRoles(deps, serverId, roleIds);
  if (await findMember(deps.db, serverId, userId)) throw alreadyMember();
  const joinedAt = deps.clock.now();
  try {
    await changing(deps, acting, async (trx, emit) => {
      await insertMember(trx, { serverId, userId, joinedAt, joinedVia: 'operator' });
      await replaceMemberRoles(
        trx,
        serverId,
        userId,
        roles.map((r) => r.id),
      );
      emit({ type: 'member.joined', serverId, userId });
      if (roles.length > 0) emit({ type: 'member.roles_updated', serverId, userId, added: roles.map((r) => r.id), removed: [] });
    });
  } catch (error) {
    // Two adds at once: the primary key lets exactly one through.
    if (isUniqueViolation(error)) throw alreadyMember();
    throw error;
  }
  return { serverId, userId, nickname: null, joinedAt, joinedVia: 'operator', roleIds: roles.map((r) => r.id) };
}

/**
 * Removes a member (never the owner). The actor needs Kick members or Manage server, and the
 * member must hold nothing the actor lacks (policy.ts). Throws 10004, 50013, or 10013 when not a
 * member.
 */
export async function removeMember(deps: Deps, acting: Acting<Actor>, serverId: string, userId: string): Promise<void> {
  const held = await authorize(deps, acting.actor, serverId, ServerAction.removeMember);
  const target = await memberPermissions(deps, serverId, userId);
  if (target === undefined) throw unknownMember();
  requireMemberInReach(held, target);
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) throw ApiErrors.unknownServer();
  if (server.ownerId === userId) throw ownerCannotLeave();
  if (!isSnowflake(userId)) throw ApiErrors.unknownUser();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteMember(trx, serverId, userId))) throw ApiErrors.unknownUser();
    emit({ type: 'member.removed', serverId, userId, why: 'kicked' });
    // Issue #21 §5: their open live views of the server's channels end at once.
    emit({ type: 'access.changed', topicId: userId });
  });
}

/**
 * Who removing a member would remove, for its confirmation page: the same checks as removeMember
 * (so the page shows only when the button would work). Throws as removeMember does.
 */
export async function memberRemovalPreview(deps: Deps, serverId: string, userId: string, actor: Actor): Promise<{ person: Person; serverName: string }> {
  const held = await authorize(deps, actor, serverId, ServerAction.removeMember);
  const target = await memberPermissions(deps, serverId, userId);
  if (target === undefined) throw unknownMember();
  requireMemberInReach(held, target);
  const [server, person] = await Promise.all([findServer(deps.db, serverId), isSnowflake(userId) ? findPersonById(deps.db, userId) : undefined]);
  if (!server) throw ApiErrors.unknownServer();
  if (server.ownerId === userId) throw ownerCannotLeave();
  if (!person) throw ApiErrors.unknownUser();
  return { person, serverName: server.name };
}

/**
 * A member leaves a server by their own act (issue #21 §3). The owner cannot: they delete the
 * server (servers.service deleteServer), since a server without an owner could be managed by
 * nobody. Throws 10004 for an unknown server or a non-member (so membership does not leak), 50013
 * for the owner.
 */
export async function leaveServer(deps: Deps, acting: Acting<PersonActor>, serverId: string): Promise<void> {
  const userId = acting.actor.id;
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) throw ApiErrors.unknownServer();
  if (server.ownerId === userId) throw ownerCannotDepart();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteMember(trx, serverId, userId))) throw ApiErrors.unknownServer();
    emit({ type: 'member.removed', serverId, userId, why: 'left' });
    // Issue #21 §5: their open live views of the server's channels end at once.
    emit({ type: 'access.changed', topicId: userId });
  });
}

/** A username typed into the invite form, without the optional leading @. */
function typedUsername(raw: string): string {
  return raw.trim().replace(/^@/, '');
}

/**
 * Invites a person by username to join a server, with roles to receive on acceptance (issue #21
 * §3: adding is an invitation, never a membership without the person's act). The inviter needs
 * Manage server, and to offer roles Manage roles and each role within reach (docs/permissions.md:
 * inviting by username is ours, Discord has no such action). The answer is the same whether the
 * username exists, names a bot or a disabled person, or already has an invitation pending, so the form is no oracle
 * for usernames; only an empty name, bad roles, or an existing member (whom the inviter can see in
 * the member list anyway) are refused. It expires after 7 days (issue #36 §3). From the web
 * (`acting.address` known) it counts against the invitation limits whoever it names, so the limit
 * is no oracle either (creation-throttle.ts). Throws 10004, 50035 or RateLimitedError.
 */
export async function inviteMember(deps: Deps, acting: Acting<PersonActor>, serverId: string, rawUsername: string, roleIds: readonly string[] = []): Promise<void> {
  const inviterId = acting.actor.id;
  const held = await authorize(deps, acting.actor, serverId, ServerAction.manageServer);
  if (roleIds.length > 0) {
    if ((held & Permission.MANAGE_ROLES) === 0n) throw new ApiError(403, 50013, 'Giving roles needs the Manage roles permission.');
    requireRoleChangesInReach(held, await listRoles(deps.db, serverId), [], roleIds);
  }
  if (!isSnowflake(serverId) || !(await findServer(deps.db, serverId))) throw ApiErrors.unknownServer();
  const username = typedUsername(rawUsername);
  if (username === '') throw invalidField(['username'], 'BASE_TYPE_REQUIRED', 'Enter the username of the person to invite.');
  const roles = await assignableRoles(deps, serverId, roleIds);
  if (acting.address !== null) await throttleCreation(deps.buckets, deps.clock.now(), 'invitations', inviterId, acting.address);
  const person = await findPersonByUsername(deps.db, username);
  // Issue #39: a disabled person is nobody to invite, with the same answer as for an unknown name.
  if (!person || person.bot || person.disabledAt !== null) return;
  if (await findMember(deps.db, serverId, person.id)) throw alreadyMember();
  const now = deps.clock.now();
  const invitationId = deps.ids.next();
  await changing(deps, acting, async (trx, emit) => {
    await insertInvitation(trx, {
      id: invitationId,
      serverId,
      userId: person.id,
      inviterId,
      roleIds: roles.map((r) => r.id),
      createdAt: now,
      expiresAt: now + INVITATION_LIFETIME_MS,
    });
    emit({ type: 'invitation.created', serverId, invitationId, inviteeId: person.id });
  });
}

/** The person's pending, unexpired invitations (their home page lists them with Accept and Decline). */
export async function pendingInvitations(deps: Deps, userId: string): Promise<MemberInvitation[]> {
  return listInvitationsForUser(deps.db, userId, deps.clock.now());
}

/**
 * Accepts one of the person's invitations: they become a member by their own act ('invitation').
 * Issue #36 §3: an expired invitation fails (410), and so does one whose sender may no longer
 * invite (removed, or without Manage server: 410, the invitation is gone); of the offered roles
 * they get those that still exist and that the sender may still give (invitations.ts
 * invitationGrant). Taking the invitation and joining are one transaction, so it is used once.
 * Already a member (joined by a link meanwhile): the invitation is simply used up. Throws 10013
 * (404) for an unknown or answered invitation, (410) as above.
 */
export async function acceptInvitation(deps: Deps, acting: Acting<PersonActor>, invitationId: string): Promise<{ serverId: string }> {
  const userId = acting.actor.id;
  if (!isSnowflake(invitationId)) throw unknownInvitation();
  const now = deps.clock.now();
  const pending = await findInvitation(deps.db, invitationId, userId);
  if (!pending) throw unknownInvitation();
  if (pending.expiresAt <= now) throw expiredInvitation();
  // Read before the transaction (one SQLite connection): a change of the sender's roles between
  // this read and the take below is as if it came just after the acceptance.
  const server = await findServer(deps.db, pending.serverId);
  if (!server) throw unknownInvitation();
  const grant = invitationGrant(await memberPermissions(deps, pending.serverId, pending.inviterId), pending.roleIds, await listRoles(deps.db, pending.serverId));
  if (!grant.ok) {
    await takeInvitation(deps.db, invitationId, userId);
    throw revokedInvitation(server.name);
  }
  try {
    return await changing(deps, acting, async (trx, emit) => {
      const taken = await takeInvitation(trx, invitationId, userId);
      if (!taken) throw unknownInvitation();
      if (await findMember(trx, taken.serverId, userId)) return { serverId: taken.serverId };
      const roleIds = grant.roleIds;
      await insertMember(trx, { serverId: taken.serverId, userId, joinedAt: now, joinedVia: 'invitation' });
      await replaceMemberRoles(trx, taken.serverId, userId, roleIds);
      emit({ type: 'member.joined', serverId: taken.serverId, userId });
      if (roleIds.length > 0) emit({ type: 'member.roles_updated', serverId: taken.serverId, userId, added: [...roleIds], removed: [] });
      return { serverId: taken.serverId };
    });
  } catch (error) {
    // Accepted in two tabs at once: one transaction wins, the other finds nothing to take.
    if (isUniqueViolation(error)) throw unknownInvitation();
    throw error;
  }
}

/** Declines one of the person's invitations: it is gone, nothing else changes. Throws 10013 (404). */
export async function declineInvitation(deps: Deps, acting: Acting<PersonActor>, invitationId: string): Promise<void> {
  const userId = acting.actor.id;
  if (!isSnowflake(invitationId)) throw unknownInvitation();
  await changing(deps, acting, async (trx, emit) => {
    const taken = await takeInvitation(trx, invitationId, userId);
    if (!taken) throw unknownInvitation();
    emit({ type: 'invitation.deleted', serverId: taken.serverId, invitationId, inviteeId: userId });
  });
}

/**
 * Sets a member's roles to exactly `roleIds`, keeping any app-managed roles they hold (those come
 * and go with installs). The actor needs Manage roles, and every role added or removed (and every
 * app-managed role the member holds) within reach (policy.ts). Throws 10004, 10013, 50013, 50035.
 */
export async function setMemberRoles(deps: Deps, acting: Acting<Actor>, serverId: string, userId: string, roleIds: readonly string[]): Promise<Member> {
  const held = await authorize(deps, acting.actor, serverId, ServerAction.manageRoles);
  const member = isSnowflake(serverId) && isSnowflake(userId) ? await findMember(deps.db, serverId, userId) : undefined;
  if (!member) throw unknownMember();
  const all = await listRoles(deps.db, serverId);
  requireRoleChangesInReach(held, all, member.roleIds, roleIds);
  const roles = await assignableRoles(deps, serverId, roleIds);
  const managedKept = member.roleIds.filter((id) => all.find((r) => r.id === id)?.managedApplicationId != null);
  const next = [...new Set([...roles.map((r) => r.id), ...managedKept])].sort();
  const added = next.filter((id) => !member.roleIds.includes(id));
  const removed = member.roleIds.filter((id) => !next.includes(id));
  await changing(deps, acting, async (trx, emit) => {
    await replaceMemberRoles(trx, serverId, userId, next);
    // Issue #37 §2: the same roles saved again change nothing worth a row in the audit log.
    if (added.length > 0 || removed.length > 0) emit({ type: 'member.roles_updated', serverId, userId, added, removed });
    // A role taken away may have been what let them read a channel they are following live.
    emit({ type: 'access.changed', topicId: userId });
  });
  return { ...member, roleIds: next };
}

export async function getMember(deps: Deps, serverId: string, userId: string): Promise<Member | undefined> {
  if (!isSnowflake(serverId) || !isSnowflake(userId)) return undefined;
  return findMember(deps.db, serverId, userId);
}


// Bot installs (applications/installs.service.ts) add and remove the bot's membership in the
// transaction that also writes its managed role and install row (all or nothing, issue #4):
// these two take that transaction.

/** The bot joins the server unless it is a member already. */
export async function joinServerAsBot(trx: Transaction<Database>, serverId: string, botUserId: string, joinedAt: number): Promise<void> {
  if (!(await findMember(trx, serverId, botUserId))) await insertMember(trx, { serverId, userId: botUserId, joinedAt, joinedVia: 'bot_install' });
}

export function removeMemberInTransaction(trx: Transaction<Database>, serverId: string, userId: string): Promise<boolean> {
  return deleteMember(trx, serverId, userId);
}

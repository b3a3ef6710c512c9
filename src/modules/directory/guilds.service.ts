import { ApiErrors } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import {
  presentGuildChannel,
  presentGuildDetail,
  presentMember,
  presentRole,
  presentUser,
  type GuildChannelResource,
  type GuildDetailResource,
  type MemberResource,
  type RoleResource,
  type UserResource,
} from '../resources/resources.js';
import { memberPermissions, memberStanding } from './access.service.js';
import { listChannels } from './channels.repository.js';
import { findMember } from './members.repository.js';
import { findPersonById } from './people.repository.js';
import { listRoles } from './roles.repository.js';
import type { Server } from './servers.js';

/**
 * What bots read of the servers they are in (issue #40 §4), at Discord's guild routes with
 * Discord's objects. Every read needs membership: a server the reader is not in, or none, is
 * 404 10004, so other servers do not leak. Reads change nothing, so they take no Acting.
 */

/** The server and the reader's permissions there, or 10004. */
async function standingOf(deps: Deps, readerId: string, serverId: string): Promise<{ server: Server; permissions: bigint }> {
  const standing = await memberStanding(deps, serverId, readerId);
  if (!standing) throw ApiErrors.unknownServer();
  return standing;
}

/** GET /guilds/{id}: Discord's guild object with its roles. */
export async function readGuild(deps: Deps, readerId: string, serverId: string): Promise<GuildDetailResource> {
  const { server } = await standingOf(deps, readerId, serverId);
  return presentGuildDetail(server, await listRoles(deps.db, server.id));
}

/**
 * GET /guilds/{id}/channels: the channels the reader can view, as Discord. Permissions are
 * server-wide here (no channel overwrites), so that is every text channel with View channel, and
 * none without it.
 */
export async function readGuildChannels(deps: Deps, readerId: string, serverId: string): Promise<GuildChannelResource[]> {
  const { server, permissions } = await standingOf(deps, readerId, serverId);
  if ((permissions & Permission.VIEW_CHANNEL) === 0n) return [];
  const channels = await listChannels(deps.db, server.id);
  return channels.map((c) => presentGuildChannel({ ...c, serverId: server.id }));
}

/** GET /guilds/{id}/roles: every role, @everyone (the server's id) included. */
export async function readGuildRoles(deps: Deps, readerId: string, serverId: string): Promise<RoleResource[]> {
  const { server } = await standingOf(deps, readerId, serverId);
  return (await listRoles(deps.db, server.id)).map(presentRole);
}

/** GET /guilds/{id}/members/{user_id}: 10007 for someone who is not a member (or no one). */
export async function readGuildMember(deps: Deps, readerId: string, serverId: string, userId: string): Promise<MemberResource> {
  const { server } = await standingOf(deps, readerId, serverId);
  const member = isSnowflake(userId) ? await findMember(deps.db, server.id, userId) : undefined;
  const person = member ? await findPersonById(deps.db, userId) : undefined;
  if (!member || !person) throw ApiErrors.unknownMember();
  return presentMember(member, person);
}

/**
 * A member's own member object in a server, for a caller that has just established their
 * membership (an interaction's `member`, issue #40 §2: the invoker's permissions were read and
 * checked); readGuildMember's check of the reader would read the same permission rows again.
 * 10007 when they are not a member (any more).
 */
export async function readOwnMember(deps: Deps, serverId: string, userId: string): Promise<MemberResource> {
  const member = isSnowflake(serverId) && isSnowflake(userId) ? await findMember(deps.db, serverId, userId) : undefined;
  const person = member ? await findPersonById(deps.db, userId) : undefined;
  if (!member || !person) throw ApiErrors.unknownMember();
  return presentMember(member, person);
}

/**
 * GET /users/{id}: anyone's public user object, as Discord answers bots (username, display name,
 * avatar, bot; never the e-mail address); 10013 for no such user.
 */
export async function readUser(deps: Deps, userId: string): Promise<UserResource> {
  const person = isSnowflake(userId) ? await findPersonById(deps.db, userId) : undefined;
  if (!person) throw ApiErrors.unknownUser();
  return presentUser(person);
}

/** Who and what an interaction's user, channel, role and mentionable options name (issue #40 §2). */
export interface OptionTargets {
  users: readonly string[];
  channels: readonly string[];
  roles: readonly string[];
  /** A user or a role, whichever the id is. */
  mentionables: readonly string[];
}

/**
 * Discord's `data.resolved` of an interaction, for the ids its options name: `users`, in a server
 * each user's member object without `user` but with their `permissions` there (when they are a
 * member), `roles` of the server and `channels` of the server with the invoker's permissions
 * there (`invokerPermissions`; server-wide, as Gatehouse has no overwrites). `missing`: ids that
 * name nothing of the kind here (a role or channel of another server, a user that does not
 * exist), which the composer refuses.
 */
export async function resolveOptionTargets(deps: Deps, serverId: string | null, targets: OptionTargets, invokerPermissions: bigint): Promise<{ resolved: ResolvedTargets; missing: Array<{ kind: keyof OptionTargets; id: string }> }> {
  const resolved: ResolvedTargets = {};
  const missing: Array<{ kind: keyof OptionTargets; id: string }> = [];
  const [roles, channels] = serverId === null ? [[], []] : await Promise.all([targets.roles.length + targets.mentionables.length > 0 ? listRoles(deps.db, serverId) : [], targets.channels.length > 0 ? listChannels(deps.db, serverId) : []]);
  const addUser = async (id: string): Promise<boolean> => {
    const person = isSnowflake(id) ? await findPersonById(deps.db, id) : undefined;
    if (!person) return false;
    (resolved.users ??= {})[id] = presentUser(person);
    const member = serverId === null ? undefined : await findMember(deps.db, serverId, id);
    if (serverId !== null && member) {
      const { user: _user, ...withoutUser } = presentMember(member, person);
      (resolved.members ??= {})[id] = { ...withoutUser, permissions: ((await memberPermissions(deps, serverId, id)) ?? 0n).toString() };
    }
    return true;
  };
  const addRole = (id: string): boolean => {
    const role = roles.find((r) => r.id === id);
    if (role) (resolved.roles ??= {})[id] = presentRole(role);
    return role !== undefined;
  };
  for (const id of targets.users) if (!(await addUser(id))) missing.push({ kind: 'users', id });
  for (const id of targets.roles) if (!addRole(id)) missing.push({ kind: 'roles', id });
  for (const id of targets.mentionables) if (!addRole(id) && !(await addUser(id))) missing.push({ kind: 'mentionables', id });
  for (const id of targets.channels) {
    const channel = channels.find((c) => c.id === id);
    if (!channel || serverId === null) missing.push({ kind: 'channels', id });
    else (resolved.channels ??= {})[id] = { id, name: channel.name, type: presentGuildChannel({ ...channel, serverId }).type, permissions: invokerPermissions.toString() };
  }
  return { resolved, missing };
}

/** Discord's `data.resolved`: only the kinds an interaction's options name are present. */
export interface ResolvedTargets {
  users?: Record<string, UserResource>;
  members?: Record<string, Omit<MemberResource, 'user'> & { permissions: string }>;
  roles?: Record<string, RoleResource>;
  channels?: Record<string, { id: string; name: string; type: number; permissions: string }>;
}

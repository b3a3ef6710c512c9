import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { authorize } from './access.service.js';
import { listMembers, findMember } from './members.repository.js';
import type { Person } from './people.js';
import { getPersonById, getPersonByUsername } from './people.service.js';
import { ServerAction } from './policy.js';
import type { Server } from './servers.js';
import { findServer, saveOwner } from './servers.repository.js';
import { isOperator } from './operators.service.js';

/**
 * Transferring a server's ownership (issue #39): its owner does it from Server settings → Danger
 * zone, the operator with `gatehouse servers transfer`. As on Discord, the new owner must be a
 * member, and a person: a bot account cannot sign in to look after a server, and a disabled or
 * deleted account cannot either. The previous owner stays a member, with their roles.
 */

/** The field every refusal of the new owner is reported at: Discord's `owner_id` (PATCH /guilds/{id}). */
const TO = ['owner_id'];

const onlyOwnerTransfers = () => new ApiError(403, 50013, "Only the server's owner can transfer it.");

/**
 * The server the actor may transfer: its owner's, or any for the operator (the CLI, an instance
 * administrator). Anyone else who is not a member gets 10004, as for a server that does not exist;
 * a member who is not the owner, 50013.
 */
async function transferableServer(deps: Deps, actor: Actor, serverId: string): Promise<Server> {
  const asOperator = await isOperator(deps, actor);
  if (!asOperator) await authorize(deps, actor, serverId, ServerAction.view);
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) throw ApiErrors.unknownServer();
  if (!asOperator && (actor.kind !== 'person' || server.ownerId !== actor.id)) throw onlyOwnerTransfers();
  return server;
}

/** The members who could become the owner: people (not bots), not the owner, not disabled, by name. */
export async function transferCandidates(deps: Deps, actor: Actor, serverId: string): Promise<{ server: Server; candidates: Array<Pick<Person, 'id' | 'username' | 'name'>> }> {
  const server = await transferableServer(deps, actor, serverId);
  const members = await listMembers(deps.db, serverId);
  const people = await Promise.all(members.filter((m) => !m.person.bot && m.userId !== server.ownerId).map((m) => getPersonById(deps, m.userId)));
  const candidates = people
    .filter((p): p is Person => p !== undefined && p.disabledAt === null)
    .map((p) => ({ id: p.id, username: p.username, name: p.name }))
    .sort((a, b) => a.name.localeCompare(b.name, 'en') || a.username.localeCompare(b.username, 'en'));
  return { server, candidates };
}

/** The person `to` names: a user id (the page's picker, the API's owner_id) or a username (the CLI). */
async function newOwnerNamed(deps: Deps, to: { id: string } | { username: string }): Promise<Person | undefined> {
  if ('id' in to) return isSnowflake(to.id) ? getPersonById(deps, to.id) : undefined;
  return getPersonByUsername(deps, to.username.trim().replace(/^@/, ''));
}

/**
 * Makes another member the server's owner. The actor is the owner (a person) or the operator.
 * Refusals (nothing changes): 10004 unknown server or not a member; 50013 a member who is not the
 * owner; 50035 at `owner_id` for nobody by that name, a bot, a disabled account, someone who is
 * not a member, or the current owner. Emits server.transferred and access.changed (open views
 * re-check: the previous owner keeps only what their roles give).
 */
export async function transferServer(deps: Deps, acting: Acting<Actor>, serverId: string, to: { id: string } | { username: string }): Promise<{ server: Server; from: string; to: Person }> {
  const server = await transferableServer(deps, acting.actor, serverId);
  const person = await newOwnerNamed(deps, to);
  if (!person) throw invalidField(TO, 'USER_UNKNOWN', 'username' in to ? 'Nobody has that username.' : 'Choose a member of this server.');
  if (person.bot) throw invalidField(TO, 'OWNER_BOT', 'A bot cannot own a server: choose a person.');
  if (person.id === server.ownerId) throw invalidField(TO, 'OWNER_UNCHANGED', `@${person.username} already owns this server.`);
  if (person.disabledAt !== null) throw invalidField(TO, 'OWNER_DISABLED', `@${person.username}'s account is disabled.`);
  if (!(await findMember(deps.db, server.id, person.id))) throw invalidField(TO, 'OWNER_NOT_MEMBER', `@${person.username} is not a member of this server; the new owner must be one.`);
  await changing(deps, acting, async (trx, emit) => {
    // Guarded by the owner read above: a transfer that raced another changes nothing.
    if (!(await saveOwner(trx, server.id, server.ownerId, person.id))) throw ApiErrors.unknownServer();
    emit({ type: 'server.transferred', serverId: server.id, fromUserId: server.ownerId, toUserId: person.id });
    emit({ type: 'access.changed', topicId: server.id });
  });
  return { server: { ...server, ownerId: person.id }, from: server.ownerId, to: person };
}

import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { hasPrefix, hashSecret, issueSecret } from '../../core/secrets.js';
import { open, seal, sealingKey } from '../../core/sealed.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { Actor, PersonActor } from '../../core/actor.js';
import type { Acting } from '../../core/acting.js';
import { changing } from '../../events/event-bus.js';
import { authorize, memberPermissions } from './access.service.js';
import { throttleCreation } from './creation-throttle.js';
import { ServerAction } from './policy.js';
import { isUniqueViolation } from '../../storage/types.js';
import { canCreateInvites, INVITE_CODE_BYTES, INVITE_MAX_USES_LIMIT, inviteProblem, type Invite, type ListedInvite } from './invites.js';
import { consumeInviteUse, deleteInvite as deleteInviteRow, findInviteByCodeHash, insertInvite, listInvites } from './invites.repository.js';
import { deleteInvitationsFor, findMember, insertMember } from './members.repository.js';
import type { Server } from './servers.js';
import { findServer } from './servers.repository.js';

/** Discord's code for an unknown invite; we also use it, with a clearer message, for expired and used-up ones. */
const UNKNOWN_INVITE = 10006;
const unknownInvite = () => new ApiError(404, UNKNOWN_INVITE, 'This invite link is not valid. Ask for a new one.');
const expiredInvite = () => new ApiError(410, UNKNOWN_INVITE, 'This invite link has expired. Ask for a new one.');
const usedUpInvite = () => new ApiError(410, UNKNOWN_INVITE, 'This invite link has been used as many times as allowed. Ask for a new one.');
const creatorCannotInvite = () => new ApiError(410, UNKNOWN_INVITE, 'This invite link no longer works: the person who created it can no longer invite people to this server. Ask for a new one.');

export interface CreatedInvite {
  invite: Invite;
  code: string;
}

/**
 * Invite codes at rest (issue #24: "every active link listed with its code so it can be copied
 * again or revoked", as Discord lists them). Found by SHA-256 hash as every secret (DESIGN §3);
 * besides, sealed with AES-256-GCM under a key derived from the server secret, bound to the
 * invite's id, so a copy of the database alone shows no working link. Opening tries every
 * configured secret, so a rotation keeps the list; a code sealed under a secret since removed
 * shows as not available, like one created before codes were kept.
 */
const INVITE_CODE_PURPOSE = 'invite-code';

function sealCode(deps: Pick<Deps, 'secrets' | 'random'>, inviteId: string, code: string): string {
  return seal(sealingKey(deps.secrets[0], INVITE_CODE_PURPOSE), deps.random.bytes(12), code, inviteId);
}

function openCode(deps: Pick<Deps, 'secrets'>, inviteId: string, sealed: string | null): string | null {
  if (sealed === null) return null;
  for (const secret of deps.secrets) {
    const code = open(sealingKey(secret, INVITE_CODE_PURPOSE), sealed, inviteId);
    if (code !== undefined) return code;
  }
  return null;
}

/** Whether each of these people may still create invite links in the server (issue #36 §3). */
async function creatorsWhoCanInvite(deps: Deps, serverId: string, creatorIds: readonly string[]): Promise<Set<string>> {
  const unique = [...new Set(creatorIds)];
  const held = await Promise.all(unique.map((id) => memberPermissions(deps, serverId, id)));
  return new Set(unique.filter((_, i) => canCreateInvites(held[i])));
}

/** The server's invites, newest first, with their codes where they can be shown (the caller has checked Manage server). */
export async function listServerInvites(deps: Deps, serverId: string): Promise<ListedInvite[]> {
  const rows = await listInvites(deps.db, serverId);
  const able = await creatorsWhoCanInvite(
    deps,
    serverId,
    rows.map((r) => r.creatorId),
  );
  return rows.map(({ codeSealed, ...invite }) => ({ ...invite, code: openCode(deps, invite.id, codeSealed), creatorCanInvite: able.has(invite.creatorId) }));
}

/**
 * Creates an invite link; its creator needs Create invite or Manage server. `maxUses` 1–100 or
 * none; `expiresInMs` positive or none (never expires). From the web (`acting.address` known) it
 * counts against the invitation limits (issue #36 §4, creation-throttle.ts). Throws 10004, 50013,
 * 50035 or RateLimitedError.
 */
export async function createInvite(deps: Deps, acting: Acting<PersonActor>, serverId: string, input: { maxUses?: number | null; expiresInMs?: number | null }): Promise<CreatedInvite> {
  const creatorId = acting.actor.id;
  await authorize(deps, acting.actor, serverId, ServerAction.createInvite);
  const maxUses = input.maxUses ?? null;
  if (maxUses !== null && (!Number.isInteger(maxUses) || maxUses < 1 || maxUses > INVITE_MAX_USES_LIMIT)) {
    throw invalidField(['maxUses'], 'NUMBER_TYPE_MAX', `Maximum uses is a whole number from 1 to ${INVITE_MAX_USES_LIMIT}, or no limit.`);
  }
  const expiresInMs = input.expiresInMs ?? null;
  if (expiresInMs !== null && (!Number.isInteger(expiresInMs) || expiresInMs <= 0)) {
    throw invalidField(['expiresIn'], 'NUMBER_TYPE_MIN', 'The lifetime must be positive, or never.');
  }
  if (!isSnowflake(serverId) || !(await findServer(deps.db, serverId))) throw ApiErrors.unknownServer();
  if (acting.address !== null) await throttleCreation(deps.buckets, deps.clock.now(), 'invitations', creatorId, acting.address);
  const now = deps.clock.now();
  const secret = issueSecret(deps.random, 'invite', INVITE_CODE_BYTES);
  const invite: Invite = { id: deps.ids.next(), serverId, creatorId, maxUses, uses: 0, expiresAt: expiresInMs === null ? null : now + expiresInMs, createdAt: now };
  await changing(deps, acting, async (trx, emit) => {
    await insertInvite(trx, invite, secret.hash, sealCode(deps, invite.id, secret.plain));
    // The audit log names the invite by its id, never its code: a code is a working link, and
    // codes at rest are only hashed and sealed (above), so a copy of the database shows none.
    emit({ type: 'invite.created', serverId, code: invite.id, channelId: null, maxUses, expiresAt: invite.expiresAt === null ? null : new Date(invite.expiresAt).toISOString() });
  });
  return { invite, code: secret.plain };
}

/**
 * What an invite leads to, for the "Join <server>" page. Throws 10006 (404 unknown; 410 expired,
 * used up, or its creator may no longer invite: issue #36 §3).
 */
export async function describeInvite(deps: Deps, code: string): Promise<{ invite: Invite; server: Server }> {
  if (!hasPrefix(code, 'invite')) throw unknownInvite();
  const invite = await findInviteByCodeHash(deps.db, hashSecret(code));
  const server = invite ? await findServer(deps.db, invite.serverId) : undefined;
  if (!invite || !server) throw unknownInvite();
  const problem = inviteProblem(invite, deps.clock.now(), canCreateInvites(await memberPermissions(deps, server.id, invite.creatorId)));
  if (problem === 'expired') throw expiredInvite();
  if (problem === 'used-up') throw usedUpInvite();
  if (problem === 'creator-cannot-invite') throw creatorCannotInvite();
  return { invite, server };
}

/**
 * Joins the invite's server. A member already in it joins nothing and uses nothing up. Otherwise
 * one use is counted atomically with the membership (both or neither), so the last use of a
 * one-use link goes to exactly one person. Throws 10006 as describeInvite.
 */
export async function acceptInvite(deps: Deps, acting: Acting<PersonActor>, code: string): Promise<{ server: Server; joined: boolean }> {
  const userId = acting.actor.id;
  const { invite, server } = await describeInvite(deps, code);
  if (await findMember(deps.db, server.id, userId)) return { server, joined: false };
  const now = deps.clock.now();
  try {
    await changing(deps, acting, async (trx, emit) => {
      if (!(await consumeInviteUse(trx, invite.id, now))) {
        throw inviteProblem(invite, now) === 'expired' ? expiredInvite() : usedUpInvite();
      }
      await insertMember(trx, { serverId: server.id, userId, joinedAt: now, joinedVia: 'invite_link' });
      await deleteInvitationsFor(trx, server.id, userId);
      emit({ type: 'member.joined', serverId: server.id, userId });
    });
  } catch (error) {
    // Joined through another tab at the same moment: already a member, which is what they wanted.
    if (isUniqueViolation(error)) return { server, joined: false };
    throw error;
  }
  return { server, joined: true };
}

/** Revokes an invite link; the actor needs Manage server. Throws 10004, 50013 or 10006. */
export async function deleteInvite(deps: Deps, acting: Acting<Actor>, serverId: string, inviteId: string): Promise<void> {
  await authorize(deps, acting.actor, serverId, ServerAction.manageServer);
  const unknownHere = () => new ApiError(404, UNKNOWN_INVITE, 'This invite link does not exist in this server.');
  if (!isSnowflake(serverId) || !isSnowflake(inviteId)) throw unknownHere();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteInviteRow(trx, serverId, inviteId))) throw unknownHere();
    // By its id, as invite.created names it (see createInvite).
    emit({ type: 'invite.deleted', serverId, code: inviteId });
  });
}

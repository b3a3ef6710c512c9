import { ApiError } from '../../core/errors.js';
import type { Actor } from '../../core/actor.js';
import type { Acting } from '../../core/acting.js';
import { changing } from '../../events/event-bus.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { authorize, memberPermissions } from './access.service.js';
import { invitationGrant, type ServerInvitation } from './invitations.js';
import { deleteServerInvitation, findServerInvitation, listInvitationsOfServer } from './members.repository.js';
import { Permission } from '../../core/permissions.js';
import { ServerAction } from './policy.js';

/**
 * A server's pending invitations for its managers (issue #36 §3: "listed with who sent them and
 * can be cancelled by the sender and by anyone with Manage server"). Accepting and declining, the
 * invited person's side, are in members.service.ts.
 */

const unknownInvitation = () => new ApiError(404, 10013, 'This invitation does not exist in this server, or was already answered.');
const notYours = () => new ApiError(403, 50013, 'Only the person who sent an invitation, or someone with the Manage server permission, can cancel it.');

/** The server's unexpired invitations, oldest first, with their senders and whether those may still invite (the caller has checked Manage server). */
export async function listServerInvitations(deps: Deps, serverId: string): Promise<ServerInvitation[]> {
  if (!isSnowflake(serverId)) return [];
  const rows = await listInvitationsOfServer(deps.db, serverId, deps.clock.now());
  const senders = [...new Set(rows.map((r) => r.inviterId))];
  const held = await Promise.all(senders.map((id) => memberPermissions(deps, serverId, id)));
  const able = new Set(senders.filter((_, i) => invitationGrant(held[i], [], []).ok));
  return rows.map((row) => ({ ...row, senderCanInvite: able.has(row.inviterId) }));
}

/**
 * Cancels a pending invitation: its sender may (even one who has since lost Manage server, as
 * long as they are a member), and so may anyone with Manage server, and the operator. Throws 10004
 * for a non-member, 10013 (404) when there is no such invitation, 50013 for anyone else.
 */
export async function cancelInvitation(deps: Deps, acting: Acting<Actor>, serverId: string, invitationId: string): Promise<void> {
  const actor = acting.actor;
  const held = await authorize(deps, actor, serverId, ServerAction.view);
  const invitation = isSnowflake(invitationId) ? await findServerInvitation(deps.db, serverId, invitationId) : undefined;
  if (!invitation) throw unknownInvitation();
  const isSender = actor.kind === 'person' && actor.id === invitation.inviterId;
  if (!isSender && (held & Permission.MANAGE_SERVER) === 0n) throw notYours();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteServerInvitation(trx, serverId, invitationId))) throw unknownInvitation();
    emit({ type: 'invitation.deleted', serverId, invitationId, inviteeId: invitation.userId });
  });
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { actorOf, sendHtml, signedInContext } from '../../http/pages.js';
import type { Services } from '../../deps.js';
import { formErrorMessage } from '../../web/components.js';
import { channelDeletionPreview } from './channels.service.js';
import { confirmChannelDeletePage, confirmMemberRemovePage, transferOwnershipPage } from './danger.page.js';
import { ServerChannelParams, ServerMemberParams, ServerParams, TransferOwnershipBody } from './directory.schemas.js';
import { memberRemovalPreview } from './members.service.js';
import { transferCandidates, transferServer } from './server-transfer.service.js';

/**
 * The GET halves of server settings' destructive forms (issue #24): the settings lists link here,
 * and the page's button POSTs to the same address (server-settings.routes.ts); and the Danger
 * zone's ownership transfer, both halves (issue #39). Registered in the
 * signed-in scope; the preview services check the same permission the action does.
 */
export function registerDangerPages(scope: App, services: Services): void {
  scope.get('/servers/:serverId/channels/:channelId/delete', { schema: { hide: true, params: ServerChannelParams } }, async (request, reply) => {
    const { serverId, channelId } = request.params;
    const preview = await channelDeletionPreview(services, serverId, channelId, actorOf(request));
    return sendHtml(reply, confirmChannelDeletePage(signedInContext(request, services), serverId, preview));
  });

  scope.get('/servers/:serverId/members/:userId/remove', { schema: { hide: true, params: ServerMemberParams } }, async (request, reply) => {
    const { serverId, userId } = request.params;
    const preview = await memberRemovalPreview(services, serverId, userId, actorOf(request));
    return sendHtml(reply, confirmMemberRemovePage(signedInContext(request, services), serverId, preview));
  });

  // Issue #39: Danger zone → Transfer ownership, the owner's (transferCandidates refuses anyone else as transferServer does).
  const transferPage = async (request: FastifyRequest, reply: FastifyReply, serverId: string, problem?: { message: string; chosen: string }, status = 200) => {
    const { server, candidates } = await transferCandidates(services, actorOf(request), serverId);
    return sendHtml(reply, transferOwnershipPage(signedInContext(request, services), server, candidates, problem), status);
  };
  scope.get('/servers/:serverId/transfer', { schema: { hide: true, params: ServerParams } }, async (request, reply) => transferPage(request, reply, request.params.serverId));
  scope.post('/servers/:serverId/transfer', { schema: { hide: true, params: ServerParams, body: TransferOwnershipBody } }, async (request, reply) => {
    const { serverId } = request.params;
    const chosen = request.body.owner_id ?? '';
    if (chosen === '') return transferPage(request, reply, serverId, { message: 'Choose the member who will own the server.', chosen }, 400);
    if (request.body.acknowledge !== 'yes') return transferPage(request, reply, serverId, { message: 'Tick the box to confirm that the server will belong to them.', chosen }, 400);
    try {
      await transferServer(services, personActing(request, services.clock), serverId, { id: chosen });
    } catch (error) {
      // A refused choice (not a member, a bot, disabled…) is shown beside the picker; access refusals are error pages.
      if (error instanceof ApiError && error.code === 50035) return transferPage(request, reply, serverId, { message: formErrorMessage(error), chosen }, 400);
      throw error;
    }
    // The previous owner may no longer see the settings: home says it is done.
    return reply.redirect('/?done=ownership-transferred', 303);
  });
}

import type { App } from '../../http/app-type.js';
import { actorOf, sendHtml, signedInContext } from '../../http/pages.js';
import type { Services } from '../../deps.js';
import { channelDeletionPreview } from './channels.service.js';
import { confirmChannelDeletePage, confirmMemberRemovePage } from './danger.page.js';
import { ServerChannelParams, ServerMemberParams } from './directory.schemas.js';
import { memberRemovalPreview } from './members.service.js';

/**
 * The GET halves of server settings' destructive forms (issue #24): the settings lists link here,
 * and the page's button POSTs to the same address (server-settings.routes.ts). Registered in the
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
}

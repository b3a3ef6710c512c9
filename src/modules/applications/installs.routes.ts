import { Type } from '@sinclair/typebox';
import { Permission } from '../../core/permissions.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';
import { requireViewer } from '../../http/pages.js';
import { requireServerPermission } from '../directory/access.service.js';
import { integrationsPath } from './installs.page.js';
import { removeBot } from './installs.service.js';

const RemoveParams = Type.Object({ serverId: Type.String({ maxLength: 32 }), applicationId: Type.String({ maxLength: 32 }) });

/** Server settings → Integrations, installed apps: removing a bot (pages context: viewer + CSRF). */
export function registerInstallPages(pages: App, services: Services): void {
  pages.post('/servers/:serverId/settings/integrations/apps/:applicationId/remove', { schema: { hide: true, params: RemoveParams } }, async (request, reply) => {
    const viewer = requireViewer(request, reply);
    if (!viewer) return reply;
    const { serverId, applicationId } = request.params;
    // Issue #4: a person with Manage server can remove a bot (404 for non-members, 403 otherwise).
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_SERVER);
    await removeBot(services, serverId, applicationId, permissions);
    return reply.redirect(`${integrationsPath(serverId)}?done=app-removed`, 303);
  });
}

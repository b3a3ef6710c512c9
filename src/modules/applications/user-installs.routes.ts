import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';
import { pageContext, requireViewer, sendHtml } from '../../http/pages.js';
import { installedAppsPage } from './user-installs.page.js';
import { installedApps, removeUserInstall } from './user-installs.service.js';

const InstalledAppsQuery = Type.Object({ removed: Type.Optional(Type.String({ maxLength: 8 })) });
const RemoveParams = Type.Object({ applicationId: Type.String() });
const CsrfOnlyBody = Type.Object({ _csrf: Type.Optional(Type.String()) });

/** Settings → Installed apps, and Remove (pages context: viewer + CSRF). */
export function registerUserInstallPages(pages: App, services: Services): void {
  pages.get('/settings/apps', { schema: { hide: true, querystring: InstalledAppsQuery } }, async (request, reply) => {
    const viewer = requireViewer(request, reply);
    if (!viewer) return reply;
    const apps = await installedApps(services, viewer.id);
    return sendHtml(reply, installedAppsPage({ ctx: { ...pageContext(request, services), viewer }, apps, removed: request.query.removed === '1' }));
  });

  pages.post('/settings/apps/:applicationId/remove', { schema: { hide: true, params: RemoveParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = requireViewer(request, reply);
    if (!viewer) return reply;
    const removed = await removeUserInstall(services, viewer.id, request.params.applicationId);
    // Post/redirect/get; a second submit (nothing left to remove) lands on the plain list.
    return reply.redirect(removed ? '/settings/apps?removed=1' : '/settings/apps', 303);
  });
}

import { Type } from '@sinclair/typebox';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { installedAppsPage } from './user-installs.page.js';
import { confirmUserInstallRemovePage } from './remove-confirm.page.js';
import { PageError } from '../../core/errors.js';
import { installedApps, removeUserInstall } from './user-installs.service.js';

const InstalledAppsQuery = Type.Object({ removed: Type.Optional(Type.String({ maxLength: 8 })) });
const RemoveParams = Type.Object({ applicationId: Type.String() });
const CsrfOnlyBody = Type.Object({ _csrf: Type.Optional(Type.String()) });

/** Settings → Installed apps, and Remove (signed in; CSRF checked by the pages context). */
export function registerUserInstallPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => {
    signedIn.get('/settings/apps', { schema: { hide: true, querystring: InstalledAppsQuery } }, async (request, reply) => {
      const apps = await installedApps(services, request.signedInViewer.id);
      return sendHtml(reply, installedAppsPage({ ctx: signedInContext(request, services), apps, removed: request.query.removed === '1' }));
    });

    signedIn.get('/settings/apps/:applicationId/remove', { schema: { hide: true, params: RemoveParams } }, async (request, reply) => {
      const app = (await installedApps(services, request.signedInViewer.id)).find((a) => a.applicationId === request.params.applicationId);
      if (!app) throw new PageError(404, 'Page not found', 'You have no such app installed.');
      return sendHtml(reply, confirmUserInstallRemovePage(signedInContext(request, services), app));
    });

    signedIn.post('/settings/apps/:applicationId/remove', { schema: { hide: true, params: RemoveParams, body: CsrfOnlyBody } }, async (request, reply) => {
      const removed = await removeUserInstall(services, personActing(request, services.clock), request.params.applicationId);
      // Post/redirect/get; a second submit (nothing left to remove) lands on the plain list.
      return reply.redirect(removed ? '/settings/apps?removed=1' : '/settings/apps', 303);
    });
  });
}

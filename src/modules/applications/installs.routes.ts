import { Type } from '@sinclair/typebox';
import { person } from '../../core/actor.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { signedInPages } from '../../http/pages.js';
import { integrationsPath } from './installs.page.js';
import { removeBot } from './installs.service.js';

const RemoveParams = Type.Object({ serverId: Type.String({ maxLength: 32 }), applicationId: Type.String({ maxLength: 32 }) });

/** Server settings → Integrations, installed apps: removing a bot (signed in; CSRF checked by the pages context). */
export function registerInstallPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => {
    signedIn.post('/servers/:serverId/settings/integrations/apps/:applicationId/remove', { schema: { hide: true, params: RemoveParams } }, async (request, reply) => {
      const { serverId, applicationId } = request.params;
      // Issue #4: a person with Manage server can remove a bot (removeBot decides who may).
      await removeBot(services, person(request.signedInViewer.id), serverId, applicationId);
      return reply.redirect(`${integrationsPath(serverId)}?done=app-removed`, 303);
    });
  });
}

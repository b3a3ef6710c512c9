import { Type } from '@sinclair/typebox';
import { person } from '../../core/actor.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { integrationsPath } from './installs.page.js';
import { botRemovalPreview, removeBot } from './installs.service.js';
import { confirmBotRemovePage } from './remove-confirm.page.js';

const RemoveParams = Type.Object({ serverId: Type.String({ maxLength: 32 }), applicationId: Type.String({ maxLength: 32 }) });

/** Server settings → Integrations, installed apps: removing a bot (signed in; CSRF checked by the pages context). */
export function registerInstallPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => {
    // Issue #24: the list links here; the confirmation's button posts below.
    signedIn.get('/servers/:serverId/settings/integrations/apps/:applicationId/remove', { schema: { hide: true, params: RemoveParams } }, async (request, reply) => {
      const { serverId, applicationId } = request.params;
      const app = await botRemovalPreview(services, person(request.signedInViewer.id), serverId, applicationId);
      return sendHtml(reply, confirmBotRemovePage(signedInContext(request, services), serverId, app));
    });

    signedIn.post('/servers/:serverId/settings/integrations/apps/:applicationId/remove', { schema: { hide: true, params: RemoveParams } }, async (request, reply) => {
      const { serverId, applicationId } = request.params;
      // Issue #4: a person with Manage server can remove a bot (removeBot decides who may).
      await removeBot(services, personActing(request, services.clock), serverId, applicationId);
      return reply.redirect(`${integrationsPath(serverId)}?done=app-removed`, 303);
    });
  });
}

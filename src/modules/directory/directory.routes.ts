import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/app-type.js';
import { personActing } from '../../http/acting.js';
import { actorOf, pageContext, sendHtml, signedInPages } from '../../http/pages.js';
import type { Services } from '../../deps.js';
import { refused, type Refusal } from '../../web/components.js';
import type { Viewer } from '../../web/layout.js';
import { CsrfOnlyBody, DoneQuery, InvitationParams, InviteParams, NameBody, ServerParams } from './directory.schemas.js';
import { emptyServerPage, homePage, landingPage } from './home.page.js';
import { invitePage } from './invite.page.js';
import { acceptInvite, describeInvite } from './invites.service.js';
import { acceptInvitation, declineInvitation, getMember, leaveServer, pendingInvitations } from './members.service.js';
import { deleteServerPage, leaveServerPage } from './server-lifecycle.page.js';
import { settingsAbilities } from './server-settings.js';
import { registerServerSettingsPages } from './server-settings.routes.js';
import { createServer, deleteServer, homeOverview, serverDeletionPreview } from './servers.service.js';
import { memberServer } from './settings.service.js';

/** Page routes are HTML, not API: kept out of the OpenAPI document. */
const hide = { hide: true } as const;

/** Confirmations on the home page after post/redirect/get, by `?done=` key. */
const HOME_NOTICES: Record<string, string> = {
  'invitation-declined': 'Invitation declined.',
  left: 'You left the server.',
  'server-deleted': 'Server deleted.',
  'ownership-transferred': 'Ownership transferred: the server belongs to its new owner now.',
};

/**
 * Home, servers, invitations, leaving and deleting, invite links; the settings pages are in
 * server-settings.routes.ts. Each handler parses, makes one service call (which checks who may)
 * and renders or redirects; a refused form comes back with its message (web/components `refused`).
 */
export function registerDirectoryPages(pages: App, services: Services): void {
  async function renderHome(request: FastifyRequest, reply: FastifyReply, viewer: Viewer, extra: Partial<Refusal> & { notice?: string | undefined } = {}) {
    const [servers, invitations] = await Promise.all([homeOverview(services, viewer.id), pendingInvitations(services, viewer.id)]);
    const { status = 200, ...rest } = extra;
    return sendHtml(reply, homePage({ ctx: pageContext(request, services), servers, invitations, ...rest }), status);
  }

  pages.get('/', { schema: { ...hide, querystring: DoneQuery } }, async (request, reply) => {
    if (!request.viewer) return sendHtml(reply, landingPage(pageContext(request, services)));
    return renderHome(request, reply, request.viewer, { notice: HOME_NOTICES[request.query.done ?? ''] });
  });

  // An unusable invite is a page saying why (10006: 404 unknown, 410 expired or used up).
  pages.get('/invite/:code', { schema: { ...hide, params: InviteParams } }, async (request, reply) => {
    const { code } = request.params;
    const { server } = await describeInvite(services, code);
    const alreadyMember = request.viewer ? (await getMember(services, server.id, request.viewer.id)) !== undefined : false;
    return sendHtml(reply, invitePage({ ctx: pageContext(request, services), code, server, alreadyMember }));
  });

  signedInPages(pages, (scope) => {
    scope.post('/servers', { schema: { ...hide, body: NameBody } }, async (request, reply) => {
      try {
        const server = await createServer(services, personActing(request, services.clock), { name: request.body.name ?? '' });
        return reply.redirect(`/servers/${server.id}`, 303);
      } catch (error) {
        return renderHome(request, reply, request.signedInViewer, refused(error, 'create-server', { name: request.body.name }));
      }
    });

    // Issue #21 §3: membership by consent, and a way out.
    scope.post('/invitations/:invitationId/accept', { schema: { ...hide, params: InvitationParams, body: CsrfOnlyBody } }, async (request, reply) => {
      try {
        const { serverId } = await acceptInvitation(services, personActing(request, services.clock), request.params.invitationId);
        return reply.redirect(`/servers/${serverId}`, 303);
      } catch (error) {
        return renderHome(request, reply, request.signedInViewer, refused(error, 'invitation'));
      }
    });

    scope.post('/invitations/:invitationId/decline', { schema: { ...hide, params: InvitationParams, body: CsrfOnlyBody } }, async (request, reply) => {
      try {
        await declineInvitation(services, personActing(request, services.clock), request.params.invitationId);
        return reply.redirect('/?done=invitation-declined', 303);
      } catch (error) {
        return renderHome(request, reply, request.signedInViewer, refused(error, 'invitation'));
      }
    });

    scope.get('/servers/:serverId/leave', { schema: { ...hide, params: ServerParams } }, async (request, reply) => {
      const { server } = await memberServer(services, actorOf(request), request.params.serverId);
      if (server.ownerId === request.signedInViewer.id) return reply.redirect(`/servers/${server.id}/delete`, 303);
      return sendHtml(reply, leaveServerPage(pageContext(request, services), server));
    });

    scope.post('/servers/:serverId/leave', { schema: { ...hide, params: ServerParams, body: CsrfOnlyBody } }, async (request, reply) => {
      try {
        await leaveServer(services, personActing(request, services.clock), request.params.serverId);
        return reply.redirect('/?done=left', 303);
      } catch (error) {
        const { error: refusal, status } = refused(error, 'leave');
        const { server } = await memberServer(services, actorOf(request), request.params.serverId);
        return sendHtml(reply, leaveServerPage(pageContext(request, services), server, refusal.message), status);
      }
    });

    scope.get('/servers/:serverId/delete', { schema: { ...hide, params: ServerParams } }, async (request, reply) => {
      const { server, contents } = await serverDeletionPreview(services, request.params.serverId, actorOf(request));
      return sendHtml(reply, deleteServerPage(pageContext(request, services), server, contents));
    });

    scope.post('/servers/:serverId/delete', { schema: { ...hide, params: ServerParams, body: CsrfOnlyBody } }, async (request, reply) => {
      await deleteServer(services, personActing(request, services.clock), request.params.serverId);
      return reply.redirect('/?done=server-deleted', 303);
    });

    // A server opens on its first channel; without channels, a page offering to make one.
    scope.get('/servers/:serverId', { schema: { ...hide, params: ServerParams } }, async (request, reply) => {
      const { server, permissions, channels } = await memberServer(services, actorOf(request), request.params.serverId);
      const first = channels[0];
      if (first) return reply.redirect(`/channels/${first.id}`, 303);
      return sendHtml(reply, emptyServerPage(pageContext(request, services), server, settingsAbilities(permissions).manageChannels));
    });

    scope.post('/invite/:code', { schema: { ...hide, params: InviteParams, body: CsrfOnlyBody } }, async (request, reply) => {
      const { server } = await acceptInvite(services, personActing(request, services.clock), request.params.code);
      return reply.redirect(`/servers/${server.id}`, 303);
    });
  });

  registerServerSettingsPages(pages, services);
}

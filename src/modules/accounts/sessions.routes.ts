import { ApiError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { personActing } from '../../http/acting.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { fieldMessages } from './accounts.page.js';
import { sessionsPage } from './sessions.page.js';
import { EndSessionBody, SessionsCsrfBody, SessionsQuery } from './sessions.schemas.js';
import { endOneSession, endOtherSessions, listSessions } from './sessions.service.js';

const hide = { hide: true } as const;

/** Settings → Sessions (issue #38 §5): the list, End (one), End all other sessions. */
export function registerSessionPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => {
    signedIn.get('/settings/sessions', { schema: { ...hide, querystring: SessionsQuery } }, async (request, reply) => {
      const sessions = await listSessions(services, request.signedInViewer.id, request.sessionToken);
      const ended = request.query.ended !== undefined && /^\d{1,6}$/.test(request.query.ended) ? Number(request.query.ended) : undefined;
      return sendHtml(reply, sessionsPage({ ctx: signedInContext(request, services), sessions, ended }));
    });

    signedIn.post('/settings/sessions/end', { schema: { ...hide, body: EndSessionBody } }, async (request, reply) => {
      try {
        await endOneSession(services, personActing(request, services.clock), request.body.session ?? '', request.sessionToken);
        // Post/redirect/get: a reload does not resubmit.
        return reply.redirect('/settings/sessions?ended=1', 303);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 50035) throw error;
        const sessions = await listSessions(services, request.signedInViewer.id, request.sessionToken);
        const problem = fieldMessages(error.errors)['session']?.join(' ') ?? error.message;
        return sendHtml(reply, sessionsPage({ ctx: signedInContext(request, services), sessions, problem }), 400);
      }
    });

    signedIn.post('/settings/sessions/end-others', { schema: { ...hide, body: SessionsCsrfBody } }, async (request, reply) => {
      const ended = await endOtherSessions(services, personActing(request, services.clock), request.sessionToken);
      return reply.redirect(`/settings/sessions?ended=${ended}`, 303);
    });
  });
}

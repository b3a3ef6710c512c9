import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ANONYMOUS, type Acting, type Who } from '../../core/acting.js';
import { person } from '../../core/actor.js';
import { personActing, requestActing } from '../../http/acting.js';
import { PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import type { Viewer } from '../../web/layout.js';
import { pageContext, sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { consentPage, declinedPage, type ConsentPageInput } from './authorize.page.js';
import { authorizedAppsPage, confirmDeauthorizePage } from './authorized-apps.page.js';
import { authorizedApps, deauthorizeApp } from './authorized-apps.service.js';
import { decideAuthorization, startAuthorization, type AuthorizeOutcome } from './authorize.service.js';
import { webhookConsentPage } from './incoming-webhook.page.js';
import { installConsentPage, installedPage } from './install-consent.page.js';

/**
 * The app-wide CSP with images limited to this origin: pages about granting access load nothing
 * from any other host (OAUTH-CHECKLIST A15, A17), so a browser would block it even if a template
 * tried. No form-action: it would block the redirect to the app after the form (see app.ts).
 */
const GRANT_PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; frame-ancestors 'none'";

export function grantPageHeaders(reply: FastifyReply): FastifyReply {
  return reply.header('Content-Security-Policy', GRANT_PAGE_CSP).header('X-Frame-Options', 'DENY').header('Referrer-Policy', 'no-referrer');
}

/**
 * The query and body are read raw (no schema): a repeated OAuth parameter arrives as an array and
 * must be refused (RFC 6749 §3.1), which a string schema would hide.
 */
const AuthorizeBody = Type.Object({ decision: Type.Optional(Type.Unknown()) }, { additionalProperties: true });
const DeauthorizeParams = Type.Object({ applicationId: Type.String({ maxLength: 32 }) });
const AuthorizedAppsQuery = Type.Object({ removed: Type.Optional(Type.String({ maxLength: 8 })) });

/** The consent screen for what the request asks: an install, webhook.incoming, or scopes alone. */
function consentScreen(input: ConsentPageInput): string {
  if (input.view.install) return installConsentPage(input, input.view.install);
  if (input.view.webhook) return webhookConsentPage(input, input.view.webhook);
  return consentPage(input);
}

/** The browser's request acting: its signed-in person, or nobody yet. */
function browserActing(request: FastifyRequest, services: Services): Acting<Who> {
  return requestActing(request, services.clock, request.viewer ? person(request.viewer.id) : ANONYMOUS);
}

/** GET/POST /app/oauth2/authorize and Settings → Authorized apps. */
export function registerAuthorizePages(pages: App, services: Services): void {
  /**
   * Sends the outcome. Redirects to the app use 302 after GET and 303 after the POSTed form
   * (RFC 9700 §4.12, OAUTH-CHECKLIST A12: never 307, which would re-post the form to the app).
   */
  function send(reply: FastifyReply, outcome: AuthorizeOutcome, viewer: Viewer | undefined, ctx: ReturnType<typeof pageContext>, method: 'GET' | 'POST'): FastifyReply {
    switch (outcome.kind) {
      case 'redirect':
        // The location may carry a code: keep it out of every cache.
        return reply.header('Cache-Control', 'no-store').redirect(outcome.location, method === 'GET' ? 302 : 303);
      case 'sign-in':
        // OpenID Connect Core §3.1.2.1 login_hint prefills the username (issue #22).
        return reply.redirect(`/login?next=${encodeURIComponent(outcome.next)}${outcome.loginHint === undefined ? '' : `&login_hint=${encodeURIComponent(outcome.loginHint)}`}`, 303);
      // The service asks for sign-in before any page, so these have a viewer.
      case 'consent':
        return sendHtml(grantPageHeaders(reply), consentScreen({ ctx: { ...ctx, viewer: viewer as Viewer }, view: outcome.view }));
      case 'installed':
        return sendHtml(grantPageHeaders(reply), installedPage({ ctx: { ...ctx, viewer: viewer as Viewer }, view: outcome.view }));
      case 'declined':
        return sendHtml(grantPageHeaders(reply), declinedPage({ ctx: { ...ctx, viewer: viewer as Viewer }, application: outcome.application }));
      case 'refused':
        // The one error handler renders it, as every error page (DESIGN §9.7).
        throw new PageError(outcome.problem.status, outcome.problem.title, outcome.problem.detail);
    }
  }

  pages.get('/app/oauth2/authorize', { schema: { hide: true } }, async (request, reply) => {
    grantPageHeaders(reply);
    const outcome = await startAuthorization(services, browserActing(request, services), { query: request.query, signedInAt: request.signedInAt, sessionToken: request.sessionToken, requestUrl: request.url });
    return send(reply, outcome, request.viewer, pageContext(request, services), 'GET');
  });

  pages.post('/app/oauth2/authorize', { schema: { hide: true, body: AuthorizeBody } }, async (request, reply) => {
    grantPageHeaders(reply);
    const outcome = await decideAuthorization(services, browserActing(request, services), { body: request.body, signedInAt: request.signedInAt, sessionToken: request.sessionToken, decision: request.body.decision });
    return send(reply, outcome, request.viewer, pageContext(request, services), 'POST');
  });

  signedInPages(pages, (signedIn) => {
    signedIn.get('/settings/authorized-apps', { schema: { hide: true, querystring: AuthorizedAppsQuery } }, async (request, reply) => {
      const apps = await authorizedApps(services, request.signedInViewer.id);
      return sendHtml(grantPageHeaders(reply), authorizedAppsPage({ ctx: signedInContext(request, services), apps, removed: request.query.removed === '1' }));
    });

    signedIn.get('/settings/authorized-apps/:applicationId/deauthorize', { schema: { hide: true, params: DeauthorizeParams } }, async (request, reply) => {
      const app = (await authorizedApps(services, request.signedInViewer.id)).find((a) => a.applicationId === request.params.applicationId);
      if (!app) throw new PageError(404, 'Page not found', 'This app has no access to your account.');
      return sendHtml(grantPageHeaders(reply), confirmDeauthorizePage(signedInContext(request, services), app));
    });

    signedIn.post('/settings/authorized-apps/:applicationId/deauthorize', { schema: { hide: true, params: DeauthorizeParams } }, async (request, reply) => {
      await deauthorizeApp(services, personActing(request, services.clock), request.params.applicationId);
      return reply.redirect('/settings/authorized-apps?removed=1', 303);
    });
  });
}

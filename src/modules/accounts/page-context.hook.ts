import { fastifyCookie } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/app-type.js';
import { PageError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import { CSRF_FIELD, CSRF_HEADER, verifyCsrfToken } from '../../web/csrf.js';
import { cookieNames, cookieOptions } from '../../web/pages.js';
import { resolveSession } from './sessions.service.js';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Only a context with the multipart parser (app.ts, the composer's post) gets this far with such a body; others answer 415 first. */
function isMultipart(request: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
}

/**
 * Makes `app` a pages context: every route registered on it gets the signed-in viewer and a CSRF
 * key, and every state-changing request must carry a valid CSRF token and, when the browser sends
 * one, a same-origin Origin header. Enforced here once, so no form can forget it.
 */
export function installPageContext(app: App, services: Services): void {
  const names = cookieNames(services.config.secureCookies);
  const origin = new URL(services.config.baseUrl).origin;

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const token = request.cookies[names.session];
    if (token) {
      const resolved = await resolveSession(services, token);
      if (resolved) {
        const p = resolved.person;
        request.viewer = { id: p.id, username: p.username, name: p.name, avatarUrl: p.avatarUrl, email: p.email, emailVerified: p.emailVerified, admin: p.admin };
        request.sessionToken = token;
        request.signedInAt = resolved.signedInAt;
        request.csrfKey = token;
        // The cookie's lifetime follows the session's idle expiry as use pushes it forward.
        if (resolved.renewed) {
          reply.setCookie(names.session, token, cookieOptions(services, Math.max(0, Math.floor((resolved.expiresAt - services.clock.now()) / 1000))));
        }
      } else {
        // Same attributes as when set: browsers ignore a __Host- cookie cleared without Secure.
        reply.clearCookie(names.session, cookieOptions(services));
      }
    }
    if (!request.csrfKey) {
      let anon = request.cookies[names.anon];
      if (!anon || !/^[A-Za-z0-9_-]{22,64}$/.test(anon)) {
        anon = services.random.bytes(18).toString('base64url');
        reply.setCookie(names.anon, anon, cookieOptions(services));
      }
      request.csrfKey = anon;
    }

    if (STATE_CHANGING.has(request.method)) {
      const sentOrigin = request.headers.origin;
      if (sentOrigin !== undefined && sentOrigin !== origin && sentOrigin !== 'null') {
        throw new PageError(403, 'Request refused', 'This form was sent from another site. Go back, reload the page and try again.');
      }
      const body = request.body as Record<string, unknown> | undefined;
      let sent = body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
      // Issue #42 §2: a multipart body (the composer's files) streams to the route after this hook,
      // so its token comes in a header (composer.js) or in the form's action URL (without script),
      // and is checked here before a byte of the body is read. Logs drop query strings.
      if (isMultipart(request)) sent = request.headers[CSRF_HEADER] ?? (request.query as Record<string, unknown> | undefined)?.[CSRF_FIELD];
      if (!verifyCsrfToken(request.csrfKey, sent)) {
        throw new PageError(403, 'Request refused', 'This form has expired or was not sent from this site. Go back, reload the page and try again.');
      }
    }
  });
}

/**
 * Who is signed in, for the pages answered outside the pages context (the 404 page, the API
 * reference): reads the session cookie from the raw header and sets `request.viewer` and its CSRF
 * key, so the header shows the person and their Sign out form (issue #24). Never writes a cookie;
 * an unknown or expired session leaves the request signed out.
 */
export function viewerIdentifier(services: Services): (request: FastifyRequest) => Promise<void> {
  const names = cookieNames(services.config.secureCookies);
  return async (request) => {
    const header = request.headers.cookie;
    if (!header) return;
    const token = fastifyCookie.parse(header)[names.session];
    if (!token) return;
    const resolved = await resolveSession(services, token);
    if (!resolved) return;
    const p = resolved.person;
    request.viewer = { id: p.id, username: p.username, name: p.name, avatarUrl: p.avatarUrl, email: p.email, emailVerified: p.emailVerified, admin: p.admin };
    request.csrfKey = token;
  };
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/app-type.js';
import { PageError } from '../core/errors.js';
import { resolveSession } from '../modules/accounts/sessions.service.js';
import type { Services } from '../services.js';
import { csrfToken, CSRF_FIELD, verifyCsrfToken } from './csrf.js';
import type { Viewer } from './layout.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person, on page routes. */
    viewer: Viewer | undefined;
    /** The key CSRF tokens are derived from: the session id, or the anonymous cookie. */
    csrfKey: string | undefined;
    /** The raw session cookie, when signed in. */
    sessionToken: string | undefined;
    /** When the viewer signed in to this session (OpenID Connect auth_time, max_age; issue #22). */
    signedInAt: number | undefined;
  }
}

export function cookieNames(secure: boolean): { session: string; anon: string } {
  // __Host- cookies are only accepted over https, bound to this host and path /.
  return secure ? { session: '__Host-gh_session', anon: '__Host-gh_anon' } : { session: 'gh_session', anon: 'gh_anon' };
}

export function cookieOptions(services: Services, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: services.config.secureCookies,
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
        request.viewer = { id: p.id, username: p.username, name: p.name, avatarUrl: p.avatarUrl };
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
      const sent = body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
      if (!verifyCsrfToken(request.csrfKey, sent)) {
        throw new PageError(403, 'Request refused', 'This form has expired or was not sent from this site. Go back, reload the page and try again.');
      }
    }
  });
}

/** The pieces every page needs from the request. */
export function pageContext(request: FastifyRequest, services: Services): { viewer: Viewer | undefined; csrfToken: string; serviceName: string } {
  return { viewer: request.viewer, csrfToken: request.csrfKey ? csrfToken(request.csrfKey) : '', serviceName: services.config.serviceName };
}

export function sendHtml(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(markup);
}

/**
 * The signed-in viewer, or a redirect to sign-in that comes back to this very URL afterwards
 * (issue #3: "signs in and comes back to the same request"). Returns undefined after redirecting.
 */
export function requireViewer(request: FastifyRequest, reply: FastifyReply): Viewer | undefined {
  if (request.viewer) return request.viewer;
  const next = request.method === 'GET' ? request.url : '/';
  void reply.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
  return undefined;
}

/** Only same-site relative paths are allowed as post-sign-in destinations (no open redirect). */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  // Printable ASCII only: browsers drop tabs and newlines inside URLs ("/\t/evil.example" becomes
  // "//evil.example"), and Node refuses control and non-Latin-1 characters in a Location header.
  // Paths this service produces are percent-encoded, so nothing legitimate is lost.
  if (/[^\x21-\x7e]/.test(next) || next.length > 4096) return '/';
  return next;
}

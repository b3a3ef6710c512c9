import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './app-type.js';
import { person, type PersonActor } from '../core/actor.js';
import { csrfToken } from '../web/csrf.js';
import type { PageCtx, SignedInCtx } from '../web/components.js';
import type { Viewer } from '../web/layout.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person, on page routes (set by accounts/page-context.hook.ts). */
    viewer: Viewer | undefined;
    /**
     * The signed-in person on a route registered with `signedInPages`, whose hook has already
     * sent everyone else to sign in. Reading it anywhere else is a bug and throws.
     */
    readonly signedInViewer: Viewer;
    /** The key CSRF tokens are derived from: the session id, or the anonymous cookie. */
    csrfKey: string | undefined;
    /** The raw session cookie, when signed in. */
    sessionToken: string | undefined;
    /** When the viewer signed in to this session (OpenID Connect auth_time, max_age; issue #22). */
    signedInAt: number | undefined;
  }
}

/** The pieces every page needs from the request. */
export function pageContext(request: FastifyRequest, services: { config: { serviceName: string } }): PageCtx {
  return { viewer: request.viewer, csrfToken: request.csrfKey ? csrfToken(request.csrfKey) : '', serviceName: services.config.serviceName, path: request.url.split('?')[0] };
}

/** pageContext on a signed-in route: the viewer is there. */
export function signedInContext(request: FastifyRequest, services: { config: { serviceName: string } }): SignedInCtx {
  return { ...pageContext(request, services), viewer: request.signedInViewer };
}

/** The signed-in viewer as the actor of the services a signed-in route calls. */
export function actorOf(request: FastifyRequest): PersonActor {
  return person(request.signedInViewer.id);
}

export function sendHtml(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(markup);
}

/** Where sign-in sends the viewer back to: this very URL for a GET, home after a form. */
function signInUrl(request: FastifyRequest): string {
  const next = request.method === 'GET' ? request.url : '/';
  return `/login?next=${encodeURIComponent(next)}`;
}

/**
 * Registers page routes that only a signed-in person may use: a scope whose preHandler sends
 * everyone else to sign in (coming back afterwards, issue #3), so its handlers read
 * `request.signedInViewer` and never check. Call on the pages context (after the session and CSRF
 * hook), whose hooks run first.
 */
export function signedInPages(pages: App, register: (scope: App) => void): void {
  void pages.register(async (scope) => {
    scope.decorateRequest('signedInViewer', {
      getter(this: FastifyRequest): Viewer {
        if (!this.viewer) throw new Error('signedInViewer read outside a signed-in route');
        return this.viewer;
      },
    });
    scope.addHook('preHandler', async (request, reply) => {
      if (!request.viewer) return reply.redirect(signInUrl(request), 303);
    });
    register(scope);
  });
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

import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, RateLimitedError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { anonymousActing, personActing } from '../../http/acting.js';
import { pageContext, safeNext, sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { cookieNames, cookieOptions } from '../../web/pages.js';
import { fieldMessages } from '../accounts/accounts.page.js';
import { isAccountDisabledRefusal } from '../accounts/disabled-accounts.js';
import type { StartedSession } from '../accounts/sessions.service.js';
import { replaceSession } from '../accounts/sessions.service.js';
import { enrolPage, reauthenticatePage, recoveryCodesPage, secondStepPage } from './mfa.page.js';
import { CodeBody, ReauthenticateBody, SecondStepBody } from './mfa.schemas.js';
import { completeSecondStep, confirmTotp, disableTotp, pendingSignInPerson, pendingTotpEnrolment, PENDING_EXPIRED, regenerateRecoveryCodes, secondStepOffers, startTotpEnrolment, type PendingSignIn } from './mfa.service.js';
import { NextQuery } from '../accounts/accounts.schemas.js';

const hide = { hide: true } as const;

/** The pending sign-in's cookie (issue #38 §4: bound to the browser); __Host- on https like the session's. */
export function pendingCookieName(secure: boolean): string {
  return secure ? '__Host-gh_pending' : 'gh_pending';
}

function isFormError(error: unknown): error is ApiError {
  return error instanceof ApiError && error.code === 50035;
}

function retryText(reply: FastifyReply, error: RateLimitedError): string {
  const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  reply.header('Retry-After', String(seconds));
  return `${error.message} Try again in ${seconds < 60 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`}.`;
}

/** Sets the pending sign-in cookie after a correct password (accounts.routes.ts) and sends the browser to the second step. */
export function sendToSecondStep(reply: FastifyReply, services: Services, pending: PendingSignIn, next: string): FastifyReply {
  const maxAge = Math.max(0, Math.floor((pending.expiresAt - services.clock.now()) / 1000));
  reply.setCookie(pendingCookieName(services.config.secureCookies), pending.token, cookieOptions(services, maxAge));
  return reply.redirect(next === '/' ? '/login/second-factor' : `/login/second-factor?next=${encodeURIComponent(next)}`, 303);
}

/** The second sign-in step and Settings → Security's two-factor screens (issue #38 §4). */
export function registerSecondFactorPages(pages: App, services: Services): void {
  const names = cookieNames(services.config.secureCookies);
  const pendingName = pendingCookieName(services.config.secureCookies);

  function setSessionCookie(reply: FastifyReply, session: StartedSession): void {
    const maxAge = Math.max(0, Math.floor((session.expiresAt - services.clock.now()) / 1000));
    reply.setCookie(names.session, session.token, cookieOptions(services, maxAge));
  }

  function pendingToken(request: FastifyRequest): string | undefined {
    return request.cookies[pendingName];
  }

  pages.get('/login/second-factor', { schema: { ...hide, querystring: NextQuery } }, async (request, reply) => {
    const next = safeNext(request.query.next);
    const person = await pendingSignInPerson(services, pendingToken(request));
    if (!person) return reply.redirect(next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`, 303);
    return sendHtml(reply, secondStepPage({ ctx: pageContext(request, services), next, username: person.username, offers: await secondStepOffers(services, person.id) }));
  });

  pages.post('/login/second-factor', { schema: { ...hide, body: SecondStepBody } }, async (request, reply) => {
    const next = safeNext(request.body.next);
    const token = pendingToken(request);
    try {
      const { session } = await completeSecondStep(services, anonymousActing(request, services.clock), { token, userAgent: request.headers['user-agent'] ?? null }, { method: 'otp', code: request.body.code ?? '' });
      reply.clearCookie(pendingName, cookieOptions(services));
      if (request.sessionToken) await replaceSession(services, anonymousActing(request, services.clock), request.sessionToken);
      setSessionCookie(reply, session);
      return reply.redirect(next, 303);
    } catch (error) {
      const person = await pendingSignInPerson(services, token);
      const ctx = pageContext(request, services);
      if (error instanceof RateLimitedError) return sendHtml(reply, secondStepPage({ ctx, next, username: person?.username ?? '', offers: person && (await secondStepOffers(services, person.id)), error: retryText(reply, error) }), 429);
      if (!isFormError(error)) throw error;
      if (!person) {
        reply.clearCookie(pendingName, cookieOptions(services));
        return sendHtml(reply, secondStepPage({ ctx, next, username: '', error: PENDING_EXPIRED }), 400);
      }
      // Issue #39: an account disabled while its sign-in waited here is told so, on a status of its own.
      const status = isAccountDisabledRefusal(error.errors) ? 403 : 400;
      return sendHtml(reply, secondStepPage({ ctx, next, username: person.username, offers: await secondStepOffers(services, person.id), error: fieldMessages(error.errors)['code']?.join(' ') }), status);
    }
  });

  signedInPages(pages, (signedIn) => {
    signedIn.post('/settings/security/totp', { schema: { ...hide, body: CodeBody } }, async (request, reply) => {
      const ctx = signedInContext(request, services);
      try {
        const enrolment = await startTotpEnrolment(services, personActing(request, services.clock));
        return sendHtml(reply, enrolPage({ ctx, enrolment, errors: {} }));
      } catch (error) {
        if (!isFormError(error)) throw error;
        return reply.redirect('/settings/security', 303);
      }
    });

    signedIn.post('/settings/security/totp/confirm', { schema: { ...hide, body: CodeBody } }, async (request, reply) => {
      const ctx = signedInContext(request, services);
      try {
        const { recoveryCodes } = await confirmTotp(services, personActing(request, services.clock), request.body.code ?? '');
        return sendHtml(reply, recoveryCodesPage({ ctx, codes: recoveryCodes, message: 'Two-factor authentication is on.' }));
      } catch (error) {
        if (!isFormError(error)) throw error;
        const enrolment = await pendingTotpEnrolment(services, request.signedInViewer.id);
        if (!enrolment) return reply.redirect('/settings/security', 303);
        return sendHtml(reply, enrolPage({ ctx, enrolment, errors: fieldMessages(error.errors) }), 400);
      }
    });

    signedIn.get('/settings/security/totp/remove', { schema: hide }, async (request, reply) => sendHtml(reply, reauthenticatePage({ ctx: signedInContext(request, services), action: 'remove', errors: {} })));
    signedIn.get('/settings/security/recovery-codes', { schema: hide }, async (request, reply) =>
      sendHtml(reply, reauthenticatePage({ ctx: signedInContext(request, services), action: 'regenerate', errors: {} })),
    );

    signedIn.post('/settings/security/totp/remove', { schema: { ...hide, body: ReauthenticateBody } }, async (request, reply) => {
      const ctx = signedInContext(request, services);
      try {
        await disableTotp(services, personActing(request, services.clock), { password: request.body.password ?? '', code: request.body.code ?? '' });
        return reply.redirect('/settings/security', 303);
      } catch (error) {
        if (error instanceof RateLimitedError) return sendHtml(reply, reauthenticatePage({ ctx, action: 'remove', errors: { password: [retryText(reply, error)] } }), 429);
        if (!isFormError(error)) throw error;
        return sendHtml(reply, reauthenticatePage({ ctx, action: 'remove', errors: fieldMessages(error.errors) }), 400);
      }
    });

    signedIn.post('/settings/security/recovery-codes', { schema: { ...hide, body: ReauthenticateBody } }, async (request, reply) => {
      const ctx = signedInContext(request, services);
      try {
        const { recoveryCodes } = await regenerateRecoveryCodes(services, personActing(request, services.clock), { password: request.body.password ?? '', code: request.body.code ?? '' });
        return sendHtml(reply, recoveryCodesPage({ ctx, codes: recoveryCodes, message: 'New recovery codes were made; the old ones no longer work.' }));
      } catch (error) {
        if (error instanceof RateLimitedError) return sendHtml(reply, reauthenticatePage({ ctx, action: 'regenerate', errors: { password: [retryText(reply, error)] } }), 429);
        if (!isFormError(error)) throw error;
        return sendHtml(reply, reauthenticatePage({ ctx, action: 'regenerate', errors: fieldMessages(error.errors) }), 400);
      }
    });
  });
}

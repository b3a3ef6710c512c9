import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ApiErrors, RateLimitedError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { cookieNames, cookieOptions } from '../../web/pages.js';
import { anonymousActing, personActing, requestActing } from '../../http/acting.js';
import { ANONYMOUS } from '../../core/acting.js';
import { pageContext, safeNext, sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { fieldMessages, loginPage, passwordPage, profilePage, registerPage } from './accounts.page.js';
import { CsrfOnlyBody, LoginBody, NextQuery, PasswordBody, ProfileBody, RegisterBody, RegisterQuery, SavedQuery } from './accounts.schemas.js';
import { inviteCodeIn, allowanceForSignUp } from './sign-ups.service.js';
import { changePassword, getPerson, INCORRECT_CREDENTIALS, signIn, signOut, signUp, updateProfile } from './accounts.service.js';
import type { StartedSession } from './sessions.service.js';
import { applicationAskingIn } from '../applications/applications.service.js';
import { registerSecondFactorPages, sendToSecondStep } from '../mfa/mfa.routes.js';
import { registerRecoveryPages } from './recovery.routes.js';
import { pendingEmail, resendVerification } from './email-verification.service.js';
import { LinkRefusedError } from './account-links.js';
import { mailConfigured } from '../mail/mail.service.js';
import { disabledAccountMessage, isAccountDisabledRefusal } from './disabled-accounts.js';

/** Page routes are HTML, not API: kept out of the OpenAPI document. */
const hide = { hide: true } as const;

/** A 50035 Invalid Form Body from a service: the form is shown again with its messages. */
function isFormError(error: unknown): error is ApiError {
  return error instanceof ApiError && error.code === 50035;
}

function waitText(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** A refusal for too many attempts: Retry-After on the reply, and the words the form shows. */
function tooManyAttempts(reply: FastifyReply, error: RateLimitedError): string {
  reply.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))));
  return `${error.message} Try again in ${waitText(error.retryAfterMs)}.`;
}

/** Sign up, sign in, sign out, profile settings (pages context: viewer + CSRF). */
export function registerAccountPages(pages: App, services: Services): void {
  const names = cookieNames(services.config.secureCookies);

  /** The session cookie lives as long as the session (issue #2 §5: HttpOnly, SameSite=Lax, Secure on https). */
  function setSessionCookie(reply: FastifyReply, session: StartedSession): void {
    const maxAge = Math.max(0, Math.floor((session.expiresAt - services.clock.now()) / 1000));
    reply.setCookie(names.session, session.token, cookieOptions(services, maxAge));
  }

  function userAgent(request: FastifyRequest): string | null {
    return request.headers['user-agent'] ?? null;
  }

  pages.get('/register', { schema: { ...hide, querystring: RegisterQuery } }, async (request, reply) => {
    const next = safeNext(request.query.next);
    // Issue #39: the page says which sign-up rule applies, and shows no form where it refuses.
    const signUps = await allowanceForSignUp(services, { inviteCode: inviteCodeIn(next), token: request.query.token });
    return sendHtml(reply, registerPage({ ctx: pageContext(request, services), next, values: {}, errors: {}, signUps, token: request.query.token }), signUps.allowed ? 200 : 403);
  });

  pages.post('/register', { schema: { ...hide, body: RegisterBody } }, async (request, reply) => {
    const body = request.body;
    const next = safeNext(body.next);
    try {
      const { session } = await signUp(services, anonymousActing(request, services.clock), {
        username: body.username ?? '',
        name: body.name ?? '',
        email: body.email ?? null,
        password: body.password ?? '',
        userAgent: userAgent(request),
        replacingSessionToken: request.sessionToken,
        inviteCode: inviteCodeIn(next),
        signUpToken: body.token,
      });
      setSessionCookie(reply, session);
      return reply.redirect(next, 303);
    } catch (error) {
      const values = { username: body.username, name: body.name, email: body.email };
      if (error instanceof ApiError && error.status === 403) {
        return sendHtml(reply, registerPage({ ctx: pageContext(request, services), next, values, errors: {}, signUps: { allowed: false, message: error.message } }), 403);
      }
      if (error instanceof RateLimitedError) return sendHtml(reply, registerPage({ ctx: pageContext(request, services), next, values, errors: { signUp: [tooManyAttempts(reply, error)] } }), 429);
      if (!isFormError(error)) throw error;
      return sendHtml(reply, registerPage({ ctx: pageContext(request, services), next, values, errors: fieldMessages(error.errors), token: body.token }), 400);
    }
  });

  pages.get('/login', { schema: { ...hide, querystring: NextQuery } }, async (request, reply) => {
    const next = safeNext(request.query.next);
    const askingApp = await applicationAskingIn(services, next);
    return sendHtml(reply, loginPage({ ctx: pageContext(request, services), next, username: request.query.login_hint, askingApp }));
  });

  pages.post('/login', { schema: { ...hide, querystring: NextQuery, body: LoginBody } }, async (request, reply) => {
    const body = request.body;
    const next = safeNext(body.next ?? request.query.next);
    try {
      const signedIn = await signIn(services, anonymousActing(request, services.clock), {
        username: body.username ?? '',
        password: body.password ?? '',
        userAgent: userAgent(request),
        replacingSessionToken: request.sessionToken,
      });
      // Issue #38 §4: a second factor is asked on its own page (mfa.routes.ts).
      if ('pending' in signedIn) return sendToSecondStep(reply, services, signedIn.pending, next);
      setSessionCookie(reply, signedIn.session);
      return reply.redirect(next, 303);
    } catch (error) {
      const ctx = pageContext(request, services);
      // The app asking (issue #24) is named again on a refused attempt.
      const askingApp = await applicationAskingIn(services, next);
      if (error instanceof RateLimitedError) return sendHtml(reply, loginPage({ ctx, next, username: body.username, askingApp, error: tooManyAttempts(reply, error) }), 429);
      if (!isFormError(error)) throw error;
      // Issue #39: the right password of a disabled account is told why, on a page of its own status.
      if (error instanceof ApiError && isAccountDisabledRefusal(error.errors)) {
        return sendHtml(reply, loginPage({ ctx, next, username: body.username, askingApp, error: disabledAccountMessage(services.config.serviceName) }), 403);
      }
      return sendHtml(reply, loginPage({ ctx, next, username: body.username, askingApp, error: INCORRECT_CREDENTIALS }), 400);
    }
  });

  pages.post('/logout', { schema: { ...hide, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = request.viewer;
    await signOut(services, requestActing(request, services.clock, viewer ? { kind: 'person', id: viewer.id } : ANONYMOUS), request.sessionToken);
    reply.clearCookie(names.session, cookieOptions(services));
    return reply.redirect('/', 303);
  });

  pages.get('/settings', { schema: hide }, async (_request, reply) => reply.redirect('/settings/profile', 303));

  registerRecoveryPages(pages, services);

  signedInPages(pages, (signedIn) => registerSettings(signedIn, services));
  registerSecondFactorPages(pages, services);
}

/** Settings → Profile and Password: the signed-in person's own account. */
function registerSettings(pages: App, services: Services): void {
  pages.get('/settings/profile', { schema: { ...hide, querystring: SavedQuery } }, async (request, reply) => {
    const person = await getPerson(services, request.signedInViewer.id);
    if (!person) throw ApiErrors.unknownUser();
    const saved = request.query.saved === '1';
    const pending = await pendingEmail(services, person);
    return sendHtml(reply, profilePage({ ctx: signedInContext(request, services), person, errors: {}, saved, pendingEmail: pending, mail: mailConfigured(services) }));
  });

  // Issue #38 §2: a new link to the address waiting for verification (throttled per person).
  pages.post('/settings/email/verify', { schema: { ...hide, body: CsrfOnlyBody } }, async (request, reply) => {
    const person = await getPerson(services, request.signedInViewer.id);
    if (!person) throw ApiErrors.unknownUser();
    let resent: string;
    let status = 200;
    try {
      resent = `A new verification link was sent to ${await resendVerification(services, personActing(request, services.clock))}.`;
    } catch (error) {
      if (error instanceof RateLimitedError) {
        resent = tooManyAttempts(reply, error);
        status = 429;
      } else if (error instanceof LinkRefusedError) {
        resent = 'No address is waiting for verification.';
        status = 400;
      } else throw error;
    }
    const pending = await pendingEmail(services, person);
    return sendHtml(reply, profilePage({ ctx: signedInContext(request, services), person, errors: {}, pendingEmail: pending, mail: mailConfigured(services), resent }), status);
  });

  pages.post('/settings/profile', { schema: { ...hide, body: ProfileBody } }, async (request, reply) => {
    const body = request.body;
    try {
      await updateProfile(services, personActing(request, services.clock), { name: body.name ?? '', email: body.email ?? null, avatarUrl: body.avatarUrl ?? null });
      // Post/redirect/get: a reload does not resubmit, and the header shows the new name.
      return reply.redirect('/settings/profile?saved=1', 303);
    } catch (error) {
      if (!isFormError(error)) throw error;
      const person = await getPerson(services, request.signedInViewer.id);
      if (!person) throw ApiErrors.unknownUser();
      const values = { name: body.name, email: body.email, avatarUrl: body.avatarUrl };
      const pending = await pendingEmail(services, person);
      return sendHtml(reply, profilePage({ ctx: signedInContext(request, services), person, values, errors: fieldMessages(error.errors), pendingEmail: pending, mail: mailConfigured(services) }), 400);
    }
  });

  pages.get('/settings/password', { schema: hide }, async (request, reply) => sendHtml(reply, passwordPage({ ctx: signedInContext(request, services), errors: {} })));

  pages.post('/settings/password', { schema: { ...hide, body: PasswordBody } }, async (request, reply) => {
    const body = request.body;
    const ctx = signedInContext(request, services);
    try {
      const changed = await changePassword(services, personActing(request, services.clock), {
        currentPassword: body.currentPassword ?? '',
        newPassword: body.newPassword ?? '',
        confirmPassword: body.confirmPassword ?? '',
        currentSessionToken: request.sessionToken,
      });
      return sendHtml(reply, passwordPage({ ctx, errors: {}, changed }));
    } catch (error) {
      if (error instanceof RateLimitedError) return sendHtml(reply, passwordPage({ ctx, errors: { currentPassword: [tooManyAttempts(reply, error)] } }), 429);
      if (!isFormError(error)) throw error;
      return sendHtml(reply, passwordPage({ ctx, errors: fieldMessages(error.errors) }), 400);
    }
  });
}

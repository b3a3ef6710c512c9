import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, RateLimitedError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import type { App } from '../../http/app-type.js';
import { anonymousActing, personActing } from '../../http/acting.js';
import { pageContext, safeNext, sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import type { FieldMessages } from '../../web/components.js';
import { cookieNames, cookieOptions } from '../../web/pages.js';
import { securityPage, AUDIT_PAGE_SIZE } from '../audit/audit.page.js';
import { readSecurityLog } from '../audit/audit.service.js';
import { applicationAskingIn } from '../applications/applications.service.js';
import { isAccountDisabledRefusal } from './disabled-accounts.js';
import { fieldMessages, loginPage } from './accounts.page.js';
import { passkeysSection } from './passkeys.page.js';
import { pendingCookieName } from '../mfa/mfa.routes.js';
import { completeSecondStep, pendingSignInPerson, PENDING_EXPIRED, secondFactorStatus, secondStepOffers } from '../mfa/mfa.service.js';
import { recoveryCodesPage, secondFactorSection, secondStepPage } from '../mfa/mfa.page.js';
import { AddPasskeyBody, PasskeyOptionsBody, PasskeySignInBody, RemovePasskeyBody } from './passkeys.schemas.js';
import { beginSecondFactorPasskey, verifySecondFactorPasskey, beginPasskeySignIn, beginRegistration, finishRegistration, passkeysOf, removePasskey, signInWithPasskey } from './passkeys.service.js';

const hide = { hide: true } as const;

function isFormError(error: unknown): error is ApiError {
  return error instanceof ApiError && error.code === 50035;
}

/** The options a ceremony starts from, as JSON for passkeys.js; never cached (each holds a single-use challenge). */
function sendOptions(reply: FastifyReply, options: unknown): FastifyReply {
  return reply.header('Cache-Control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(options));
}

/**
 * Passkeys (issue #38 §4; docs/accounts.md §Passkeys): "Sign in with a passkey" on the sign-in
 * page, and Settings → Security's Passkeys section (add, remove with the password).
 */
export function registerPasskeyPages(pages: App, services: Services): void {
  const names = cookieNames(services.config.secureCookies);

  pages.post('/login/passkey/options', { schema: { ...hide, body: PasskeyOptionsBody } }, async (request, reply) => sendOptions(reply, await beginPasskeySignIn(services, request.ip)));

  pages.post('/login/passkey', { schema: { ...hide, body: PasskeySignInBody } }, async (request, reply) => {
    const next = safeNext(request.body.next);
    try {
      const { session } = await signInWithPasskey(services, anonymousActing(request, services.clock), {
        credential: request.body.credential ?? '',
        userAgent: request.headers['user-agent'] ?? null,
        replacingSessionToken: request.sessionToken,
      });
      const maxAge = Math.max(0, Math.floor((session.expiresAt - services.clock.now()) / 1000));
      reply.setCookie(names.session, session.token, cookieOptions(services, maxAge));
      return reply.redirect(next, 303);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
        reply.header('Retry-After', String(seconds));
        const askingApp = await applicationAskingIn(services, next);
        return sendHtml(reply, loginPage({ ctx: pageContext(request, services), next, askingApp, error: `${error.message} Try again in ${seconds < 60 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`}.` }), 429);
      }
      if (!isFormError(error)) throw error;
      const askingApp = await applicationAskingIn(services, next);
      const message = Object.values(fieldMessages(error.errors)).flat()[0] ?? error.message;
      // Issue #39: a disabled account's verified passkey is told why, as its right password is (403).
      return sendHtml(reply, loginPage({ ctx: pageContext(request, services), next, askingApp, error: message }), isAccountDisabledRefusal(error.errors) ? 403 : 400);
    }
  });

  const pendingName = pendingCookieName(services.config.secureCookies);

  // The second sign-in step with a passkey (issue #38 §4): the pending sign-in's person only.
  pages.post('/login/second-factor/passkey/options', { schema: { ...hide, body: PasskeyOptionsBody } }, async (request, reply) => {
    const person = await pendingSignInPerson(services, request.cookies[pendingName]);
    // A page route answers its errors as a page (docs/errors.md); passkeys.js reads only whether the answer is ok.
    if (!person) return sendHtml(reply, secondStepPage({ ctx: pageContext(request, services), next: '/', username: '', error: PENDING_EXPIRED }), 400);
    return sendOptions(reply, await beginSecondFactorPasskey(services, person.id));
  });

  pages.post('/login/second-factor/passkey', { schema: { ...hide, body: PasskeySignInBody } }, async (request, reply) => {
    const next = safeNext(request.body.next);
    const token = request.cookies[pendingName];
    const person = await pendingSignInPerson(services, token);
    const ctx = pageContext(request, services);
    if (!person) return sendHtml(reply, secondStepPage({ ctx, next, username: '', error: PENDING_EXPIRED }), 400);
    try {
      const amr = await verifySecondFactorPasskey(services, person.id, request.body.credential ?? '');
      const { session } = await completeSecondStep(services, anonymousActing(request, services.clock), { token, userAgent: request.headers['user-agent'] ?? null }, { method: 'passkey', verifiedUserId: person.id, amr });
      reply.clearCookie(pendingName, cookieOptions(services));
      const maxAge = Math.max(0, Math.floor((session.expiresAt - services.clock.now()) / 1000));
      reply.setCookie(names.session, session.token, cookieOptions(services, maxAge));
      return reply.redirect(next, 303);
    } catch (error) {
      if (!isFormError(error)) throw error;
      const message = Object.values(fieldMessages(error.errors)).flat()[0] ?? error.message;
      return sendHtml(reply, secondStepPage({ ctx, next, username: person.username, offers: await secondStepOffers(services, person.id), error: message }), isAccountDisabledRefusal(error.errors) ? 403 : 400);
    }
  });

  signedInPages(pages, (signedIn) => {
    /** Settings → Security shown again with a refused passkey form's message beside it. */
    async function securityWith(request: FastifyRequest, reply: FastifyReply, errors: FieldMessages, extra: { name?: string | undefined; removing?: string | undefined }): Promise<FastifyReply> {
      const viewerId = request.signedInViewer.id;
      const ctx = signedInContext(request, services);
      const log = await readSecurityLog(services, viewerId, { limit: AUDIT_PAGE_SIZE });
      const passkeys = passkeysSection({ csrfToken: ctx.csrfToken, passkeys: await passkeysOf(services, viewerId), errors, ...extra });
      const twoFactor = secondFactorSection(ctx, await secondFactorStatus(services, viewerId));
      return sendHtml(reply, securityPage({ ctx, entries: log.entries, apps: log.apps, before: undefined, next: log.next, twoFactor, passkeys }), 400);
    }

    signedIn.post('/settings/security/passkeys/options', { schema: { ...hide, body: PasskeyOptionsBody } }, async (request, reply) =>
      sendOptions(reply, await beginRegistration(services, personActing(request, services.clock))),
    );

    signedIn.post('/settings/security/passkeys', { schema: { ...hide, body: AddPasskeyBody } }, async (request, reply) => {
      try {
        const { recoveryCodes } = await finishRegistration(services, personActing(request, services.clock), { name: request.body.name ?? '', credential: request.body.credential ?? '' });
        // The first second factor brings recovery codes, shown this once (issue #38 §4).
        if (recoveryCodes) return sendHtml(reply, recoveryCodesPage({ ctx: signedInContext(request, services), codes: recoveryCodes, message: 'The passkey was added: signing in now asks for it after your password.' }));
        return reply.redirect('/settings/security#passkeys', 303);
      } catch (error) {
        if (!isFormError(error)) throw error;
        return securityWith(request, reply, fieldMessages(error.errors), { name: request.body.name });
      }
    });

    signedIn.post('/settings/security/passkeys/remove', { schema: { ...hide, body: RemovePasskeyBody } }, async (request, reply) => {
      const credentialId = request.body.passkey ?? '';
      try {
        await removePasskey(services, personActing(request, services.clock), { credentialId, password: request.body.password ?? '' });
        return reply.redirect('/settings/security#passkeys', 303);
      } catch (error) {
        if (!isFormError(error)) throw error;
        return securityWith(request, reply, fieldMessages(error.errors), { removing: credentialId });
      }
    });
  });
}

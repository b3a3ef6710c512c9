import type { FastifyReply } from 'fastify';
import { ApiError, RateLimitedError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { anonymousActing, requestActing } from '../../http/acting.js';
import { ANONYMOUS } from '../../core/acting.js';
import { pageContext, sendHtml } from '../../http/pages.js';
import { mailConfigured } from '../mail/mail.service.js';
import { fieldMessages } from './accounts.page.js';
import { ForgotPasswordBody, ResetPasswordBody, TokenBody, TokenQuery } from './accounts.schemas.js';
import { LinkRefusedError } from './account-links.js';
import { readVerificationLink, verifyEmail } from './email-verification.service.js';
import { emailVerifiedPage, verifyEmailPage } from './email-verification.page.js';
import { readResetLink, requestPasswordReset, resetPassword } from './password-reset.service.js';
import { forgotPasswordPage, linkRefusedPage, passwordResetDonePage, resetPasswordPage } from './password-reset.page.js';

const hide = { hide: true } as const;

function retryAfter(reply: FastifyReply, error: RateLimitedError): string {
  const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  reply.header('Retry-After', String(seconds));
  const minutes = Math.ceil(seconds / 60);
  return `${error.message} Try again in ${seconds < 60 ? `${seconds} seconds` : `${minutes} minute${minutes === 1 ? '' : 's'}`}.`;
}

const AGAIN_RESET = { href: '/forgot-password', label: 'Ask for a new link' };
const AGAIN_VERIFY = { href: '/settings/profile', label: 'Go to your profile to send a new link' };

/**
 * Issue #38 §2–§3 pages: "Forgot password?", the reset link's form, the verification link's
 * page. Links are opened signed in or not; a refused link shows why beside nothing changed (400).
 */
export function registerRecoveryPages(pages: App, services: Services): void {
  pages.get('/forgot-password', { schema: hide }, async (request, reply) =>
    sendHtml(reply, forgotPasswordPage({ ctx: pageContext(request, services), mail: mailConfigured(services), errors: {} })),
  );

  pages.post('/forgot-password', { schema: { ...hide, body: ForgotPasswordBody } }, async (request, reply) => {
    const ctx = pageContext(request, services);
    const mail = mailConfigured(services);
    const email = request.body.email ?? '';
    try {
      if (mail) await requestPasswordReset(services, anonymousActing(request, services.clock), { email });
      // Issue #38 §3: the one answer, whether or not an account has the address.
      return sendHtml(reply, forgotPasswordPage({ ctx, mail, errors: {}, sent: mail }));
    } catch (error) {
      if (error instanceof RateLimitedError) return sendHtml(reply, forgotPasswordPage({ ctx, mail, email, errors: { email: [retryAfter(reply, error)] } }), 429);
      if (!(error instanceof ApiError && error.code === 50035)) throw error;
      return sendHtml(reply, forgotPasswordPage({ ctx, mail, email, errors: fieldMessages(error.errors) }), 400);
    }
  });

  pages.get('/reset-password', { schema: { ...hide, querystring: TokenQuery } }, async (request, reply) => {
    const ctx = pageContext(request, services);
    const token = request.query.token ?? '';
    try {
      const link = await readResetLink(services, token);
      return sendHtml(reply, resetPasswordPage({ ctx, token, username: link.username, errors: {} }));
    } catch (error) {
      if (error instanceof LinkRefusedError) return sendHtml(reply, linkRefusedPage(ctx, error.why, AGAIN_RESET), 400);
      throw error;
    }
  });

  pages.post('/reset-password', { schema: { ...hide, body: ResetPasswordBody } }, async (request, reply) => {
    const ctx = pageContext(request, services);
    const body = request.body;
    const token = body.token ?? '';
    try {
      const reset = await resetPassword(services, anonymousActing(request, services.clock), { token, newPassword: body.newPassword ?? '', confirmPassword: body.confirmPassword ?? '' });
      return sendHtml(reply, passwordResetDonePage(ctx, reset.username));
    } catch (error) {
      if (error instanceof LinkRefusedError) return sendHtml(reply, linkRefusedPage(ctx, error.why, AGAIN_RESET), 400);
      if (!(error instanceof ApiError && error.code === 50035)) throw error;
      const link = await readResetLink(services, token);
      return sendHtml(reply, resetPasswordPage({ ctx, token, username: link.username, errors: fieldMessages(error.errors) }), 400);
    }
  });

  pages.get('/verify-email', { schema: { ...hide, querystring: TokenQuery } }, async (request, reply) => {
    const ctx = pageContext(request, services);
    const token = request.query.token ?? '';
    try {
      const link = await readVerificationLink(services, token, request.viewer?.id ?? null);
      return sendHtml(reply, verifyEmailPage(ctx, token, link));
    } catch (error) {
      if (error instanceof LinkRefusedError) return sendHtml(reply, linkRefusedPage(ctx, error.why, AGAIN_VERIFY), 400);
      throw error;
    }
  });

  pages.post('/verify-email', { schema: { ...hide, body: TokenBody } }, async (request, reply) => {
    const ctx = pageContext(request, services);
    const viewer = request.viewer;
    try {
      const acting = requestActing(request, services.clock, viewer ? { kind: 'person', id: viewer.id } : ANONYMOUS);
      const link = await verifyEmail(services, acting, request.body.token ?? '');
      return sendHtml(reply, emailVerifiedPage(ctx, link));
    } catch (error) {
      if (error instanceof LinkRefusedError) return sendHtml(reply, linkRefusedPage(ctx, error.why, AGAIN_VERIFY), 400);
      throw error;
    }
  });
}

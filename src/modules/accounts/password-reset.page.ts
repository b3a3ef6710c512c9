import { html } from '../../web/html.js';
import { field, type FieldMessages, type PageCtx } from '../../web/components.js';
import { csrfField, layout } from '../../web/layout.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../directory/people.js';
import type { LinkRefusal } from './account-links.js';

/** Issue #38 §1: without SMTP the pages say so plainly, and what to do instead. */
export function noMailNotice(serviceName: string): ReturnType<typeof html> {
  return html`<p class="notice" role="status" id="no-mail">This ${serviceName} server sends no e-mail. Ask its operator, who can give you a one-time link to choose a new password or mark your address verified.</p>`;
}

export interface ForgotPasswordPageInput {
  ctx: PageCtx;
  mail: boolean;
  email?: string | undefined;
  errors: FieldMessages;
  /** After a request: the one answer, whatever the address. */
  sent?: boolean;
}

/** "Forgot password?" (issue #38 §3): one answer whether or not an account has the address. */
export function forgotPasswordPage(input: ForgotPasswordPageInput): string {
  const { ctx, errors } = input;
  const body = html`<div class="card">
<h1>Forgot your password?</h1>
${input.mail ? '' : noMailNotice(ctx.serviceName)}
${
  input.sent
    ? html`<p class="notice" role="status" id="reset-sent">If an account has this address, a link to choose a new password is on its way to it. The link works once, for 30 minutes.</p>`
    : ''
}
${input.mail && !input.sent ? html`<p>Enter the e-mail address of your account: we send it a link to choose a new password.</p>` : ''}
${
  input.mail && !input.sent
    ? html`<form method="post" action="/forgot-password">
${csrfField(ctx.csrfToken)}
${field({ name: 'email', label: 'E-mail', type: 'email', value: input.email, autocomplete: 'email', required: true }, errors)}
<div class="actions"><button type="submit">Send the link</button></div>
</form>`
    : ''
}
</div>
<p class="muted"><a href="/login">Back to sign in</a></p>`;
  return layout({ title: 'Forgot password', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

const REFUSALS: Record<LinkRefusal, string> = {
  unknown: 'This link is not valid. Check that you opened the whole link from the mail, or ask for a new one.',
  expired: 'This link has expired. Ask for a new one.',
  used: 'This link was already used: each link works once. Ask for a new one if you still need it.',
  foreign: 'This link is for another account than the one you are signed in to. Sign out, then open the link again.',
};

/** A refused verification or reset link: what went wrong and what to do (issue #38, bad input). */
export function linkRefusedPage(ctx: PageCtx, why: LinkRefusal, again: { href: string; label: string }): string {
  const body = html`<div class="card">
<h1>This link cannot be used</h1>
<div class="error" role="alert" id="link-refused">${REFUSALS[why]}</div>
<p><a href="${again.href}">${again.label}</a></p>
</div>`;
  return layout({ title: 'Link not valid', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

export interface ResetPasswordPageInput {
  ctx: PageCtx;
  token: string;
  username: string;
  errors: FieldMessages;
}

/** The form of a reset link: a new password, twice (sign-up's rules). */
export function resetPasswordPage(input: ResetPasswordPageInput): string {
  const { ctx, errors } = input;
  const body = html`<div class="card">
<h1>Choose a new password</h1>
${Object.keys(errors).length ? html`<div class="error" role="alert">Your password was not changed. Please correct the fields marked below.</div>` : ''}
<p>For <strong>@${input.username}</strong>. Every session of this account is signed out; you then sign in with the new password.</p>
<form method="post" action="/reset-password">
${csrfField(ctx.csrfToken)}
<input type="hidden" name="token" value="${input.token}">
<input type="text" name="username" value="${input.username}" autocomplete="username" hidden>
${field({ name: 'newPassword', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, minlength: PASSWORD_MIN_LENGTH, maxlength: PASSWORD_MAX_LENGTH, hint: `At least ${PASSWORD_MIN_LENGTH} characters.` }, errors)}
${field({ name: 'confirmPassword', label: 'Confirm new password', type: 'password', autocomplete: 'new-password', required: true }, errors)}
<div class="actions"><button type="submit">Set the new password</button></div>
</form>
</div>`;
  return layout({ title: 'Choose a new password', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

/** After a reset: nobody is signed in (a second factor is asked at the next sign-in). */
export function passwordResetDonePage(ctx: PageCtx, username: string): string {
  const body = html`<div class="card">
<h1>Your password was changed</h1>
<p class="notice" role="status" id="reset-done">The password of <strong>@${username}</strong> was changed and every session of the account was signed out.</p>
<p><a href="/login?login_hint=${encodeURIComponent(username)}">Sign in with the new password</a></p>
</div>`;
  return layout({ title: 'Password changed', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

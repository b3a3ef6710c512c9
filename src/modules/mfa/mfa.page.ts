import { field, notice, page, settingsLayout, type FieldMessages, type PageCtx, type SignedInCtx } from '../../web/components.js';
import { html, raw, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import type { SecondFactorStatus, TotpEnrolment } from './mfa.js';
import { passkeySecondFactorForm } from '../accounts/passkeys.page.js';

/**
 * Second-factor pages (issue #38 §4): the second sign-in step, and Settings → Security's
 * two-factor section with its enrolment, removal and recovery-code screens.
 */

const CODE_EXTRA = html` inputmode="text" autocapitalize="none" spellcheck="false" maxlength="64"`;

/** What the second step offers: the person's second factors (mfa.service.ts secondStepOffers). */
export interface SecondStepOffers {
  totp: boolean;
  passkey: boolean;
  recoveryCodes: boolean;
}

/** What the second step asks for, in words, from what the person has set up. */
function secondStepPrompt(offers: SecondStepOffers | undefined): string {
  if (!offers || (offers.totp && offers.passkey)) return 'Use one of your passkeys, or enter the 6-digit code from your authenticator app or one of your recovery codes.';
  if (offers.totp) return 'Enter the 6-digit code from your authenticator app, or one of your recovery codes.';
  return offers.recoveryCodes ? 'Use one of your passkeys, or enter one of your recovery codes.' : 'Use one of your passkeys.';
}

/**
 * The second sign-in step (issue #38 §4): a passkey when the person has one, and the code field
 * for a TOTP or recovery code when they have either. An expired step (no offers) shows both.
 */
export function secondStepPage(input: { ctx: PageCtx; next: string; username: string; offers?: SecondStepOffers | undefined; error?: string | undefined }): string {
  const errors: FieldMessages = input.error ? { code: [input.error] } : {};
  const offers = input.offers;
  const codeForm = !offers || offers.totp || offers.recoveryCodes;
  const passkey = !offers || offers.passkey;
  // Shown when the code form is not: the passkey form is hidden until passkeys.js finds WebAuthn.
  // A person whose second factor is a passkey is offered it first; with TOTP the code comes first.
  const passkeyFirst = passkey && offers !== undefined && !offers.totp;
  const passkeyForm = passkey ? passkeySecondFactorForm(input.ctx.csrfToken, input.next, passkeyFirst || !codeForm ? 'Use a passkey' : 'Use a passkey instead') : '';
  const errorAlone = !codeForm && input.error ? html`<div class="error" role="alert">${input.error}</div>` : '';
  const body = html`<div class="card">
<h1>Two-factor authentication</h1>
<p>Signing in as <strong>@${input.username}</strong>. ${secondStepPrompt(offers)}</p>
${errorAlone}
${passkeyFirst ? passkeyForm : ''}
${
  codeForm
    ? html`<form method="post" action="/login/second-factor">
${csrfField(input.ctx.csrfToken)}
<input type="hidden" name="next" value="${input.next}">
${field({ name: 'code', label: offers && !offers.totp ? 'Recovery code' : 'Code', type: 'text', autocomplete: 'one-time-code', required: true, extra: html`${CODE_EXTRA}${passkey ? '' : html` autofocus`}`, hint: 'A recovery code looks like abcde-fghij and works once.' }, errors)}
<div class="actions"><button type="submit">Verify</button></div>
</form>`
    : ''
}
${passkeyFirst ? '' : passkeyForm}
</div>
<p class="muted"><a href="/login">Start again</a></p>`;
  return page(input.ctx, 'Two-factor authentication', body, { width: 'narrow' });
}

/** The two-factor section of Settings → Security. */
export function secondFactorSection(ctx: SignedInCtx, status: SecondFactorStatus): SafeHtml {
  const setUpTotp = html`<form method="post" action="/settings/security/totp">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit">Set up an authenticator app</button></div>
</form>`;
  if (!status.totpEnabled && status.passkeys === 0) {
    return html`<section class="card" aria-labelledby="two-factor-heading">
<h2 id="two-factor-heading">Two-factor authentication</h2>
<p>Off. Set up an authenticator app, or add a passkey below: signing in then asks for it after your password.</p>
${setUpTotp}
</section>`;
  }
  // Issue #38 §4: a passkey is a second factor as an authenticator app is.
  const asks = status.totpEnabled && status.passkeys > 0 ? 'a code from your authenticator app or one of your passkeys' : status.totpEnabled ? 'a code from your authenticator app' : 'one of your passkeys';
  const codes = html`${status.recoveryCodesLeft} unused recovery code${status.recoveryCodesLeft === 1 ? '' : 's'} left.`;
  return html`<section class="card" aria-labelledby="two-factor-heading">
<h2 id="two-factor-heading">Two-factor authentication</h2>
<p>On: signing in asks for ${asks} after your password. ${codes}</p>
<p class="actions"><a href="/settings/security/recovery-codes">New recovery codes</a>${status.totpEnabled ? html` <a href="/settings/security/totp/remove">Remove the authenticator app</a>` : ''}</p>
${status.totpEnabled ? '' : setUpTotp}
</section>`;
}

/** Enrolment: the QR code (SVG made on the server), the text secret, and the confirming code. */
export function enrolPage(input: { ctx: SignedInCtx; enrolment: TotpEnrolment; errors: FieldMessages }): string {
  const { ctx, enrolment } = input;
  const content = html`<h1>Set up an authenticator app</h1>
<div class="card">
<p>Scan this code with your authenticator app, or type the secret below into it. Then enter the 6-digit code the app shows.</p>
<figure class="qr" role="img" aria-label="QR code of your authenticator secret">${raw(enrolment.qrSvg)}</figure>
<p>Secret: <code class="secret">${enrolment.secret.replace(/(.{4})/g, '$1 ').trim()}</code></p>
<form method="post" action="/settings/security/totp/confirm">
${csrfField(ctx.csrfToken)}
${field({ name: 'code', label: '6-digit code', type: 'text', autocomplete: 'one-time-code', required: true, extra: html` inputmode="numeric" maxlength="8"` }, input.errors)}
<div class="actions"><button type="submit">Turn on</button> <a href="/settings/security">Cancel</a></div>
</form>
</div>`;
  return page(ctx, 'Set up an authenticator app', settingsLayout('security', content));
}

/** Recovery codes, shown this once. */
export function recoveryCodesPage(input: { ctx: SignedInCtx; codes: readonly string[]; message: string }): string {
  const content = html`<h1>Recovery codes</h1>
${notice(input.message)}
<div class="card">
<p>Keep these codes somewhere safe. Each one signs you in once if you lose your authenticator app. They are shown only now; making new ones ends these.</p>
<ol class="recovery-codes">${input.codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
<p class="actions"><a href="/settings/security">Done</a></p>
</div>`;
  return page(input.ctx, 'Recovery codes', settingsLayout('security', content));
}

/** Re-authentication before turning TOTP off or making new recovery codes (issue #38 §4). */
export function reauthenticatePage(input: { ctx: SignedInCtx; action: 'remove' | 'regenerate'; errors: FieldMessages }): string {
  const remove = input.action === 'remove';
  const title = remove ? 'Remove the authenticator app' : 'New recovery codes';
  const content = html`<h1>${title}</h1>
<div class="card">
<p>${remove ? 'Signing in will no longer ask for a code from your authenticator app. Unless you have a passkey, your recovery codes stop working too.' : 'Your current recovery codes stop working, and ten new ones are shown once.'} Confirm with your password and a current code.</p>
<form method="post" action="${remove ? '/settings/security/totp/remove' : '/settings/security/recovery-codes'}">
${csrfField(input.ctx.csrfToken)}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true }, input.errors)}
${field({ name: 'code', label: 'Authenticator or recovery code', type: 'text', autocomplete: 'one-time-code', required: true, extra: CODE_EXTRA }, input.errors)}
<div class="actions"><button type="submit"${remove ? html` class="danger"` : ''}>${remove ? 'Remove' : 'Make new codes'}</button> <a href="/settings/security">Cancel</a></div>
</form>
</div>`;
  return page(input.ctx, title, settingsLayout('security', content));
}

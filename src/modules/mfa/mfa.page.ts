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

/** The second sign-in step: the code from the authenticator app, or a recovery code. */
export function secondStepPage(input: { ctx: PageCtx; next: string; username: string; error?: string | undefined }): string {
  const errors: FieldMessages = input.error ? { code: [input.error] } : {};
  const body = html`<div class="card">
<h1>Two-factor authentication</h1>
<p>Signing in as <strong>@${input.username}</strong>. Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
<form method="post" action="/login/second-factor">
${csrfField(input.ctx.csrfToken)}
<input type="hidden" name="next" value="${input.next}">
${field({ name: 'code', label: 'Code', type: 'text', autocomplete: 'one-time-code', required: true, extra: html`${CODE_EXTRA} autofocus`, hint: 'A recovery code looks like abcde-fghij and works once.' }, errors)}
<div class="actions"><button type="submit">Verify</button></div>
</form>
${passkeySecondFactorForm(input.ctx.csrfToken, input.next)}
</div>
<p class="muted"><a href="/login">Start again</a></p>`;
  return page(input.ctx, 'Two-factor authentication', body, { width: 'narrow' });
}

/** The two-factor section of Settings → Security. */
export function secondFactorSection(ctx: SignedInCtx, status: SecondFactorStatus): SafeHtml {
  if (!status.totpEnabled) {
    return html`<section class="card" aria-labelledby="two-factor-heading">
<h2 id="two-factor-heading">Two-factor authentication</h2>
<p>Off. With it on, signing in asks for a code from an authenticator app after your password.</p>
<form method="post" action="/settings/security/totp">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit">Set up an authenticator app</button></div>
</form>
</section>`;
  }
  return html`<section class="card" aria-labelledby="two-factor-heading">
<h2 id="two-factor-heading">Two-factor authentication</h2>
<p>On: signing in asks for a code from your authenticator app. ${status.recoveryCodesLeft} unused recovery code${status.recoveryCodesLeft === 1 ? '' : 's'} left.</p>
<p class="actions"><a href="/settings/security/recovery-codes">New recovery codes</a> <a href="/settings/security/totp/remove">Turn off two-factor authentication</a></p>
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
  const title = remove ? 'Turn off two-factor authentication' : 'New recovery codes';
  const content = html`<h1>${title}</h1>
<div class="card">
<p>${remove ? 'Signing in will ask only for your password. Your recovery codes stop working.' : 'Your current recovery codes stop working, and ten new ones are shown once.'} Confirm with your password and a current code.</p>
<form method="post" action="${remove ? '/settings/security/totp/remove' : '/settings/security/recovery-codes'}">
${csrfField(input.ctx.csrfToken)}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true }, input.errors)}
${field({ name: 'code', label: 'Authenticator or recovery code', type: 'text', autocomplete: 'one-time-code', required: true, extra: CODE_EXTRA }, input.errors)}
<div class="actions"><button type="submit"${remove ? html` class="danger"` : ''}>${remove ? 'Turn off' : 'Make new codes'}</button> <a href="/settings/security">Cancel</a></div>
</form>
</div>`;
  return page(input.ctx, title, settingsLayout('security', content));
}

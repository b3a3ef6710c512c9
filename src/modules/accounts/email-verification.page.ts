import { html } from '../../web/html.js';
import type { PageCtx } from '../../web/components.js';
import { csrfField, layout } from '../../web/layout.js';

/**
 * The page of a verification link (issue #38 §2). Opening the link changes nothing: the button
 * does, so a mail scanner that fetches every link verifies nothing.
 */
export function verifyEmailPage(ctx: PageCtx, token: string, link: { email: string; username: string }): string {
  const body = html`<div class="card">
<h1>Verify your e-mail address</h1>
<p>Confirm that <strong>${link.email}</strong> is the e-mail address of <strong>@${link.username}</strong>.</p>
<form method="post" action="/verify-email">
${csrfField(ctx.csrfToken)}
<input type="hidden" name="token" value="${token}">
<div class="actions"><button type="submit">Verify ${link.email}</button></div>
</form>
</div>`;
  return layout({ title: 'Verify e-mail', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

export function emailVerifiedPage(ctx: PageCtx, link: { email: string; username: string }): string {
  const body = html`<div class="card">
<h1>E-mail address verified</h1>
<p class="notice" role="status" id="email-verified"><strong>${link.email}</strong> is now the verified address of <strong>@${link.username}</strong>.</p>
<p><a href="${ctx.viewer ? '/settings/profile' : '/login'}">${ctx.viewer ? 'Back to your profile' : 'Sign in'}</a></p>
</div>`;
  return layout({ title: 'E-mail verified', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

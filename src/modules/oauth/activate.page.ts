import { html } from '../../web/html.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import type { PageCtx } from '../../web/components.js';
import { appTile } from './authorize.page.js';

type Ctx = PageCtx & { viewer: Viewer };

/**
 * /activate (RFC 8628 §3.3): where the person types the code their device shows. The code is
 * case-, dash- and space-insensitive, so any way of typing it works.
 */
export function activateFormPage(input: { ctx: Ctx; typed: string; message?: string | undefined }): string {
  const { ctx, typed, message } = input;
  const body = html`<div class="card">
<h1>Connect a device</h1>
<p>Enter the code your device shows. You will see which app is asking and what it may do before anything is shared.</p>
${message ? html`<div class="error" role="alert">${message}</div>` : ''}
<form method="post" action="/activate">
${csrfField(ctx.csrfToken)}
<label for="user_code">Code</label>
<input id="user_code" name="user_code" value="${typed}" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="32" placeholder="XXXX-XXXX" required>
<div class="actions"><button type="submit">Continue</button></div>
</form>
</div>`;
  return layout({ title: 'Connect a device', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

/** After the answer: what the device will get when it next asks. */
export function activateAnsweredPage(input: { ctx: Ctx; approved: boolean; applicationName: string }): string {
  const { ctx, approved, applicationName } = input;
  const body = html`<div class="card consent" role="status">
<div class="consent-head">${appTile(applicationName, 'large')}<div><h1>${approved ? `${applicationName} is connected` : `${applicationName} was not connected`}</h1></div></div>
<p>${approved ? 'You can go back to your device: it will continue on its own.' : 'Nothing was shared with the app. You can close this page.'}</p>
${approved ? html`<p class="hint">You can remove its access at any time in <a href="/settings/authorized-apps">Settings → Authorized apps</a>.</p>` : ''}
</div>`;
  return layout({ title: approved ? 'Device connected' : 'Device not connected', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

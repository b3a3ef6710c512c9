import { html, type SafeHtml } from '../../web/html.js';
import { field, settingsLayout, type FieldMessages, type PageCtx } from '../../web/components.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import { PASSKEYS_JS_PATH } from '../../web/assets.js';
import type { AccountDeletionPreview } from './account-deletion.js';

export interface AccountPageInput {
  ctx: PageCtx & { viewer: Viewer };
  preview: AccountDeletionPreview;
  errors: FieldMessages;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The passkey as the deletion's second factor: passkeys.js fills `credential` when the person
 * presses "Delete with a passkey" (shown once it finds WebAuthn).
 */
function passkeyPart(errors: FieldMessages): SafeHtml {
  const messages = errors['passkey'] ?? [];
  return html`<input type="hidden" name="credential" value="">
<div class="error" role="alert" data-passkey-error${messages.length ? '' : html` hidden`}>${messages.join(' ')}</div>`;
}

/** Settings → Account: the danger zone, Delete account (issue #38 §5). */
export function accountPage(input: AccountPageInput): string {
  const { ctx, preview, errors } = input;
  const owns = preview.ownedServers.length > 0;
  const problems = [...(errors['servers'] ?? []), ...(errors['account'] ?? [])];
  const content = html`<h1>Account</h1>
<div class="card">
<h2>Delete account</h2>
${problems.length ? html`<div class="error" role="alert">${problems.join(' ')}</div>` : ''}
<p>Deleting your account cannot be undone. It:</p>
<ul>
<li>signs you out everywhere and frees your username;</li>
<li>deletes ${count(preview.apps, 'app', 'apps')} you own, with their bots;</li>
<li>ends the access of ${count(preview.authorizedApps, 'app', 'apps')} you authorized, and every token they hold;</li>
<li>removes you from ${count(preview.memberships, 'server', 'servers')}.</li>
</ul>
<p>Your messages stay, shown as by “Deleted account”.</p>
${
  owns
    ? html`<p class="notice">You own ${count(preview.ownedServers.length, 'server', 'servers')}: transfer or delete ${preview.ownedServers.length === 1 ? 'it' : 'them'} first.</p>
<ul>${preview.ownedServers.map((s) => html`<li><a href="/servers/${s.id}/settings">${s.name}</a></li>`)}</ul>`
    : html`<form method="post" action="/settings/account/delete"${preview.passkey ? html` data-passkey-ceremony="get" data-passkey-optional data-options="/settings/account/delete/passkey/options"` : ''}>
${csrfField(ctx.csrfToken)}
<input type="text" name="username" value="${ctx.viewer.username}" autocomplete="username" hidden>
${field({ name: 'password', label: 'Your password', type: 'password', autocomplete: 'current-password', required: true, hint: 'To confirm it is you.' }, errors)}
${preview.secondFactor ? field({ name: 'code', label: 'Authentication code', type: 'text', autocomplete: 'one-time-code', required: !preview.passkey, hint: preview.passkey ? 'A code from your authenticator app or a recovery code; or leave it empty and use a passkey.' : 'The 6-digit code from your authenticator app, or a recovery code.', extra: html` autocapitalize="none" spellcheck="false"` }, errors) : ''}
${preview.passkey ? passkeyPart(errors) : ''}
<div class="actions"><button type="submit" class="danger">Delete my account</button>${preview.passkey ? html` <button type="submit" class="danger" data-passkey hidden>Delete with a passkey</button>` : ''}</div>
</form>${preview.passkey ? html`
<script src="${PASSKEYS_JS_PATH}" defer></script>` : ''}`
}
</div>`;
  return layout({ title: 'Account', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body: settingsLayout('account', content) });
}

import { field, type FieldMessages } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { PASSKEYS_JS_PATH } from '../../web/assets.js';
import type { PasskeyView } from './passkeys.js';

function day(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)}</time>`;
}

export interface PasskeysSectionInput {
  csrfToken: string;
  passkeys: PasskeyView[];
  errors: FieldMessages;
  /** The name typed, when a refused registration is shown again. */
  name?: string | undefined;
  /** The passkey whose removal was refused: its form shows the message. */
  removing?: string | undefined;
}

/**
 * Settings → Security, Passkeys (issue #38 §4): the person's passkeys with when each was added and
 * last used, a form to add one (passkeys.js runs the browser's ceremony and fills `credential`),
 * and a remove form per passkey asking for the password again.
 */
export function passkeysSection(input: PasskeysSectionInput): SafeHtml {
  const addErrors: FieldMessages = input.removing === undefined ? input.errors : {};
  const credentialErrors = addErrors['credential'] ?? [];
  const list =
    input.passkeys.length === 0
      ? html`<p class="muted">No passkeys yet. A passkey signs you in with your device's screen lock or a security key, without a password.</p>`
      : html`<ul class="plain passkeys">${input.passkeys.map((p, i) => {
          const messages = input.removing === p.id ? Object.values(input.errors).flat() : [];
          const id = `passkey-password-${i}`;
          return html`<li class="passkey" data-passkey="${p.id}"><strong>${p.name}</strong>
<span class="muted small">· added ${day(p.createdAt)} · ${p.lastUsedAt === null ? 'never used' : html`last used ${day(p.lastUsedAt)}`}</span>
<details${input.removing === p.id ? html` open` : ''}><summary>Remove “${p.name}”</summary>
<form method="post" action="/settings/security/passkeys/remove">
${csrfField(input.csrfToken)}
<input type="hidden" name="passkey" value="${p.id}">
<label for="${id}">Your password, to confirm</label>
<input id="${id}" name="password" type="password" autocomplete="current-password" required${messages.length ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
${messages.length ? html`<div class="error" id="${id}-error" role="alert">${messages.join(' ')}</div>` : ''}
<div class="actions"><button type="submit" class="danger">Remove passkey</button></div>
</form></details></li>`;
        })}</ul>`;
  return html`<div class="card" id="passkeys">
<h2>Passkeys</h2>
${list}
<form method="post" action="/settings/security/passkeys" class="passkey-form" data-passkey-ceremony="create" data-options="/settings/security/passkeys/options">
${csrfField(input.csrfToken)}
<input type="hidden" name="credential" value="">
${field({ name: 'name', label: 'Name for a new passkey', type: 'text', value: input.name, autocomplete: 'off', required: true, maxlength: 64, hint: 'For example “Laptop” or “Phone”.' }, addErrors)}
<div class="error" role="alert" data-passkey-error${credentialErrors.length ? '' : html` hidden`}>${credentialErrors.join(' ')}</div>
<div class="actions"><button type="submit">Add a passkey</button></div>
</form>
</div>
<script src="${PASSKEYS_JS_PATH}" defer></script>`;
}

/**
 * "Sign in with a passkey" on the sign-in page (issue #38 §4): hidden until passkeys.js finds
 * WebAuthn in the browser, then it asks the authenticator for a discoverable passkey.
 */
export function passkeySignInForm(csrfToken: string, next: string): SafeHtml {
  return html`<form method="post" action="/login/passkey" class="passkey-form" data-passkey-ceremony="get" data-options="/login/passkey/options" hidden>
${csrfField(csrfToken)}
<input type="hidden" name="next" value="${next}">
<input type="hidden" name="credential" value="">
<div class="error" role="alert" data-passkey-error hidden></div>
<p class="small">Or sign in without a password, with a passkey on this device or a security key.</p>
<div class="actions"><button type="submit" class="secondary">Use a passkey</button></div>
</form>
<script src="${PASSKEYS_JS_PATH}" defer></script>`;
}

/** "Use a passkey instead" on the second sign-in step (issue #38 §4), hidden until passkeys.js finds WebAuthn. */
export function passkeySecondFactorForm(csrfToken: string, next: string, label: string): SafeHtml {
  return html`<form method="post" action="/login/second-factor/passkey" class="passkey-form" data-passkey-ceremony="get" data-options="/login/second-factor/passkey/options" hidden>
${csrfField(csrfToken)}
<input type="hidden" name="next" value="${next}">
<input type="hidden" name="credential" value="">
<div class="error" role="alert" data-passkey-error hidden></div>
<div class="actions"><button type="submit" class="secondary">${label}</button></div>
</form>
<script src="${PASSKEYS_JS_PATH}" defer></script>`;
}

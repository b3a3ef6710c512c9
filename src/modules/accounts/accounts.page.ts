import type { ErrorTree, FieldError } from '../../core/errors.js';
import { html, type SafeHtml } from '../../web/html.js';
import { field, settingsLayout, type FieldMessages, type PageCtx } from '../../web/components.js';
import { csrfField, layout } from '../../web/layout.js';
import { APP_JS_PATH } from '../../web/assets.js';
import { imageUploadForm } from '../resources/image-upload.page.js';
import { parseStoredImage } from '../resources/uploaded-images.js';
import { passkeySignInForm } from './passkeys.page.js';
import { DISPLAY_NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USERNAME_MAX_LENGTH, USERNAME_MIN_LENGTH } from '../directory/people.js';

/** Messages per form field, from a 50035 error tree. */
export function fieldMessages(tree: ErrorTree | undefined): FieldMessages {
  const out: FieldMessages = {};
  if (!tree) return out;
  for (const [field, node] of Object.entries(tree)) {
    if (Array.isArray(node)) continue;
    const list = node['_errors'];
    if (Array.isArray(list)) out[field] = (list as FieldError[]).map((e) => e.message);
  }
  return out;
}

const USERNAME_EXTRA = html` autocapitalize="none" spellcheck="false"`;

/** `path?next=…` when `next` leads somewhere other than home, so links between forms keep it. */
function withNext(path: string, next: string): string {
  return next === '/' ? path : `${path}?next=${encodeURIComponent(next)}`;
}

function otherErrors(errors: FieldMessages, known: readonly string[]): SafeHtml {
  const rest = Object.entries(errors).filter(([field]) => !known.includes(field));
  return html`${rest.map(([, messages]) => html`<div class="error" role="alert">${messages.join(' ')}</div>`)}`;
}

export interface RegisterPageInput {
  ctx: PageCtx;
  next: string;
  values: { username?: string | undefined; name?: string | undefined; email?: string | undefined };
  errors: FieldMessages;
  /** Issue #39 (GATEHOUSE_SIGN_UPS): who may sign up here, said when sign-ups are not open; no form when not allowed. */
  signUps?: { allowed: boolean; message: string | null } | undefined;
  /** An operator's sign-up link token, carried to the form's post. */
  token?: string | undefined;
}

/** Sign up: username, display name, optional e-mail, password. Never echoes the password. */
export function registerPage(input: RegisterPageInput): string {
  const { ctx, values, errors, next } = input;
  const viewer = ctx.viewer;
  const rule = input.signUps;
  if (rule && !rule.allowed) {
    const closed = html`<div class="card">
<h1>Create your account</h1>
<p class="notice" role="status">${rule.message ?? ''}</p>
</div>
<p class="muted">Already have an account? <a href="${withNext('/login', next)}">Sign in</a></p>`;
    return layout({ title: 'Create account', serviceName: ctx.serviceName, viewer, csrfToken: ctx.csrfToken, body: closed, width: 'narrow' });
  }
  const body = html`<div class="card">
<h1>Create your account</h1>
${rule?.message ? html`<p class="notice">${rule.message}</p>` : ''}
${viewer ? html`<p class="notice">You are signed in as <strong>${viewer.name}</strong> (@${viewer.username}). Creating an account signs you in to the new one instead.</p>` : ''}
${Object.keys(errors).length ? html`<div class="error" role="alert">Please correct the fields marked below.</div>` : ''}
<form method="post" action="/register">
${csrfField(ctx.csrfToken)}
<input type="hidden" name="next" value="${next}">
${input.token ? html`<input type="hidden" name="token" value="${input.token}">` : ''}
${field(
  {
    name: 'username',
    label: 'Username',
    type: 'text',
    value: values.username,
    autocomplete: 'username',
    required: true,
    minlength: USERNAME_MIN_LENGTH,
    maxlength: USERNAME_MAX_LENGTH,
    hint: `${USERNAME_MIN_LENGTH}–${USERNAME_MAX_LENGTH} characters: letters, digits, underscores (_) and periods (.). Others find you by it; it is unique regardless of upper or lower case.`,
    extra: USERNAME_EXTRA,
  },
  errors,
)}
${field({ name: 'name', label: 'Display name', type: 'text', value: values.name, autocomplete: 'nickname', maxlength: DISPLAY_NAME_MAX_LENGTH, hint: `Shown next to your messages; up to ${DISPLAY_NAME_MAX_LENGTH} characters. Leave empty to use your username.` }, errors)}
${field({ name: 'email', label: 'E-mail (optional)', type: 'email', value: values.email, autocomplete: 'email', hint: 'Apps you allow to see your e-mail address receive it.' }, errors)}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', required: true, minlength: PASSWORD_MIN_LENGTH, maxlength: PASSWORD_MAX_LENGTH, hint: `At least ${PASSWORD_MIN_LENGTH} characters.` }, errors)}
${otherErrors(errors, ['username', 'name', 'email', 'password'])}
<div class="actions"><button type="submit">Create account</button></div>
</form>
</div>
<p class="muted">Already have an account? <a href="${withNext('/login', next)}">Sign in</a></p>`;
  return layout({ title: 'Create account', serviceName: ctx.serviceName, viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

export interface LoginPageInput {
  ctx: PageCtx;
  next: string;
  username?: string | undefined;
  /** One message for the whole form (never which of username and password was wrong). */
  error?: string | undefined;
  /** The app whose authorization link led here (issue #24): named so the person knows who asks. */
  askingApp?: string | undefined;
}

/**
 * Sign in. When someone is already signed in it says so, offers to continue as them, and still
 * lets another person sign in (the consent screen's "switch account" lands here).
 */
export function loginPage(input: LoginPageInput): string {
  const { ctx, next, error } = input;
  const viewer = ctx.viewer;
  const body = html`<div class="card">
<h1>Sign in</h1>
${input.askingApp ? html`<p class="asking-app"><strong>${input.askingApp}</strong> wants to access your ${ctx.serviceName} account. Sign in to see what it asks for; nothing is shared until you allow it.</p>` : ''}
${
  viewer
    ? html`<div class="notice">You are signed in as <strong>${viewer.name}</strong> (@${viewer.username}).
<a href="${next}">Continue as @${viewer.username}</a>, or sign in below as someone else.</div>`
    : ''
}
${error ? html`<div class="error" role="alert" id="login-error">${error}</div>` : ''}
<form method="post" action="/login">
${csrfField(ctx.csrfToken)}
<input type="hidden" name="next" value="${next}">
${field({ name: 'username', label: 'Username', type: 'text', value: input.username, autocomplete: 'username', required: true, extra: html`${USERNAME_EXTRA} autofocus` }, {})}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true }, {})}
<div class="actions"><button type="submit">Sign in</button></div>
</form>
<p class="small"><a href="/forgot-password">Forgot password?</a></p>
${passkeySignInForm(ctx.csrfToken, next)}
</div>
<p class="muted">New here? <a href="${withNext('/register', next)}">Create an account</a></p>`;
  return layout({ title: 'Sign in', serviceName: ctx.serviceName, viewer, csrfToken: ctx.csrfToken, body, width: 'narrow' });
}

export interface ProfilePageInput {
  ctx: PageCtx;
  person: { username: string; name: string; email: string | null; emailVerified: boolean; avatarUrl: string | null };
  /** What was submitted, when re-rendering after an error. */
  values?: { name?: string | undefined; email?: string | undefined; avatarUrl?: string | undefined } | undefined;
  errors: FieldMessages;
  saved?: boolean;
  /** Issue #38 §2: the new address waiting for its verification link, if any. */
  pendingEmail?: string | null | undefined;
  /** Whether this server sends e-mail (without it, the page says to ask the operator). */
  mail?: boolean | undefined;
  /** After "Send the link again": where it went, or why not. */
  resent?: string | undefined;
  /** Issue #42 §3: why the avatar image was refused. */
  imageError?: string | undefined;
}

/** Issue #38 §2: the address's state, and the way to a new link while it is not verified. */
function emailState(ctx: PageCtx, input: ProfilePageInput): SafeHtml {
  const { person } = input;
  const waiting = input.pendingEmail ?? (person.email && !person.emailVerified ? person.email : null);
  const state = person.email
    ? html`<p id="email-state">E-mail: <strong>${person.email}</strong> — ${person.emailVerified ? html`<span class="badge">verified</span>` : html`<span class="badge">not verified</span>`}</p>`
    : '';
  const pending = input.pendingEmail
    ? html`<p id="email-pending">Waiting for verification: <strong>${input.pendingEmail}</strong>. Your address changes once you open the link we mailed there.</p>`
    : '';
  if (input.mail === false) {
    return html`${state}${waiting ? html`<p class="notice" id="no-mail">This ${ctx.serviceName} server sends no e-mail, so addresses cannot be verified by link. Ask its operator to verify yours.</p>` : ''}`;
  }
  const resend = waiting
    ? html`<form method="post" action="/settings/email/verify">${csrfField(ctx.csrfToken)}<button type="submit" class="secondary">Send the verification link again</button></form>`
    : '';
  return html`${state}${pending}${input.resent ? html`<p class="notice" role="status" id="email-resent">${input.resent}</p>` : ''}${resend}`;
}

export function profilePage(input: ProfilePageInput): string {
  const { ctx, person, errors } = input;
  // An uploaded avatar (issue #42 §3) is no URL to edit: the field stays empty and keeps it.
  const uploaded = parseStoredImage(person.avatarUrl) !== undefined;
  const values = input.values ?? { name: person.name, email: person.email ?? '', avatarUrl: uploaded ? '' : (person.avatarUrl ?? '') };
  const avatar = person.avatarUrl
    ? html`<img class="avatar" src="${person.avatarUrl}" alt="" width="40" height="40">`
    : html`<span class="avatar" aria-hidden="true">${([...person.name][0] ?? '?').toUpperCase()}</span>`;
  const content = html`<h1>Profile</h1>
${input.saved ? html`<p class="notice" role="status">Your profile has been saved.</p>` : ''}
${Object.keys(errors).length ? html`<div class="error" role="alert">Nothing was saved. Please correct the fields marked below.</div>` : ''}
<div class="card">
<div class="message">${avatar}<div><strong>${person.name}</strong><div class="muted small">@${person.username}</div></div></div>
${emailState(ctx, input)}
<form method="post" action="/settings/profile">
${csrfField(ctx.csrfToken)}
${field({ name: 'name', label: 'Display name', type: 'text', value: values.name, autocomplete: 'nickname', maxlength: DISPLAY_NAME_MAX_LENGTH, hint: `Up to ${DISPLAY_NAME_MAX_LENGTH} characters; empty means your username.` }, errors)}
${field({ name: 'avatarUrl', label: 'Avatar URL', type: 'url', value: values.avatarUrl, autocomplete: 'photo', hint: uploaded ? 'Or an https:// link to a square image instead of the uploaded one. Leave empty to keep it.' : 'An https:// link to a square image, or upload one below. Leave empty for none.' }, errors)}
${field(
  {
    name: 'email',
    label: 'E-mail',
    type: 'email',
    value: values.email,
    autocomplete: 'email',
    hint: `Optional. Apps you allow to see your e-mail address receive it${person.email && !person.emailVerified ? ', marked as not verified' : ''}.`,
  },
  errors,
)}
${otherErrors(errors, ['name', 'avatarUrl', 'email'])}
<div class="actions"><button type="submit">Save profile</button></div>
</form>
</div>
<div class="card" id="avatar">
${imageUploadForm({ action: '/settings/avatar', csrfToken: ctx.csrfToken, current: person.avatarUrl, label: 'Avatar', error: input.imageError })}
</div>
<p class="muted small">Your username, <strong>@${person.username}</strong>, cannot be changed.</p>`;
  return layout({ title: 'Profile', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body: settingsLayout('profile', content), scripts: [APP_JS_PATH] });
}

export interface PasswordPageInput {
  ctx: PageCtx;
  errors: FieldMessages;
  /** Set after a successful change: how many other sessions were signed out. */
  changed?: { endedSessions: number } | undefined;
}

export function passwordPage(input: PasswordPageInput): string {
  const { ctx, errors, changed } = input;
  const content = html`<h1>Password</h1>
${
  changed
    ? html`<p class="notice" role="status">Your password has been changed.${
        changed.endedSessions > 0 ? ` ${changed.endedSessions === 1 ? 'One other session was' : `${changed.endedSessions} other sessions were`} signed out.` : ''
      }</p>`
    : ''
}
${Object.keys(errors).length ? html`<div class="error" role="alert">Your password was not changed. Please correct the fields marked below.</div>` : ''}
<div class="card">
<form method="post" action="/settings/password">
${csrfField(ctx.csrfToken)}
<input type="text" name="username" value="${ctx.viewer?.username ?? ''}" autocomplete="username" hidden>
${field({ name: 'currentPassword', label: 'Current password', type: 'password', autocomplete: 'current-password', required: true }, errors)}
${field({ name: 'newPassword', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, minlength: PASSWORD_MIN_LENGTH, maxlength: PASSWORD_MAX_LENGTH, hint: `At least ${PASSWORD_MIN_LENGTH} characters.` }, errors)}
${field({ name: 'confirmPassword', label: 'Confirm new password', type: 'password', autocomplete: 'new-password', required: true }, errors)}
${otherErrors(errors, ['currentPassword', 'newPassword', 'confirmPassword'])}
<div class="actions"><button type="submit">Change password</button></div>
</form>
</div>
<p class="muted small">Changing your password signs you out everywhere else.</p>`;
  return layout({ title: 'Password', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body: settingsLayout('password', content) });
}

import { AccessError, ApiError, type ErrorTree, type FieldError } from '../core/errors.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, layout, type PageInput, type Viewer } from './layout.js';

/**
 * The pieces pages share (DESIGN §2: pages render what they are given). Each page module builds
 * its screens from these rather than copying them, so a form error or a notice looks and reads
 * the same everywhere (and is announced the same way to screen readers).
 */

/** What every page needs from the request (http/pages.ts `pageContext`). */
export interface PageCtx {
  viewer: Viewer | undefined;
  csrfToken: string;
  serviceName: string;
  /** The request's path, for the top bar's aria-current (http/pages.ts pageContext). */
  path?: string | undefined;
}

/** A whole page in the site's layout, for `ctx`'s viewer. */
export function page(ctx: PageCtx, title: string, body: SafeHtml, options: Pick<PageInput, 'width' | 'scripts' | 'skipLinks'> = {}): string {
  return layout({ title, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, path: ctx.path, ...options });
}

/** A page context on a signed-in route (http/pages.ts `signedInPages`). */
export type SignedInCtx = PageCtx & { viewer: Viewer };

/** Values typed into a form that failed, so it comes back filled in. */
export type FormValues = Record<string, string | string[] | undefined>;

/** A refused form: which form (so the message shows beside it) and why. */
export interface FormError {
  form: string;
  message: string;
}

/** One typed-in value of a refused form ('' when absent or a list). */
export function formValue(values: FormValues | undefined, name: string): string {
  const v = values?.[name];
  return typeof v === 'string' ? v : '';
}

/** A list-valued field (checkboxes) of a refused form. */
export function formList(values: FormValues | undefined, name: string): string[] {
  const v = values?.[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** The refusal message of `form`, when that is the form that was refused (focused on load by a11y.js). */
export function formError(error: FormError | undefined, form: string): SafeHtml {
  return error && error.form === form ? html`<div class="error" role="alert" tabindex="-1" data-error-summary>${error.message}</div>` : html``;
}

/** A confirmation after post/redirect/get (announced politely: role=status). */
export function notice(text: string | undefined): SafeHtml {
  return text ? html`<div class="notice" role="status">${text}</div>` : html``;
}

interface FormCardInput {
  title: string;
  /** The form's name, for its refusal message (FormError.form). */
  form: string;
  action: string;
  submit: string;
  /** Below the form, inside the card. */
  after?: SafeHtml;
}

/** A card with a heading and one POST form (CSRF field, refusal message, submit button). */
export function formCard(ctx: PageCtx, error: FormError | undefined, card: FormCardInput, fields: SafeHtml): SafeHtml {
  return html`<div class="card">
<h2>${card.title}</h2>
${formError(error, card.form)}
<form method="post" action="${card.action}">
${csrfField(ctx.csrfToken)}
${fields}
<div class="actions"><button type="submit">${card.submit}</button></div>
</form>
${card.after ?? ''}
</div>`;
}

/** A form whose one button does what cannot be undone (a danger button), with Cancel when `cancel` is given. */
export function dangerForm(csrfToken: string, action: string, button: string, cancel?: string): SafeHtml {
  return html`<form method="post" action="${action}">
${csrfField(csrfToken)}
<div class="actions"><button type="submit" class="danger">${button}</button>${cancel === undefined ? '' : html`<a class="button secondary" href="${cancel}">Cancel</a>`}</div>
</form>`;
}

/** An avatar image, or the name's first letter in a circle when there is none. */
export function avatar(name: string, url: string | null): SafeHtml {
  if (url) return html`<img class="avatar" src="${url}" alt="" width="40" height="40">`;
  const initial = [...name.trim()][0]?.toUpperCase() ?? '?';
  return html`<span class="avatar" aria-hidden="true">${initial}</span>`;
}

/**
 * What a form shows when a service refuses its input: the first field message of a 50035, else
 * the error's own message. Services speak in API errors so the API, the CLI and pages share them.
 */
export function formErrorMessage(error: ApiError): string {
  return (error.errors && firstFieldError(error.errors)?.message) || error.message;
}

function firstFieldError(tree: ErrorTree): FieldError | undefined {
  for (const [key, value] of Object.entries(tree)) {
    if (key === '_errors' && Array.isArray(value)) return value[0];
    if (!Array.isArray(value)) {
      const found = firstFieldError(value);
      if (found) return found;
    }
  }
  return undefined;
}

/** How a route re-renders a refused form: the same screen, its message beside the form, nothing changed. */
export interface Refusal {
  error: FormError;
  values: FormValues;
  status: number;
}

/**
 * A service's refusal of `form` as the page shows it. Anything else goes to the one error handler:
 * an AccessError (the actor may not act here at all: an error page, not a form message), and
 * anything that is not a 4xx API error (a bug, an outage).
 */
export function refused(error: unknown, form: string, values: FormValues = {}): Refusal {
  if (!(error instanceof ApiError) || error instanceof AccessError || error.status >= 500) throw error;
  return { error: { form, message: formErrorMessage(error) }, values, status: error.status };
}

/** Messages per form field, from a 50035 error tree. */
export type FieldMessages = Record<string, string[]>;

interface InputSpec {
  name: string;
  label: string;
  type: 'text' | 'password' | 'email' | 'url';
  value?: string | undefined;
  autocomplete: string;
  required?: boolean;
  minlength?: number;
  maxlength?: number;
  hint?: string;
  extra?: SafeHtml;
}

/** A labelled input with its hint and errors, linked for screen readers (aria-describedby). */
export function field(spec: InputSpec, errors: FieldMessages): SafeHtml {
  const messages = errors[spec.name] ?? [];
  const ids = [spec.hint ? `${spec.name}-hint` : '', messages.length ? `${spec.name}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${spec.name}">${spec.label}</label>
<input id="${spec.name}" name="${spec.name}" type="${spec.type}" autocomplete="${spec.autocomplete}"${spec.value !== undefined && spec.type !== 'password' ? html` value="${spec.value}"` : ''}${spec.required ? html` required` : ''}${spec.minlength !== undefined ? html` minlength="${spec.minlength}"` : ''}${spec.maxlength !== undefined ? html` maxlength="${spec.maxlength}"` : ''}${ids ? html` aria-describedby="${ids}"` : ''}${messages.length ? html` aria-invalid="true"` : ''}${spec.extra ?? ''}>
${spec.hint ? html`<p class="hint" id="${spec.name}-hint">${spec.hint}</p>` : ''}
${messages.length ? html`<div class="error" id="${spec.name}-error" role="alert">${messages.map((m, i) => html`${i > 0 ? html`<br>` : ''}${m}`)}</div>` : ''}`;
}

/**
 * The account settings sections; "authorized-apps" is built by the OAuth module (Settings →
 * Authorized apps), "apps" by the applications module (Settings → Installed apps, user installs).
 */
export type AccountSettingsSection = 'profile' | 'account' | 'password' | 'sessions' | 'authorized-apps' | 'apps' | 'security';

const SETTINGS_LINKS: ReadonlyArray<{ section: AccountSettingsSection; href: string; label: string }> = [
  { section: 'profile', href: '/settings/profile', label: 'Profile' },
  { section: 'password', href: '/settings/password', label: 'Password' },
  { section: 'sessions', href: '/settings/sessions', label: 'Sessions' },
  { section: 'authorized-apps', href: '/settings/authorized-apps', label: 'Authorized apps' },
  { section: 'apps', href: '/settings/apps', label: 'Installed apps' },
  { section: 'security', href: '/settings/security', label: 'Security' },
  { section: 'account', href: '/settings/account', label: 'Account' },
];

/** The settings sidebar and the section's content beside it; for every /settings/* page. */
export function settingsLayout(active: AccountSettingsSection, content: SafeHtml): SafeHtml {
  return html`<div class="layout">
<nav class="sidebar" aria-label="Settings">
${SETTINGS_LINKS.map((l) => html`<a href="${l.href}"${l.section === active ? html` class="active" aria-current="page"` : ''}>${l.label}</a>`)}
</nav>
<div>${content}</div>
</div>`;
}

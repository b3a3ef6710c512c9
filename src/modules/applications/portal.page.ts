import type { ErrorTree, FieldError } from '../../core/errors.js';
import { APP_JS_PATH } from '../../web/assets.js';
import { html, type SafeHtml } from '../../web/html.js';
import type { PageCtx } from '../../web/components.js';
import { csrfField, layout } from '../../web/layout.js';
import { APP_NAME_MAX, APP_NAME_MIN, type Application } from './applications.js';

/** Messages per form field. */
export type FieldMessages = Record<string, string[]>;

/**
 * Messages per top-level field from a 50035 tree; nested ones (`redirectUris.3`) are gathered
 * under their top-level field, since the portal edits such lists in one textarea.
 */
export function fieldMessages(tree: ErrorTree | undefined): FieldMessages {
  const out: FieldMessages = {};
  if (!tree) return out;
  const collect = (node: ErrorTree, into: string[]) => {
    for (const [key, child] of Object.entries(node)) {
      if (Array.isArray(child)) {
        if (key === '_errors') into.push(...(child as FieldError[]).map((e) => e.message));
      } else {
        collect(child, into);
      }
    }
  };
  for (const [field, node] of Object.entries(tree)) {
    if (Array.isArray(node)) continue;
    const messages: string[] = [];
    collect(node, messages);
    if (messages.length) out[field] = messages;
  }
  return out;
}

export function appPath(app: Pick<Application, 'id'>, rest = ''): string {
  return `/developers/applications/${app.id}${rest}`;
}

export function errorBlock(id: string, messages: readonly string[] | undefined): SafeHtml {
  if (!messages || messages.length === 0) return html``;
  return html`<div class="error" id="${id}" role="alert">${messages.map((m, i) => html`${i > 0 ? html`<br>` : ''}${m}`)}</div>`;
}

export function describedBy(...ids: (string | false | undefined)[]): SafeHtml {
  const list = ids.filter((id): id is string => typeof id === 'string' && id.length > 0);
  return list.length ? html` aria-describedby="${list.join(' ')}"` : html``;
}

export function invalid(messages: readonly string[] | undefined): SafeHtml {
  return messages && messages.length ? html` aria-invalid="true"` : html``;
}

/** A readonly field with a copy button that appears only when script and clipboard are there. */
export function copyField(id: string, label: string, value: string, hint?: SafeHtml | string, rows = 1): SafeHtml {
  const control = rows > 1
    ? html`<textarea id="${id}" readonly data-select rows="${rows}" spellcheck="false" class="mono"${describedBy(hint ? `${id}-hint` : undefined)}>${value}</textarea>`
    : html`<input id="${id}" type="text" readonly data-select value="${value}" spellcheck="false" class="mono"${describedBy(hint ? `${id}-hint` : undefined)}>`;
  return html`<label for="${id}">${label}</label>
<div class="copyrow">${control}<button type="button" class="secondary" data-copy="${id}" hidden>Copy</button></div>
${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}`;
}

export function clientTypeName(app: Pick<Application, 'confidential'>): string {
  return app.confidential ? 'Confidential' : 'Public';
}

export function page(ctx: PageCtx, title: string, body: SafeHtml): string {
  return layout({ title, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body, scripts: [APP_JS_PATH] });
}

/** The application's own navigation, beside its pages (stacks above them on a phone). */
export function withAppNav(app: Application, active: 'settings' | 'url-generator' | 'webhooks' | 'delete', content: SafeHtml): SafeHtml {
  const link = (href: string, label: string, key: typeof active) =>
    html`<a href="${href}"${key === active ? html` class="active" aria-current="page"` : ''}>${label}</a>`;
  return html`<p class="small"><a href="/developers/applications">← All applications</a></p>
<div class="layout">
<nav class="sidebar card" aria-label="${app.name}">
${link(appPath(app), 'General and OAuth2', 'settings')}
${link(appPath(app, '/oauth2/url-generator'), 'URL generator', 'url-generator')}
${link(appPath(app, '/webhooks'), 'Interactions and events', 'webhooks')}
${link(appPath(app, '/delete'), 'Delete application', 'delete')}
</nav>
<div>${content}</div>
</div>`;
}

export const CLIENT_TYPE_HELP = {
  confidential:
    'For apps with a server that can keep a secret (a website with a back end). The app gets a client secret and signs in to the token endpoint with it.',
  public:
    'For apps that cannot keep a secret: mobile, desktop and command-line apps, and single-page web apps. There is no client secret; every authorization must use PKCE (S256) instead.',
} as const;

export interface ListPageInput {
  ctx: PageCtx;
  apps: readonly Application[];
  values: { name?: string | undefined; clientType?: 'confidential' | 'public' | undefined };
  errors: FieldMessages;
  deleted?: boolean;
}

/** /developers/applications: the person's applications and the "New application" form. */
export function applicationsListPage(input: ListPageInput): string {
  const { ctx, apps, values, errors } = input;
  const clientType = values.clientType ?? 'confidential';
  const radio = (value: 'confidential' | 'public', label: string) =>
    html`<label class="check"><input type="radio" name="clientType" value="${value}"${clientType === value ? html` checked` : ''} aria-describedby="clientType-${value}-hint"><span><strong>${label}</strong><br><span class="hint" id="clientType-${value}-hint">${CLIENT_TYPE_HELP[value]}</span></span></label>`;
  const known = ['name', 'clientType'];
  const other = Object.entries(errors).filter(([key]) => !known.includes(key));
  const body = html`<h1>Applications</h1>
${input.deleted ? html`<p class="notice" role="status">The application was deleted. Its tokens no longer work.</p>` : ''}
<div class="card">
<h2>Your applications</h2>
${
  apps.length === 0
    ? html`<p class="muted">You have no applications yet. Create one below to let people sign in to it with their ${ctx.serviceName} account.</p>`
    : html`<ul class="plain">${apps.map(
        (app) =>
          html`<li><a href="${appPath(app)}"><strong>${app.name}</strong></a> <span class="pill">${clientTypeName(app)}</span>${app.disabledAt !== null ? html` <span class="pill">Disabled by the operator</span>` : ''}<br><span class="muted small">Client ID <code>${app.id}</code></span></li>`,
      )}</ul>`
}
</div>
<div class="card">
<h2 id="new">New application</h2>
${errorBlock('create-error', other.flatMap(([, m]) => m))}
<form method="post" action="/developers/applications">
${csrfField(ctx.csrfToken)}
<label for="name">Name</label>
<input id="name" name="name" type="text" required minlength="${APP_NAME_MIN}" maxlength="${APP_NAME_MAX}" value="${values.name ?? ''}" autocomplete="off"${describedBy('name-hint', errors['name']?.length ? 'name-error' : undefined)}${invalid(errors['name'])}>
<p class="hint" id="name-hint">${APP_NAME_MIN}–${APP_NAME_MAX} characters. People see it when they authorize the app.</p>
${errorBlock('name-error', errors['name'])}
<fieldset class="card">
<legend>Client type</legend>
${radio('confidential', 'Confidential')}
${radio('public', 'Public')}
<p class="hint">The client type cannot be changed later.</p>
${errorBlock('clientType-error', errors['clientType'])}
</fieldset>
<div class="actions"><button type="submit">Create application</button></div>
</form>
</div>`;
  return page(ctx, 'Applications', body);
}

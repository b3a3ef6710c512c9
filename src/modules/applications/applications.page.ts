import type { ErrorTree, FieldError } from '../../core/errors.js';
import { APP_JS_PATH } from '../../web/assets.js';
import { html, type SafeHtml } from '../../web/html.js';
import type { PageCtx } from '../../web/components.js';
import { csrfField, layout } from '../../web/layout.js';
import { PERMISSION_LABELS, Permission, type PermissionName } from '../../core/permissions.js';
import { APP_DESCRIPTION_MAX, APP_ICON_URL_MAX, APP_NAME_MAX, APP_NAME_MIN, REDIRECT_URIS_MAX, type Application } from './applications.js';
import type { CommandView } from './bots.js';
import { openIdSection, type OpenIdSectionInput } from '../oidc/oidc.page.js';

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

function appPath(app: Pick<Application, 'id'>, rest = ''): string {
  return `/developers/applications/${app.id}${rest}`;
}

function errorBlock(id: string, messages: readonly string[] | undefined): SafeHtml {
  if (!messages || messages.length === 0) return html``;
  return html`<div class="error" id="${id}" role="alert">${messages.map((m, i) => html`${i > 0 ? html`<br>` : ''}${m}`)}</div>`;
}

function describedBy(...ids: (string | false | undefined)[]): SafeHtml {
  const list = ids.filter((id): id is string => typeof id === 'string' && id.length > 0);
  return list.length ? html` aria-describedby="${list.join(' ')}"` : html``;
}

function invalid(messages: readonly string[] | undefined): SafeHtml {
  return messages && messages.length ? html` aria-invalid="true"` : html``;
}

/** A readonly field with a copy button that appears only when script and clipboard are there. */
function copyField(id: string, label: string, value: string, hint?: SafeHtml | string, rows = 1): SafeHtml {
  const control = rows > 1
    ? html`<textarea id="${id}" readonly data-select rows="${rows}" spellcheck="false" class="mono"${describedBy(hint ? `${id}-hint` : undefined)}>${value}</textarea>`
    : html`<input id="${id}" type="text" readonly data-select value="${value}" spellcheck="false" class="mono"${describedBy(hint ? `${id}-hint` : undefined)}>`;
  return html`<label for="${id}">${label}</label>
<div class="copyrow">${control}<button type="button" class="secondary" data-copy="${id}" hidden>Copy</button></div>
${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}`;
}

function clientTypeName(app: Pick<Application, 'confidential'>): string {
  return app.confidential ? 'Confidential' : 'Public';
}

function page(ctx: PageCtx, title: string, body: SafeHtml): string {
  return layout({ title, serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, body, scripts: [APP_JS_PATH] });
}

/** The application's own navigation, beside its pages (stacks above them on a phone). */
function withAppNav(app: Application, active: 'settings' | 'url-generator' | 'delete', content: SafeHtml): SafeHtml {
  const link = (href: string, label: string, key: typeof active) =>
    html`<a href="${href}"${key === active ? html` class="active" aria-current="page"` : ''}>${label}</a>`;
  return html`<p class="small"><a href="/developers/applications">← All applications</a></p>
<div class="layout">
<nav class="sidebar card" aria-label="${app.name}">
${link(appPath(app), 'General and OAuth2', 'settings')}
${link(appPath(app, '/oauth2/url-generator'), 'URL generator', 'url-generator')}
${link(appPath(app, '/delete'), 'Delete application', 'delete')}
</nav>
<div>${content}</div>
</div>`;
}

const CLIENT_TYPE_HELP = {
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
          html`<li><a href="${appPath(app)}"><strong>${app.name}</strong></a> <span class="pill">${clientTypeName(app)}</span><br><span class="muted small">Client ID <code>${app.id}</code></span></li>`,
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

export interface DetailPageInput {
  ctx: PageCtx;
  app: Application;
  /** Values to show in the General form (the submitted ones after an error). */
  general?: { name?: string | undefined; description?: string | undefined; iconUrl?: string | undefined };
  generalErrors?: FieldMessages;
  /** The redirect URI textarea as submitted, after an error. */
  redirectUrisText?: string | undefined;
  oauthErrors?: FieldMessages;
  notice?: string | undefined;
  /** A client secret just issued: shown here once, never again. */
  newSecret?: string | undefined;
  /** The bot section: the bot account (when the app has one) and its commands. */
  bot?: BotSection | undefined;
  /** A bot token just issued: shown here once, never again. */
  newBotToken?: string | undefined;
  /** Issue #22: the OpenID Connect section (issuer, discovery URL, ID token algorithm, post-logout URIs). */
  openId?: OpenIdSectionInput | undefined;
}

/** What the app page shows about the app's bot. */
export interface BotSection {
  account: { id: string; username: string; name: string; avatarUrl: string | null } | undefined;
  commands: readonly CommandView[];
}

/** /developers/applications/:id — General and OAuth2 settings. */
export function applicationPage(input: DetailPageInput): string {
  const { ctx, app } = input;
  const general = input.general ?? {};
  const gErrors = input.generalErrors ?? {};
  const oErrors = input.oauthErrors ?? {};
  const name = general.name ?? app.name;
  const description = general.description ?? app.description;
  const iconUrl = general.iconUrl ?? app.iconUrl ?? '';
  const redirectText = input.redirectUrisText ?? app.redirectUris.join('\n');

  const secretBox = input.newSecret
    ? html`<div class="card" role="status" aria-labelledby="secret-title">
<h2 id="secret-title">Your new client secret</h2>
<p><strong>Copy it now: it is shown only this once.</strong> ${ctx.serviceName} keeps only a hash of it and cannot show it again. If you lose it, reset it to get a new one.</p>
${copyField('client-secret', 'Client secret', input.newSecret, 'Keep it on your server only: never in a mobile app, a browser or a repository.', 2)}
</div>`
    : html``;

  const secretSection = app.confidential
    ? html`<h3>Client secret</h3>
<p class="muted small">Hidden: only a hash is stored. Resetting it issues a new secret and the current one stops working at once.</p>
<p><a class="button secondary" href="${appPath(app, '/reset-secret')}">Reset secret…</a></p>`
    : html`<h3>Client secret</h3>
<p class="muted small">Public apps have no client secret. Every authorization request must carry a PKCE code_challenge with code_challenge_method=S256, and the token request the matching code_verifier.</p>`;

  const tokenBox = input.newBotToken
    ? html`<div class="card" role="status" aria-labelledby="bot-token-title">
<h2 id="bot-token-title">Your bot token</h2>
<p><strong>Copy it now: it is shown only this once.</strong> ${ctx.serviceName} keeps only a hash of it and cannot show it again. If you lose it, reset it to get a new one.</p>
${copyField('bot-token', 'Bot token', input.newBotToken, html`Send it as <code>Authorization: Bot &lt;token&gt;</code>. Anyone holding it acts as your bot: keep it on your server only.`, 2)}
</div>`
    : html``;

  const content = html`${input.notice ? html`<p class="notice" role="status">${input.notice}</p>` : ''}
${secretBox}
${tokenBox}
<div class="card">
<h2 id="general">General information</h2>
<form method="post" action="${appPath(app)}">
${csrfField(ctx.csrfToken)}
<label for="name">Name</label>
<input id="name" name="name" type="text" required minlength="${APP_NAME_MIN}" maxlength="${APP_NAME_MAX}" value="${name}" autocomplete="off"${describedBy('name-hint', gErrors['name']?.length ? 'name-error' : undefined)}${invalid(gErrors['name'])}>
<p class="hint" id="name-hint">${APP_NAME_MIN}–${APP_NAME_MAX} characters, shown on the consent screen.</p>
${errorBlock('name-error', gErrors['name'])}
<label for="description">Description</label>
<textarea id="description" name="description" maxlength="${APP_DESCRIPTION_MAX}"${describedBy('description-hint', gErrors['description']?.length ? 'description-error' : undefined)}${invalid(gErrors['description'])}>${description}</textarea>
<p class="hint" id="description-hint">Optional, up to ${APP_DESCRIPTION_MAX} characters.</p>
${errorBlock('description-error', gErrors['description'])}
<label for="iconUrl">Icon URL</label>
<input id="iconUrl" name="iconUrl" type="url" maxlength="${APP_ICON_URL_MAX}" value="${iconUrl}" placeholder="https://example.com/icon.png" autocomplete="off"${describedBy('iconUrl-hint', gErrors['iconUrl']?.length ? 'iconUrl-error' : undefined)}${invalid(gErrors['iconUrl'])}>
<p class="hint" id="iconUrl-hint">Optional. An https:// image, shown on the consent screen.</p>
${errorBlock('iconUrl-error', gErrors['iconUrl'])}
<div class="actions"><button type="submit">Save changes</button></div>
</form>
</div>
<div class="card">
<h2 id="oauth2">OAuth2</h2>
${copyField('client-id', 'Client ID', app.id)}
<h3>Client type</h3>
<p><span class="pill">${clientTypeName(app)}</span> ${app.confidential ? CLIENT_TYPE_HELP.confidential : CLIENT_TYPE_HELP.public}</p>
<p class="hint">The client type is fixed when the application is created. To change it, create a new application.</p>
${secretSection}
<h3>Redirect URIs</h3>
<form method="post" action="${appPath(app, '/oauth2')}">
${csrfField(ctx.csrfToken)}
<label for="redirectUris">Redirect URIs, one per line</label>
<textarea id="redirectUris" name="redirectUris" rows="5" spellcheck="false" autocapitalize="none" class="mono"${describedBy('redirectUris-hint', oErrors['redirectUris']?.length ? 'redirectUris-error' : undefined)}${invalid(oErrors['redirectUris'])}>${redirectText}</textarea>
<div class="hint" id="redirectUris-hint"><p class="hint">Up to ${REDIRECT_URIS_MAX}. An authorization request must name one of them exactly, character for character. Allowed:</p>
<ul class="hint">
<li><code>https://</code> URIs, such as <code>https://example.com/callback</code>;</li>
<li><code>http://127.0.0.1/…</code> and <code>http://[::1]/…</code> for apps listening on this device: any port is accepted at request time (not <code>localhost</code>);</li>
${app.confidential ? '' : html`<li>for this public app, a private-use scheme named after a domain you control, such as <code>com.example.app:/callback</code>.</li>`}
</ul>
<p class="hint">No fragments (#…) and no user names or passwords in them.</p></div>
${errorBlock('redirectUris-error', oErrors['redirectUris'])}
<div class="actions"><button type="submit">Save redirect URIs</button><a class="button secondary" href="${appPath(app, '/oauth2/url-generator')}">Open the URL generator</a></div>
</form>
</div>
${input.openId ? openIdSection(input.openId) : ''}
${botCard(ctx, app, input.bot)}`;
  return page(ctx, app.name, html`<h1>${app.name}</h1>${withAppNav(app, 'settings', content)}`);
}

function toggle(name: string, checked: boolean, label: string, help: string): SafeHtml {
  return html`<label class="check"><input type="checkbox" name="${name}" value="on"${checked ? html` checked` : ''} aria-describedby="${name}-hint"><span><strong>${label}</strong><br><span class="hint" id="${name}-hint">${help}</span></span></label>`;
}

/** The Bot section of the app page (issue #4 "Bots in the developer portal"). */
function botCard(ctx: PageCtx, app: Application, bot: BotSection | undefined): SafeHtml {
  const account = bot?.account;
  if (!account) {
    return html`<div class="card">
<h2 id="bot">Bot</h2>
<p>A bot is an account of its own that acts for your app: people add it to their servers from an install link, and your app signs in as it with a bot token. It takes this app's name and icon, and is marked as an app wherever it appears.</p>
<form method="post" action="${appPath(app, '/bot')}">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit">Add bot</button></div>
</form>
</div>`;
  }
  const commands = bot.commands;
  return html`<div class="card">
<h2 id="bot">Bot</h2>
<p><span class="badge">APP</span><strong>${account.name}</strong> <span class="muted">@${account.username}</span></p>
<p class="hint">The bot's name and icon follow the app's name and icon. Its user ID is <code>${account.id}</code>.</p>
<h3>Token</h3>
<p class="muted small">Hidden: only a hash is stored. Resetting it issues a new token and the current one stops working at once.</p>
<p><a class="button secondary" href="${appPath(app, '/bot/reset-token')}">Reset token…</a></p>
<h3>Installs</h3>
<form method="post" action="${appPath(app, '/bot/settings')}">
${csrfField(ctx.csrfToken)}
${toggle('botPublic', app.botPublic, 'Public bot', 'On: anyone with Manage server can add the bot to their server. Off: only you, the owner of this app, can.')}
${toggle('botRequireCodeGrant', app.botRequireCodeGrant, 'Require full OAuth2 authorization', 'On: an install link must also carry redirect_uri and response_type=code, and the install completes through the authorization code flow back to your app.')}
<div class="actions"><button type="submit">Save bot settings</button></div>
</form>
<h3 id="commands">Commands</h3>
${
  commands.length === 0
    ? html`<p class="muted small">No commands yet. Your bot registers them with <code>PUT /api/v1/applications/${app.id}/commands</code>.</p>`
    : html`<ul class="plain">${commands.map((c) => html`<li><code>/${c.name}</code> <span class="muted">${c.description}</span>${c.options.length ? html` <span class="pill">${c.options.length} option${c.options.length === 1 ? '' : 's'}</span>` : ''}</li>`)}</ul>
<p class="hint">Read-only here: your bot replaces the whole list with <code>PUT /api/v1/applications/${app.id}/commands</code>.</p>`
}
</div>`;
}

/** Confirmation before a bot token is replaced. */
export function resetBotTokenPage(input: { ctx: PageCtx; app: Application }): string {
  const { ctx, app } = input;
  const content = html`<div class="card">
<h2>Reset the bot token?</h2>
<p>A new bot token will be shown once. <strong>The current token stops working immediately</strong>: every request your bot makes with it is refused until it uses the new one.</p>
<form method="post" action="${appPath(app, '/bot/reset-token')}">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit" class="danger">Yes, reset the token</button><a class="button secondary" href="${appPath(app)}#bot">Cancel</a></div>
</form>
</div>`;
  return page(ctx, `Reset bot token · ${app.name}`, html`<h1>${app.name}</h1>${withAppNav(app, 'settings', content)}`);
}

/** Permissions in the order the picker lists them (Discord's bit order). */
const PICKER_PERMISSIONS = Object.keys(Permission) as PermissionName[];

/**
 * The URL generator's permission picker (issue #4): one checkbox per permission, by name, and the
 * resulting decimal string, which goes into the link as `permissions` with the bot scope.
 */
export function permissionPicker(selected: bigint): SafeHtml {
  return html`<fieldset class="card">
<legend>Bot permissions</legend>
<p class="hint">Used with the <code>bot</code> scope: what the bot asks for in the server it joins. The person installing it can grant only what they hold there, and never Administrator.</p>
<div class="grid2">
${PICKER_PERMISSIONS.map((name) => {
  const bit = Permission[name];
  return html`<label class="check"><input type="checkbox" name="permission" value="${name}"${(selected & bit) === bit ? html` checked` : ''}><span>${PERMISSION_LABELS[name]}</span></label>`;
})}
</div>
<label for="permissions-value">Permissions integer</label>
<input id="permissions-value" type="text" readonly data-select value="${selected.toString()}" class="mono" aria-describedby="permissions-value-hint">
<p class="hint" id="permissions-value-hint">The decimal string of the ticked permissions (Discord's bit positions), updated when you generate the URL.</p>
</fieldset>`;
}

/** Confirmation before a client secret is replaced. */
export function resetSecretPage(input: { ctx: PageCtx; app: Application }): string {
  const { ctx, app } = input;
  const content = html`<div class="card">
<h2>Reset the client secret?</h2>
<p>A new client secret will be shown once. <strong>The current secret stops working immediately</strong>: the app cannot exchange codes or refresh tokens until it uses the new one. Tokens already issued keep working.</p>
<form method="post" action="${appPath(app, '/reset-secret')}">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit" class="danger">Yes, reset the secret</button><a class="button secondary" href="${appPath(app)}">Cancel</a></div>
</form>
</div>`;
  return page(ctx, `Reset secret · ${app.name}`, html`<h1>${app.name}</h1>${withAppNav(app, 'settings', content)}`);
}

/** Confirmation before an application is deleted. */
export function deleteApplicationPage(input: { ctx: PageCtx; app: Application }): string {
  const { ctx, app } = input;
  const content = html`<div class="card">
<h2>Delete ${app.name}?</h2>
<p>This cannot be undone. Everyone who authorized the app loses the connection: all of its access and refresh tokens stop working at once, and its client ID and secret are gone.</p>
<form method="post" action="${appPath(app, '/delete')}">
${csrfField(ctx.csrfToken)}
<div class="actions"><button type="submit" class="danger">Delete application</button><a class="button secondary" href="${appPath(app)}">Cancel</a></div>
</form>
</div>`;
  return page(ctx, `Delete · ${app.name}`, html`<h1>${app.name}</h1>${withAppNav(app, 'delete', content)}`);
}

export interface ScopeChoice {
  name: string;
  description: string;
}

export interface UrlGeneratorPageInput {
  ctx: PageCtx;
  app: Application;
  scopes: readonly ScopeChoice[];
  selectedScopes: readonly string[];
  redirectUri: string | undefined;
  state: string;
  /** The generated link, when the selection is complete and valid. */
  link?: string | undefined;
  problems: readonly string[];
  /** True when the person submitted the form (problems are then shown). */
  submitted: boolean;
  /** Room for the bot issue: the bot permissions picker, rendered after the scopes. */
  extraFields?: SafeHtml;
  /** Offer "no redirect URI" for install links (bot, applications.commands) that need none. */
  installWithoutRedirect?: boolean;
}

/** /developers/applications/:id/oauth2/url-generator — a GET form that builds an authorization link. */
export function urlGeneratorPage(input: UrlGeneratorPageInput): string {
  const { ctx, app } = input;
  const selected = new Set(input.selectedScopes);
  const noRedirects = app.redirectUris.length === 0;
  const content = html`<div class="card">
<h2>OAuth2 URL generator</h2>
<p class="muted">Pick what your app asks for; copy the link and send people to it to start the authorization code flow.</p>
${
  noRedirects
    ? input.installWithoutRedirect
      ? html`<p class="hint">This application has no redirect URI yet: only a plain install link (bot, applications.commands) can be made. <a href="${appPath(app)}#oauth2">Add one</a> for the other scopes.</p>`
      : html`<p class="error" role="alert">This application has no redirect URI yet. <a href="${appPath(app)}#oauth2">Add one</a> first.</p>`
    : html``
}
<form method="get" action="${appPath(app, '/oauth2/url-generator')}">
<fieldset class="card">
<legend>Scopes</legend>
<div class="grid2">
${input.scopes.map(
  (scope) =>
    html`<label class="check"><input type="checkbox" name="scope" value="${scope.name}"${selected.has(scope.name) ? html` checked` : ''}><span><code>${scope.name}</code><br><span class="hint">${scope.description}</span></span></label>`,
)}
</div>
</fieldset>
${input.extraFields ?? ''}
<label for="redirect_uri">Redirect URI</label>
<select id="redirect_uri" name="redirect_uri"${noRedirects && !input.installWithoutRedirect ? html` disabled` : ''}>
${
  input.installWithoutRedirect
    ? html`<option value=""${input.redirectUri === undefined ? html` selected` : ''}>None: a plain install (bot and applications.commands only)</option>`
    : app.redirectUris.length > 1 && input.redirectUri === undefined
      ? html`<option value="">Choose one…</option>`
      : ''
}
${app.redirectUris.map((uri) => html`<option value="${uri}"${uri === input.redirectUri ? html` selected` : ''}>${uri}</option>`)}
</select>
<label for="state">State <span class="muted small">(optional)</span></label>
<input id="state" name="state" type="text" maxlength="500" value="${input.state}" autocomplete="off" aria-describedby="state-hint">
<p class="hint" id="state-hint">Usually your app generates a fresh random state for every request and checks it on the way back; put one here only to try the link.</p>
<div class="actions"><button type="submit">Generate URL</button></div>
</form>
</div>
${input.submitted && input.problems.length ? html`<div class="error" role="alert">${input.problems.map((p, i) => html`${i > 0 ? html`<br>` : ''}${p}`)}</div>` : ''}
${
  input.link
    ? html`<div class="card">
<h2>Generated URL</h2>
${copyField('generated-url', 'Authorization URL', input.link, undefined, 4)}
${
  app.confidential
    ? html`<p class="hint">Adding PKCE (code_challenge and code_challenge_method=S256) is recommended for confidential apps too.</p>`
    : html`<p class="notice">This is a public app: before sending people to this link, your app must append <code>&amp;code_challenge=…&amp;code_challenge_method=S256</code>, a fresh challenge for each request (BASE64URL(SHA256(code_verifier))), and send the <code>code_verifier</code> with the token request. Without it the request is refused.</p>`
}
</div>`
    : ''
}`;
  return page(ctx, `URL generator · ${app.name}`, html`<h1>${app.name}</h1>${withAppNav(app, 'url-generator', content)}`);
}

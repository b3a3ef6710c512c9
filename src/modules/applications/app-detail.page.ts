import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { openIdSection, type OpenIdSectionInput } from '../oidc/oidc.page.js';
import { resourceServersSection, type ResourceServersSectionInput } from '../resource-servers/resource-servers.page.js';
import { APP_DESCRIPTION_MAX, APP_ICON_URL_MAX, APP_NAME_MAX, APP_NAME_MIN, REDIRECT_URIS_MAX, type Application } from './applications.js';
import { commandAvailable, neededPermissions, type CommandView } from './bots.js';
import { permissionLabelList } from './installs.js';
import { appPath, CLIENT_TYPE_HELP, clientTypeName, copyField, describedBy, errorBlock, invalid, page, withAppNav, type FieldMessages } from './portal.page.js';
import { dangerForm, type PageCtx } from '../../web/components.js';
import { imageUploadForm } from '../resources/image-upload.page.js';
import { parseStoredImage } from '../resources/uploaded-images.js';

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
  /** Issue #41: the APIs the app serves (resource servers). */
  resourceServers?: ResourceServersSectionInput | undefined;
}

/** What the app page shows about the app's bot. */
export interface BotSection {
  account: { id: string; username: string; name: string; avatarUrl: string | null } | undefined;
  commands: readonly CommandView[];
  /** Guild commands, by server. */
  serverCommands: ReadonlyArray<{ server: { id: string; name: string }; commands: readonly CommandView[] }>;
}

/**
 * Issue #40 §2: where a command does not run, and who may use it, in words (nothing for a command
 * that runs everywhere for everyone). A guild command runs in its server only: that is its heading.
 */
function commandLimits(c: CommandView): string[] {
  const limits: string[] = [];
  if (c.guildId === null && !commandAvailable(c, 'server')) limits.push('not in servers');
  if (c.guildId === null && !commandAvailable(c, 'bot-dm')) limits.push('not in DMs');
  if (c.defaultMemberPermissions !== null) {
    const needed = neededPermissions(c.defaultMemberPermissions);
    limits.push(needed === 0n ? 'administrators only' : `needs ${permissionLabelList(needed).join(', ')}`);
  }
  return limits;
}

/** /developers/applications/:id — General and OAuth2 settings. */
export function applicationPage(input: DetailPageInput): string {
  const { ctx, app } = input;
  const general = input.general ?? {};
  const gErrors = input.generalErrors ?? {};
  const oErrors = input.oauthErrors ?? {};
  const name = general.name ?? app.name;
  const description = general.description ?? app.description;
  // Issue #42 §3: an uploaded icon is no URL to edit; the URL field stays empty and keeps it.
  const uploadedIcon = parseStoredImage(app.iconUrl) !== undefined;
  const iconUrl = general.iconUrl ?? (uploadedIcon ? '' : (app.iconUrl ?? ''));
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
<p class="hint" id="iconUrl-hint">${uploadedIcon ? 'Or an https:// image instead of the uploaded one; empty keeps it.' : 'Optional. An https:// image, shown on the consent screen, or upload one below.'}</p>
${errorBlock('iconUrl-error', gErrors['iconUrl'])}
<div class="actions"><button type="submit">Save changes</button></div>
</form>
${imageUploadForm({ action: `/developers/applications/${app.id}/icon`, csrfToken: ctx.csrfToken, current: app.iconUrl, label: 'Icon' })}
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
${input.resourceServers ? resourceServersSection(input.resourceServers) : ''}
${botCard(ctx, app, input.bot)}`;
  return page(ctx, app.name, html`<h1>${app.name}</h1>${disabledNotice(app)}${withAppNav(app, 'settings', content)}`);
}

/**
 * Issue #39: the owner sees that the operator disabled the app and what that means; the reason
 * is the operator's note for the audit log, not shown here.
 */
function disabledNotice(app: Application): SafeHtml | string {
  if (app.disabledAt === null) return '';
  return html`<div class="error" role="status"><strong>This application is disabled by the operator of this service.</strong> People cannot authorize it, its tokens were revoked and its bot token is refused until the operator enables it again. Ask them why.</div>`;
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
    : html`${commandList(commands)}
<p class="hint">Read-only here: your bot replaces the whole list with <code>PUT /api/v1/applications/${app.id}/commands</code>.</p>`
}
${
  bot.serverCommands.length === 0
    ? ''
    : html`<h4>In one server</h4>
${bot.serverCommands.map((s) => html`<p class="small"><strong>${s.server.name}</strong> <span class="muted">(${s.server.id})</span></p>
${commandList(s.commands)}`)}
<p class="hint">Guild commands: your bot replaces a server's list with <code>PUT /api/v1/applications/${app.id}/guilds/{server_id}/commands</code>. In that server they are offered with the commands above; one of the same name replaces the global one there.</p>`
}
</div>`;
}

/** Commands as the Bot section lists them: name, description, option count and limits. */
function commandList(commands: readonly CommandView[]): SafeHtml {
  return html`<ul class="plain">${commands.map((c) => html`<li><code>/${c.name}</code> <span class="muted">${c.description}</span>${c.options.length ? html` <span class="pill">${c.options.length} option${c.options.length === 1 ? '' : 's'}</span>` : ''}${commandLimits(c).map((limit) => html` <span class="pill">${limit}</span>`)}</li>`)}</ul>`;
}

/** A confirmation card: what will happen, the one button that does it, and Cancel. */
function confirmation(input: { ctx: PageCtx; app: Application; title: string; heading: string; text: SafeHtml; action: string; button: string; cancel: string; nav: 'settings' | 'delete' }): string {
  const { ctx, app } = input;
  const content = html`<div class="card">
<h2>${input.heading}</h2>
<p>${input.text}</p>
${dangerForm(ctx.csrfToken, appPath(app, input.action), input.button, `${appPath(app)}${input.cancel}`)}
</div>`;
  return page(ctx, `${input.title} · ${app.name}`, html`<h1>${app.name}</h1>${withAppNav(app, input.nav, content)}`);
}

/** Confirmation before a bot token is replaced. */
export function resetBotTokenPage(input: { ctx: PageCtx; app: Application }): string {
  return confirmation({
    ...input,
    title: 'Reset bot token',
    heading: 'Reset the bot token?',
    text: html`A new bot token will be shown once. <strong>The current token stops working immediately</strong>: every request your bot makes with it is refused until it uses the new one.`,
    action: '/bot/reset-token',
    button: 'Yes, reset the token',
    cancel: '#bot',
    nav: 'settings',
  });
}

/** Confirmation before a client secret is replaced. */
export function resetSecretPage(input: { ctx: PageCtx; app: Application }): string {
  return confirmation({
    ...input,
    title: 'Reset secret',
    heading: 'Reset the client secret?',
    text: html`A new client secret will be shown once. <strong>The current secret stops working immediately</strong>: the app cannot exchange codes or refresh tokens until it uses the new one. Tokens already issued keep working.`,
    action: '/reset-secret',
    button: 'Yes, reset the secret',
    cancel: '',
    nav: 'settings',
  });
}

/** Confirmation before an application is deleted. */
export function deleteApplicationPage(input: { ctx: PageCtx; app: Application }): string {
  return confirmation({
    ...input,
    title: 'Delete',
    heading: `Delete ${input.app.name}?`,
    text: html`This cannot be undone. Everyone who authorized the app loses the connection: all of its access and refresh tokens stop working at once, and its client ID and secret are gone.`,
    action: '/delete',
    button: 'Delete application',
    cancel: '',
    nav: 'delete',
  });
}

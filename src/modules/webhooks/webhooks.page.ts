import { APP_JS_PATH } from '../../web/assets.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { renderInstalledApps, type InstalledAppsView } from '../applications/installs.page.js';
import type { Channel } from '../directory/channels.js';
import { avatar, formError as errorFor, page, type FormError, type FormValues, type PageCtx } from '../../web/components.js';
import type { SettingsAbilities } from '../directory/server-settings.js';
import { settingsNav } from '../directory/server-settings.page.js';
import { imageUploadForm } from '../resources/image-upload.page.js';
import { parseStoredImage } from '../resources/uploaded-images.js';
import { GITHUB_SECRET_MAX } from './compat.js';
import { WEBHOOKS_PER_CHANNEL, WEBHOOK_AVATAR_URL_MAX, WEBHOOK_NAME_MAX, type WebhookWithCreator } from './webhooks.js';

/**
 * Channel settings → Integrations and Server settings → Integrations (issue #5 "Pages"): the
 * webhooks of the channel or server, a create form, rename, regenerate and delete with a
 * confirmation step, and the URL shown once after creation or regeneration. Controls appear only
 * for people with Manage webhooks; the routes check again.
 */

/** Where a page lives: the server's Integrations, or one channel's. */
export type IntegrationsScope = { kind: 'server' } | { kind: 'channel'; channel: Channel };

/** The page's address; every form posts below it. */
export function integrationsBase(serverId: string, scope: IntegrationsScope): string {
  return scope.kind === 'server' ? `/servers/${serverId}/settings/integrations` : `/channels/${scope.channel.id}/settings/integrations`;
}

/** A URL just issued: shown on this one answer, never again. */
export interface IssuedUrl {
  webhookId: string;
  name: string;
  url: string;
  regenerated: boolean;
}

export interface IntegrationsPageInput {
  ctx: PageCtx;
  scope: IntegrationsScope;
  server: { id: string; name: string };
  /** Server settings sections the viewer may open (the sidebar). */
  can: SettingsAbilities;
  /** Manage webhooks: list and controls. */
  canManageWebhooks: boolean;
  channels: Channel[];
  webhooks: WebhookWithCreator[];
  /** The installed-apps section (server scope only); absent on the channel page. */
  installedApps?: InstalledAppsView;
  issued?: IssuedUrl;
  notice?: string | undefined;
  error?: FormError;
  values?: FormValues;
  /** Webhooks that have a GitHub secret (issue #23); the secret itself is never shown. */
  githubSecrets?: ReadonlySet<string>;
}

function value(values: FormValues | undefined, name: string): string | undefined {
  const v = values?.[name];
  return typeof v === 'string' ? v : undefined;
}

function day(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)}</time>`;
}

function issuedBox(issued: IssuedUrl, serviceName: string): SafeHtml {
  return html`<div class="card" role="status" aria-labelledby="issued-title">
<h2 id="issued-title">${issued.regenerated ? 'New URL' : 'Webhook created'}: ${issued.name}</h2>
<p><strong>Copy the URL now: it is shown only this once.</strong> ${serviceName} keeps only a hash of its token and cannot show it again. If you lose it, regenerate it.${issued.regenerated ? ' The previous URL has stopped working.' : ''}</p>
${issuedUrls(issued.url)}
<p class="hint" id="webhook-url-hint">Anyone holding these URLs can post, edit and delete this webhook's messages and rename or delete it. Keep them secret.</p>
</div>`;
}

/**
 * The three addresses of one webhook (issue #23): plain execute, Slack-compatible and
 * GitHub-compatible (the same token; docs/webhooks.md), each with its copy button.
 */
function issuedUrls(url: string): SafeHtml {
  const rows: [string, string, string][] = [
    ['webhook-url', 'Webhook URL', url],
    ['webhook-url-slack', "Slack-compatible URL (for tools that post to Slack's incoming webhooks)", `${url}/slack`],
    ['webhook-url-github', "GitHub-compatible URL (a GitHub webhook's Payload URL)", `${url}/github`],
  ];
  return html`${rows.map(
    ([id, label, value]) => html`<label for="${id}">${label}</label>
<div class="copyrow"><input id="${id}" type="text" readonly data-select value="${value}" spellcheck="false" class="mono" aria-describedby="webhook-url-hint"><button type="button" class="secondary" data-copy="${id}" aria-label="Copy ${label}" hidden>Copy</button></div>`,
  )}`;
}

function githubSecretForm(w: WebhookWithCreator, input: IntegrationsPageInput, base: string): SafeHtml {
  const form = `github-secret-${w.id}`;
  const set = input.githubSecrets?.has(w.id) ?? false;
  return html`${errorFor(input.error, form)}
<form method="post" action="${base}/webhooks/${w.id}/github-secret">
${csrfField(input.ctx.csrfToken)}
<label for="github-secret-${w.id}">GitHub secret</label>
<input id="github-secret-${w.id}" name="githubSecret" type="password" maxlength="${GITHUB_SECRET_MAX}" autocomplete="new-password" aria-describedby="github-secret-hint-${w.id}">
<p class="hint" id="github-secret-hint-${w.id}">${set ? html`<strong>A secret is set.</strong> ` : 'No secret is set. '}With a secret, this webhook accepts only deliveries signed with it (X-Hub-Signature-256), as GitHub sends when you give it the same secret: its plain and Slack URLs stop posting, and its messages can no longer be edited or deleted through the URL. Save an empty field to remove it.</p>
<div class="actions"><button type="submit" class="secondary">Save GitHub secret</button></div>
</form>`;
}

function channelName(channels: readonly Channel[], id: string): string {
  return channels.find((c) => c.id === id)?.name ?? 'deleted channel';
}

function creatorText(w: WebhookWithCreator): SafeHtml {
  if (w.creatorName === null) return html`a deleted account`;
  return w.creatorIsBot ? html`${w.creatorName} <span class="badge">APP</span>` : html`${w.creatorName}`;
}

function webhookItem(w: WebhookWithCreator, input: IntegrationsPageInput, base: string): SafeHtml {
  const { ctx } = input;
  const form = `rename-${w.id}`;
  const failed = input.error?.form === form || input.error?.form === `github-secret-${w.id}`;
  const name = (failed ? value(input.values, 'name') : undefined) ?? w.name;
  // Issue #42 §3: an uploaded avatar is no URL to edit; the URL field stays empty and keeps it.
  const uploaded = parseStoredImage(w.avatarUrl) !== undefined;
  const avatarUrl = (failed ? value(input.values, 'avatarUrl') : undefined) ?? (uploaded ? '' : (w.avatarUrl ?? ''));
  return html`<li id="webhook-${w.id}">
<div class="consent-head">${avatar(w.name, w.avatarUrl)}<div><strong>${w.name}</strong>
<p class="muted small"># ${channelName(input.channels, w.channelId)} · created by ${creatorText(w)} on ${day(w.createdAt)}</p></div></div>
${
  input.canManageWebhooks
    ? html`<details${failed ? html` open` : ''}><summary>Edit</summary>
${errorFor(input.error, form)}
<form method="post" action="${base}/webhooks/${w.id}">
${csrfField(ctx.csrfToken)}
<label for="name-${w.id}">Name</label>
<input id="name-${w.id}" name="name" type="text" required maxlength="${WEBHOOK_NAME_MAX}" value="${name}" autocomplete="off">
<label for="avatar-${w.id}">Avatar URL</label>
<input id="avatar-${w.id}" name="avatarUrl" type="url" maxlength="${WEBHOOK_AVATAR_URL_MAX}" value="${avatarUrl}" placeholder="https://example.com/avatar.png" autocomplete="off">
<p class="hint">${uploaded ? 'Or an https:// image instead of the uploaded one. Leave empty to keep it.' : 'Optional https:// image, or upload one below. Leave empty for none.'}</p>
<div class="actions"><button type="submit">Save</button></div>
</form>
${imageUploadForm({ action: `/webhooks/${w.id}/avatar?back=${base.startsWith('/channels/') ? 'channel' : 'server'}`, csrfToken: ctx.csrfToken, current: w.avatarUrl, label: 'Avatar', idPrefix: `webhook-${w.id}-` })}
${githubSecretForm(w, input, base)}
<div class="actions"><a class="button secondary" href="${base}/webhooks/${w.id}/regenerate">Regenerate URL…</a><a class="button secondary" href="${base}/webhooks/${w.id}/delete">Delete…</a></div>
</details>`
    : ''
}
</li>`;
}

function createForm(input: IntegrationsPageInput, base: string): SafeHtml {
  const { ctx, scope } = input;
  const failed = input.error?.form === 'create';
  const selected = (failed ? value(input.values, 'channelId') : undefined) ?? '';
  const channelField =
    scope.kind === 'channel'
      ? html`<p class="muted small">Posts to <strong># ${scope.channel.name}</strong>.</p>`
      : html`<label for="channelId">Channel</label>
<select id="channelId" name="channelId" required>
${input.channels.map((c) => html`<option value="${c.id}"${c.id === selected ? html` selected` : ''}># ${c.name}</option>`)}
</select>`;
  return html`<h3 id="create-webhook">Create a webhook</h3>
${errorFor(input.error, 'create')}
${
  scope.kind === 'server' && input.channels.length === 0
    ? html`<p class="muted">This server has no channel to post to yet.</p>`
    : html`<form method="post" action="${base}/webhooks">
${csrfField(ctx.csrfToken)}
<label for="name">Name</label>
<input id="name" name="name" type="text" required maxlength="${WEBHOOK_NAME_MAX}" value="${failed ? (value(input.values, 'name') ?? '') : ''}" autocomplete="off" aria-describedby="name-hint">
<p class="hint" id="name-hint">1–${WEBHOOK_NAME_MAX} characters, shown on its messages with an APP badge. Names that pass for ${ctx.serviceName} are refused.</p>
<label for="avatarUrl">Avatar URL</label>
<input id="avatarUrl" name="avatarUrl" type="url" maxlength="${WEBHOOK_AVATAR_URL_MAX}" value="${failed ? (value(input.values, 'avatarUrl') ?? '') : ''}" placeholder="https://example.com/avatar.png" autocomplete="off">
<p class="hint">Optional https:// image.</p>
${channelField}
<p class="hint">Up to ${WEBHOOKS_PER_CHANNEL} webhooks per channel.</p>
<div class="actions"><button type="submit">Create webhook</button></div>
</form>`
}`;
}

function webhooksSection(input: IntegrationsPageInput, base: string): SafeHtml {
  if (!input.canManageWebhooks) {
    return html`<section class="card" aria-labelledby="webhooks"><h2 id="webhooks">Webhooks</h2>
<p class="muted">You need the Manage webhooks permission to see and manage webhooks.</p></section>`;
  }
  const where = input.scope.kind === 'channel' ? 'this channel' : 'this server';
  return html`<section class="card" aria-labelledby="webhooks"><h2 id="webhooks">Webhooks</h2>
<p class="muted small">A webhook posts messages into one channel from anything that can make an HTTP request, using its secret URL.</p>
${
  input.webhooks.length
    ? html`<ul class="plain webhooks">${input.webhooks.map((w) => webhookItem(w, input, base))}</ul>`
    : html`<p class="muted">No webhooks in ${where} yet.</p>`
}
${createForm(input, base)}
</section>`;
}

/** A page of the Integrations screens, with the copy buttons' script. */
export function integrationsScreen(ctx: PageCtx, title: string, body: SafeHtml): string {
  return page(ctx, title, body, { scripts: [APP_JS_PATH] });
}

function channelNav(input: { server: { id: string; name: string }; channel: Channel; can: SettingsAbilities }): SafeHtml {
  const { server, channel } = input;
  return html`<nav class="sidebar card" aria-label="Channel settings">
<p class="muted small"># ${channel.name} · ${server.name}</p>
<a href="/channels/${channel.id}/settings/integrations" class="active" aria-current="page">Integrations</a>
${input.can.integrations ? html`<a href="/servers/${server.id}/settings/integrations">Server integrations</a>` : ''}
<a href="/channels/${channel.id}">← Back to # ${channel.name}</a>
</nav>`;
}

/** Server settings → Integrations, or Channel settings → Integrations. */
export function integrationsPage(input: IntegrationsPageInput): string {
  const { ctx, scope, server } = input;
  const base = integrationsBase(server.id, scope);
  const nav = scope.kind === 'server' ? settingsNav(server, input.can, 'integrations') : channelNav({ server, channel: scope.channel, can: input.can });
  const heading = scope.kind === 'server' ? 'Integrations' : html`Integrations of # ${scope.channel.name}`;
  return integrationsScreen(
    ctx,
    scope.kind === 'server' ? `Integrations · ${server.name}` : `Integrations · #${scope.channel.name}`,
    html`<div class="layout">
${nav}
<div>
<h1>${heading}</h1>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${input.issued ? issuedBox(input.issued, ctx.serviceName) : ''}
${webhooksSection(input, base)}
${input.installedApps ? renderInstalledApps(input.installedApps) : ''}
</div>
</div>`,
  );
}

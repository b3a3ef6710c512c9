import { APP_JS_PATH } from '../../web/assets.js';
import { avatar, formError, formValue, notice, page } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { channelsSection, CHANNELS_SECTION_SCRIPTS } from './channels-settings.page.js';
import { invitesSection } from './invite.page.js';
import { membersSection } from './members.page.js';
import { roleSection, rolesSection } from './roles.page.js';
import type { SettingsAbilities, SettingsPageInput, SettingsSection } from './server-settings.js';
import { SERVER_NAME_MAX_LENGTH } from './servers.js';
import { imageUploadForm } from '../resources/image-upload.page.js';
import { parseStoredImage } from '../resources/uploaded-images.js';

function sectionNav(input: SettingsPageInput): SafeHtml {
  return settingsNav(input.server, input.can, input.section);
}

/** The server settings sidebar: the sections the viewer may open (also used by webhooks.page.ts). */
export function settingsNav(server: { id: string; name: string }, can: SettingsAbilities, section: SettingsSection | 'integrations' | 'audit-log'): SafeHtml {
  const items: Array<[SettingsSection | 'integrations' | 'audit-log', string, boolean]> = [
    ['overview', 'Overview', true],
    ['channels', 'Channels', can.manageChannels],
    ['roles', 'Roles', can.manageRoles],
    ['members', 'Members', can.manageServer || can.manageRoles || can.removeMembers],
    ['invites', 'Invites', can.createInvite],
    ['integrations', 'Integrations', can.integrations],
    ['audit-log', 'Audit log', can.viewAuditLog],
  ];
  const current = section === 'role' ? 'roles' : section;
  return html`<nav class="sidebar card" aria-label="Server settings">
<p class="muted small">${server.name}</p>
${items
  .filter(([, , visible]) => visible)
  .map(([key, label]) => html`<a href="/servers/${server.id}/settings${key === 'overview' ? '' : `/${key}`}"${key === current ? html` class="active" aria-current="page"` : ''}>${label}</a>`)}
<a href="/servers/${server.id}">← Back to channels</a>
</nav>`;
}

/**
 * The owner's MFA level (issue #38 §4; Discord's "Require 2FA for moderation"): members holding
 * moderator permissions without a second factor cannot use them while it is on.
 */
function mfaLevelCard(input: SettingsPageInput): SafeHtml {
  const { server, ctx } = input;
  const on = server.mfaLevel === 1;
  return html`<div class="card">
<h2>Two-factor requirement for moderators</h2>
<p>${on ? 'On: ' : 'Off: '}members who can kick, ban, manage the server, channels, roles, messages or webhooks, or hold Administrator, ${on ? 'must' : 'need not'} have two-factor authentication on their account to use those permissions; bots act with their owner's. ${on ? 'Those without it keep their other permissions.' : ''}</p>
${formError(input.error, 'mfa-level')}
<form method="post" action="/servers/${server.id}/settings/mfa-level">
${csrfField(ctx.csrfToken)}
<input type="hidden" name="level" value="${on ? '0' : '1'}">
<div class="actions"><button type="submit"${on ? html` class="secondary"` : ''}>${on ? 'Stop requiring two-factor authentication' : 'Require two-factor authentication'}</button></div>
</form>
</div>`;
}

function overviewSection(input: SettingsPageInput): SafeHtml {
  const { server, can, ctx } = input;
  // Issue #42 §3: an uploaded icon is no URL to edit; the URL field stays empty and keeps it.
  const uploadedIcon = parseStoredImage(server.iconUrl) !== undefined;
  const owner = input.members.find((m) => m.userId === server.ownerId);
  return html`<div class="card">
<h1>Overview</h1>
<p>Owner: <strong>${owner ? owner.person.name : 'unknown'}</strong>${owner ? html` <span class="muted">@${owner.person.username}</span>` : ''} · ${input.members.length} member${input.members.length === 1 ? '' : 's'} · ${input.channels.length} channel${input.channels.length === 1 ? '' : 's'}</p>
<p class="muted small">Server id <code>${server.id}</code></p>
${
  can.manageServer
    ? html`${formError(input.error, 'rename')}
<form method="post" action="/servers/${server.id}/settings">
${csrfField(ctx.csrfToken)}
<label for="name">Server name</label>
<input id="name" name="name" type="text" required maxlength="${SERVER_NAME_MAX_LENGTH}" value="${input.error?.form === 'rename' ? formValue(input.values, 'name') : server.name}">
<label for="icon-url">Icon URL <span class="muted">(optional, https)</span></label>
<div class="icon-row">${avatar(server.name, server.iconUrl)}<input id="icon-url" name="iconUrl" type="url" maxlength="2048" inputmode="url" value="${input.error?.form === 'rename' ? formValue(input.values, 'iconUrl') : uploadedIcon ? '' : (server.iconUrl ?? '')}" aria-describedby="icon-url-hint"></div>
<p class="hint" id="icon-url-hint">${uploadedIcon ? 'Or an https address of a square picture instead of the uploaded one; empty keeps it.' : "An https address of a square picture, or upload one below; empty shows the name's first letter."}</p>
<div class="actions"><button type="submit">Save</button></div>
</form>
${imageUploadForm({ action: `/servers/${server.id}/settings/icon`, csrfToken: ctx.csrfToken, current: server.iconUrl, label: 'Icon', error: input.error?.form === 'icon' ? input.error.message : undefined })}`
    : html`<p class="muted">Only people with Manage server can rename it.</p>`
}
</div>
${ctx.viewer?.id === server.ownerId ? mfaLevelCard(input) : ''}
${
  ctx.viewer?.id === server.ownerId
    ? html`<div class="card"><h2>Danger zone</h2><h3>Transfer ownership</h3><p>Give this server to another member: only its owner can delete it or give it away.</p><p><a class="button secondary" href="/servers/${server.id}/transfer">Transfer ownership…</a></p><h3>Delete this server</h3><p>Deleting removes its channels, messages, webhooks, roles, memberships and bot installs for good.</p><p><a class="button secondary" href="/servers/${server.id}/delete">Delete server…</a></p></div>`
    : html`<div class="card"><h2>Leave this server</h2><p><a class="button secondary" href="/servers/${server.id}/leave">Leave server…</a></p></div>`
}`;
}

export function settingsPage(input: SettingsPageInput): string {
  const section =
    input.section === 'overview'
      ? overviewSection(input)
      : input.section === 'channels'
        ? channelsSection(input)
        : input.section === 'roles'
          ? rolesSection(input)
          : input.section === 'role'
            ? roleSection(input)
            : input.section === 'members'
              ? membersSection(input)
              : invitesSection(input);
  const { ctx } = input;
  return page(ctx, `Settings · ${input.server.name}`, html`<div class="layout">
${sectionNav(input)}
<div>
${notice(input.notice)}
${section}
</div>
</div>`, { scripts: input.section === 'channels' ? [...CHANNELS_SECTION_SCRIPTS] : input.section === 'invites' || input.section === 'overview' ? [APP_JS_PATH] : [] });
}

import { APP_CHANNEL_NAME_JS_PATH } from '../../web/assets.js';
import { formCard, formError, formValue } from '../../web/components.js';
import { html, type SafeHtml } from '../../web/html.js';
import { csrfField } from '../../web/layout.js';
import { CHANNEL_NAME_MAX_LENGTH, CHANNEL_TOPIC_MAX_LENGTH, type Channel } from './channels.js';
import type { SettingsPageInput } from './server-settings.js';

/**
 * Server settings → Channels (issue #24): each channel can be renamed, given a topic, moved up or
 * down, and deleted (after a confirmation, danger.page.ts). Name fields carry data-channel-slug:
 * channel-name.js turns "Dev Ops!" into dev-ops as it is typed; the server applies the same rule.
 */

/** The script the channels section needs (the page adds it to its scripts). */
export const CHANNELS_SECTION_SCRIPTS: readonly string[] = [APP_CHANNEL_NAME_JS_PATH];

const SLUG_HINT = 'Lower-case letters, digits, dashes and underscores: spaces become dashes, other signs are dropped.';

/** The name and topic fields; `which` tells a channel's edit form apart from the create form for labels. */
function nameAndTopic(prefix: string, values: { name: string; topic: string }, which: 'new' | 'existing'): SafeHtml {
  return html`<label for="${prefix}-name">${which === 'new' ? 'Name' : 'Channel name'}</label>
<input id="${prefix}-name" name="name" type="text" required maxlength="${CHANNEL_NAME_MAX_LENGTH}" value="${values.name}" autocapitalize="none" spellcheck="false" data-channel-slug aria-describedby="${prefix}-name-hint">
<p class="hint" id="${prefix}-name-hint">${SLUG_HINT}</p>
<label for="${prefix}-topic">${which === 'new' ? 'Topic' : 'Channel topic'} <span class="muted">(optional)</span></label>
<input id="${prefix}-topic" name="topic" type="text" maxlength="${CHANNEL_TOPIC_MAX_LENGTH}" value="${values.topic}">`;
}

function moveButton(input: SettingsPageInput, channel: Channel, direction: 'up' | 'down', enabled: boolean): SafeHtml {
  const label = direction === 'up' ? `Move #${channel.name} up` : `Move #${channel.name} down`;
  return html`<form method="post" action="/servers/${input.server.id}/channels/${channel.id}/move" class="inline">${csrfField(input.ctx.csrfToken)}<input type="hidden" name="direction" value="${direction}"><button type="submit" class="secondary icon" aria-label="${label}" title="${label}"${enabled ? '' : html` disabled`}>${direction === 'up' ? '↑' : '↓'}</button></form>`;
}

function channelRow(input: SettingsPageInput, channel: Channel, index: number): SafeHtml {
  const { server, ctx } = input;
  const formKey = `channel-${channel.id}`;
  const failed = input.error?.form === formKey;
  const values = failed ? { name: formValue(input.values, 'name'), topic: formValue(input.values, 'topic') } : { name: channel.name, topic: channel.topic ?? '' };
  return html`<li class="channel-row" id="channel-${channel.id}">
<div class="channel-row-head">
<span class="channel-order">${moveButton(input, channel, 'up', index > 0)}${moveButton(input, channel, 'down', index < input.channels.length - 1)}</span>
<a href="/channels/${channel.id}"># ${channel.name}</a>${channel.topic ? html` <span class="muted small">— ${channel.topic}</span>` : ''}
<a class="button secondary" href="/servers/${server.id}/channels/${channel.id}/delete" aria-label="Delete #${channel.name}…">Delete…</a>
</div>
${formError(input.error, formKey)}
<details${failed ? html` open` : ''}><summary>Edit #${channel.name}</summary>
<form method="post" action="/servers/${server.id}/channels/${channel.id}">
${csrfField(ctx.csrfToken)}
${nameAndTopic(`c${channel.id}`, values, 'existing')}
<div class="actions"><button type="submit">Save channel</button></div>
</form></details>
</li>`;
}

export function channelsSection(input: SettingsPageInput): SafeHtml {
  const { server, ctx } = input;
  const createFailed = input.error?.form === 'create-channel';
  return html`<div class="card">
<h1>Channels</h1>
${input.channels.length ? html`<ul class="plain channel-rows">${input.channels.map((c, i) => channelRow(input, c, i))}</ul>` : html`<p class="muted">No channels yet.</p>`}
</div>
${formCard(
  ctx,
  input.error,
  { title: 'Create a channel', form: 'create-channel', action: `/servers/${server.id}/channels`, submit: 'Create channel' },
  nameAndTopic('channel', { name: createFailed ? formValue(input.values, 'name') : '', topic: createFailed ? formValue(input.values, 'topic') : '' }, 'new'),
)}`;
}

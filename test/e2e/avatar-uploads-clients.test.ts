import { API } from '@discordjs/core/http-only';
import { REST } from '@discordjs/rest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { actingOf, personActingOf } from '../support/acting.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { pngHeader } from '../support/multipart.js';
import { createPerson } from '../support/oauth-factory.js';

/**
 * Issue #42 §3, DESIGN §6: an unmodified @discordjs/core edits a webhook's avatar with image data
 * through the webhook's URL, and the image is fetched back from the CDN URL @discordjs/rest builds
 * from the returned hash, with Gatehouse as the CDN base: same bytes, no redirect.
 */
let served: ServedApp;
let dir: string;
let channel: Channel;
let ownerId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-avatars-e2e-'));
  served = await serveTestApp({ env: { GATEHOUSE_FILES_DIR: dir } });
  const owner = await createPerson(served.t);
  ownerId = owner.id;
  const server = await createServer(served.t.services, personActingOf(owner.id), { name: 'Avatars' });
  channel = server.channels[0] as Channel;
});
afterAll(async () => {
  await served?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('@discordjs/core (unmodified): webhooks.edit with an avatar', () => {
  it('uploads the image; the CDN URL built from the returned hash serves the same bytes from our origin', async () => {
    const { webhook, token } = await createWebhook(served.t.services, actingOf({ kind: 'person', id: ownerId }), channel, { name: 'Deploys', avatarUrl: null });
    const rest = new REST({ api: `${served.baseUrl}/api`, cdn: served.baseUrl, version: '1', timeout: 15_000 });
    const api = new API(rest);
    const png = pngHeader(128, 128, 400);
    const edited = await api.webhooks.edit(webhook.id, { avatar: `data:image/png;base64,${png.toString('base64')}` }, { token });
    expect(edited.avatar).toMatch(/^[0-9a-f]{32}$/);
    const url = rest.cdn.avatar(webhook.id, edited.avatar as string, { extension: 'png', size: 128 });
    expect(url.startsWith(`${served.baseUrl}/avatars/${webhook.id}/`)).toBe(true);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);

    const removed = await api.webhooks.edit(webhook.id, { avatar: null }, { token });
    expect(removed.avatar).toBeNull();
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(404);
  });
});

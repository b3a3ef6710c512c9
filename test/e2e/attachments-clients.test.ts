import { API } from '@discordjs/core/http-only';
import { REST } from '@discordjs/rest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { channelHistory } from '../../src/modules/messages/messages.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { actingOf, personActingOf } from '../support/acting.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { discordPyMissing, runClientScript } from '../support/discordpy.js';
import { pngHeader } from '../support/multipart.js';
import { createPerson } from '../support/oauth-factory.js';

/**
 * Issue #42, DESIGN §6: unmodified clients post files through the webhook URL of a listening
 * server, and the files appear in the channel: @discordjs/core's webhooks.execute with `files`,
 * and discord.py's SyncWebhook.send with discord.File (Debian's python3-discord). Assertions are
 * on the fields each client's types promise.
 */

const pyMissing = discordPyMissing(['discord', 'requests']);
if (pyMissing) console.warn(`skipping the discord.py files test: ${pyMissing}`);

let served: ServedApp;
let dir: string;
let channel: Channel;
let ownerId: string;

async function webhook(name: string): Promise<{ id: string; token: string }> {
  const { webhook: made, token } = await createWebhook(served.t.services, actingOf({ kind: 'person', id: ownerId }), channel, { name, avatarUrl: null });
  return { id: made.id, token };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-files-e2e-'));
  served = await serveTestApp({ env: { GATEHOUSE_FILES_DIR: dir } });
  const owner = await createPerson(served.t);
  ownerId = owner.id;
  const server = await createServer(served.t.services, personActingOf(owner.id), { name: 'Files' });
  channel = server.channels[0] as Channel;
});
afterAll(async () => {
  await served?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function inChannel(messageId: string) {
  const { messages } = await channelHistory(served.t.services, channel.id);
  return messages.find((m) => m.id === messageId);
}

describe('@discordjs/core (unmodified): webhooks.execute with files', () => {
  it('posts the files; the APIMessage carries attachments with their URL, size and dimensions, and they appear in the channel', async () => {
    const hook = await webhook('CI');
    const api = new API(new REST({ api: `${served.baseUrl}/api`, version: '1', timeout: 15_000 }));
    const png = pngHeader(320, 200, 500);
    const message = await api.webhooks.execute(hook.id, hook.token, {
      wait: true,
      content: 'Build chart',
      embeds: [{ title: 'Chart', image: { url: 'attachment://chart.png' } }],
      attachments: [{ id: 0, description: 'Build times' }],
      files: [
        { name: 'chart.png', data: png, contentType: 'image/png' },
        { name: 'log.txt', data: Buffer.from('ok\n'), contentType: 'text/plain' },
      ],
    });
    expect(message.attachments).toHaveLength(2);
    const [chart, log] = message.attachments;
    expect(chart).toMatchObject({ filename: 'chart.png', size: png.length, content_type: 'image/png', width: 320, height: 200, description: 'Build times' });
    expect(log).toMatchObject({ filename: 'log.txt', size: 3, content_type: 'text/plain' });
    expect(message.embeds[0]?.image?.url).toBe(chart?.url);
    const download = await fetch(chart?.url as string);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(png)).toBe(true);
    const shown = await inChannel(message.id);
    expect(shown?.attachments.map((a) => [a.filename, a.image])).toEqual([
      ['chart.png', { width: 320, height: 200 }],
      ['log.txt', null],
    ]);
  });
});

describe.skipIf(pyMissing !== undefined)('discord.py (unmodified): SyncWebhook.send with discord.File', () => {
  it('posts the files; discord.py builds Attachments with the fields it reads, downloads the bytes, and they appear in the channel', async () => {
    const hook = await webhook('Python');
    const png = pngHeader(64, 48, 200);
    const run = await runClientScript('discordpy_files.py', JSON.stringify({ base: served.baseUrl, ...hook, png_hex: png.toString('hex') }));
    expect(run.status, run.stderr).toBe(0);
    const facts = JSON.parse(run.stdout) as { id: string; content: string; attachments: Record<string, unknown>[]; downloaded_hex: string };
    expect(facts.content).toBe('Nightly chart');
    expect(facts.attachments).toHaveLength(2);
    expect(facts.attachments[0]).toMatchObject({ filename: 'chart.png', size: png.length, content_type: 'image/png', width: 64, height: 48, description: 'Error rate', is_image: true });
    expect(facts.attachments[1]).toMatchObject({ filename: 'summary.txt', size: 17, width: null, height: null, is_image: false });
    expect(String(facts.attachments[0]?.['url'])).toMatch(new RegExp(`^${served.baseUrl}/attachments/${channel.id}/\\d+/chart\\.png\\?ex=`));
    expect(facts.downloaded_hex).toBe(png.toString('hex'));
    const shown = await inChannel(facts.id);
    expect(shown?.attachments.map((a) => a.filename)).toEqual(['chart.png', 'summary.txt']);
  });
});

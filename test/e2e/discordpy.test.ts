import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { discordPyMissing, runClientScript } from '../support/discordpy.js';
import { createPerson } from '../support/oauth-factory.js';
import { actingOf, personActingOf } from '../support/acting.js';

/**
 * DESIGN §1 and §6: unmodified discord.py (Debian's python3-discord on /usr/bin/python3) drives
 * the webhook URL routes of a listening server, sync (SyncWebhook.partial) and async
 * (Webhook.partial): send, send wait=True with an embed, fetch, edit_message, fetch_message,
 * delete_message, edit name, delete, HTTP errors with their codes, and a real 429 waited out.
 * test/clients/discordpy_webhooks.py drives the library and reports what it observed; the
 * assertions are here, on the attributes discord.py's types promise.
 */

// A loopback image host (the server may reach it: GATEHOUSE_OUTBOUND_ALLOW_PRIVATE) holding the
// webhooks' avatar, which the CDN route fetches and serves.
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR a webhook avatar')]);
let images: HttpServer | undefined;
let avatarUrl = '';

const missing = discordPyMissing(['discord', 'requests', 'aiohttp']);
if (missing) console.warn(`skipping the discord.py end-to-end tests: ${missing}`);

interface ImageFacts {
  status: number;
  location: string | null;
  content_type: string | null;
  body_hex: string;
}
interface ErrorFacts {
  class: string;
  status: number;
  code: number;
}
interface MessageFacts {
  type: string;
  id: number;
  content: string;
  channel_id: number;
  webhook_id: number;
  author_id: number;
  author_name: string;
  author_bot: boolean;
  author_discriminator: string;
  author_avatar_url: string;
  created_at: number;
  sent_between: [number, number];
  edited_at: number | null;
  pinned: boolean;
  tts: boolean;
  mention_everyone: boolean;
  mentions: number;
  attachments: number;
  message_type: number;
  embed: Record<string, unknown> | null;
}
interface WebhookFacts {
  id: number;
  name: string;
  type: number;
  channel_id: number;
  guild_id: number;
  avatar_url: string;
  has_token: boolean;
}
interface RunFacts {
  send: null;
  message: MessageFacts;
  fetch: WebhookFacts;
  edit_message: { content: string; edited_at: number | null; id: number };
  fetch_message: { content: string; id: number; embeds: number };
  fetch_deleted: ErrorFacts | null;
  edit: WebhookFacts;
  wrong_token: ErrorFacts | null;
  after_delete: ErrorFacts | null;
  empty?: ErrorFacts | null;
  avatar_image?: ImageFacts;
  webhook_avatar_image?: ImageFacts;
}
interface Report {
  version: string;
  sync: RunFacts;
  async: RunFacts;
  rate_limit: { filler_statuses: number[]; waits: number; content: string };
}

let served: ServedApp;
let channel: Channel;
let serverId: string;
let ownerId: string;
const hooks: Record<'sync' | 'async' | 'busy', { id: string; token: string }> = { sync: { id: '', token: '' }, async: { id: '', token: '' }, busy: { id: '', token: '' } };
let report: Report;

beforeAll(async () => {
  if (missing) return;
  images = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG));
  await new Promise<void>((resolve) => images?.listen(0, '127.0.0.1', resolve));
  avatarUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/hook.png`;
  served = await serveTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  const owner = await createPerson(served.t);
  ownerId = owner.id;
  const server = await createServer(served.t.services, personActingOf(owner.id), { name: 'Python' });
  serverId = server.id;
  channel = server.channels[0] as Channel;
  for (const name of ['sync', 'async', 'busy'] as const) {
    const { webhook, token } = await createWebhook(served.t.services, actingOf({ kind: 'person', id: ownerId }), channel, { name: `Hook ${name}`, avatarUrl: 'https://img.example/hook.png' });
    // Avatars are https URLs; the loopback host stands in for one.
    await served.t.services.db.updateTable('webhooks').set({ avatar_url: avatarUrl }).where('id', '=', webhook.id).execute();
    hooks[name] = { id: webhook.id, token };
  }
  // Asynchronously: the server answers from this process's event loop.
  const run = await runClientScript('discordpy_webhooks.py', JSON.stringify({ base: served.baseUrl, ...hooks }));
  if (run.status !== 0) throw new Error(`discordpy_webhooks.py failed (${String(run.status)}):\n${run.stderr}`);
  report = JSON.parse(run.stdout) as Report;
}, 150_000);
afterAll(async () => {
  await served?.close();
  images?.close();
});

describe.skipIf(missing !== undefined)('discord.py (unmodified) against the webhook URL routes', () => {
  for (const mode of ['sync', 'async'] as const) {
    describe(`${mode === 'sync' ? 'SyncWebhook' : 'Webhook'}.partial`, () => {
      it('send without wait answers nothing, as discord.py expects', () => {
        expect(report[mode].send).toBeNull();
      });

      it('send wait=True with an embed builds a WebhookMessage with the fields discord.py reads', () => {
        const m = report[mode].message;
        expect(m.type).toBe(mode === 'sync' ? 'SyncWebhookMessage' : 'WebhookMessage');
        expect(m).toMatchObject({
          content: 'With an embed',
          channel_id: Number(channel.id),
          webhook_id: Number(hooks[mode].id),
          author_id: Number(hooks[mode].id),
          author_name: `Hook ${mode}`,
          author_bot: true,
          author_discriminator: '0',
          edited_at: null,
          pinned: false,
          tts: false,
          mention_everyone: false,
          mentions: 0,
          attachments: 0,
          message_type: 0,
        });
        expect(m.embed).toEqual({
          title: 'Build 42',
          description: 'All green',
          color: 0x5865f2,
          footer_text: 'CI',
          footer_icon_url: 'https://img.example/footer.png',
          author_name: 'Pipeline',
          author_icon_url: 'https://img.example/author.png',
          fields: [['Env', 'prod', true]],
        });
      });

      it("created_at, computed by discord.py from the id on Discord's epoch, is the real creation time within a second", () => {
        const { created_at: createdAt, sent_between: [before, after] } = report[mode].message;
        expect(createdAt).toBeGreaterThanOrEqual(before - 1);
        expect(createdAt).toBeLessThanOrEqual(after + 1);
      });

      it('fetch gives the webhook: id, name, type incoming, channel and server, no token shown', () => {
        expect(report[mode].fetch).toMatchObject({
          id: Number(hooks[mode].id),
          name: `Hook ${mode}`,
          type: 1,
          channel_id: Number(channel.id),
          guild_id: Number(serverId),
        });
        // SPEC §2.8 (URL shown once) wins over Discord, which echoes the token here: the fetched
        // object has none, so sends go through the partial webhook (docs/api-resources.md).
        expect(report[mode].fetch.has_token).toBe(false);
      });

      it('edit_message, fetch_message and delete_message work on the message; a deleted one is NotFound 10008', () => {
        const { message, edit_message: edited, fetch_message: got, fetch_deleted: gone } = report[mode];
        expect(edited).toMatchObject({ id: message.id, content: `Edited (${mode})` });
        expect(edited.edited_at).not.toBeNull();
        expect(got).toEqual({ id: message.id, content: `Edited (${mode})`, embeds: 1 });
        expect(gone).toMatchObject({ class: 'NotFound', status: 404, code: 10008 });
      });

      it('edit renames the webhook', () => {
        expect(report[mode].edit).toMatchObject({ id: Number(hooks[mode].id), name: `Renamed (${mode})` });
      });

      it('HTTP errors reach discord.py with their codes: a wrong token is 401 50027', () => {
        expect(report[mode].wrong_token).toMatchObject({ class: 'HTTPException', status: 401, code: 50027 });
      });

      it('delete removes the webhook: fetching it afterwards is NotFound 10015', () => {
        expect(report[mode].after_delete).toMatchObject({ class: 'NotFound', status: 404, code: 10015 });
      });
    });
  }

  it('an empty message is refused with 400 50006', () => {
    expect(report.sync.empty).toMatchObject({ class: 'HTTPException', status: 400, code: 50006 });
  });

  it('avatar URLs discord.py builds from the hash on its CDN base serve the stored image from our origin, never a redirect (DESIGN §4)', () => {
    expect(report.sync.message.author_avatar_url).toMatch(new RegExp(`^${served.baseUrl}/avatars/${hooks.sync.id}/[0-9a-f]{32}\\.png`));
    const servedImage = { status: 200, location: null, content_type: 'image/png', body_hex: PNG.toString('hex') };
    expect(report.sync.avatar_image).toEqual(servedImage);
    expect(report.sync.webhook_avatar_image).toEqual(servedImage);
  });

  it('waits out a real 429 (SPEC §8: 10 per 2 s) and then sends', () => {
    const { filler_statuses: statuses, waits, content } = report.rate_limit;
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(waits).toBeGreaterThanOrEqual(1);
    expect(content).toBe('After the wait');
  });
});

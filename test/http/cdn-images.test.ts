import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { hashOf } from '../support/discord-resources.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { createBot, type TestBot } from './dms.fixtures.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/**
 * DESIGN §1's CDN routes under DESIGN §4 (issue #36 §4): `/avatars`, `/icons` and `/app-icons`
 * serve the image behind a stored URL from our origin, fetched through the outbound client, and
 * never redirect to the stored address. A loopback image server stands in for the image hosts.
 */

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR rest of a png')]);
const GIF = Buffer.from('GIF89a and the rest');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const HTML = Buffer.from('<!doctype html><script>alert(1)</script>');

/** Requests the image server received, by path. */
const hits = new Map<string, number>();
let images: Server;
let origin: string;

function startImageServer(): Promise<void> {
  images = createHttpServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const send = (type: string, body: Buffer) => res.writeHead(200, { 'content-type': type }).end(body);
    if (path === '/a.png' || path === '/b.png' || path === '/c.png' || path === '/target.png') return send('image/png', PNG);
    if (path === '/mislabelled.png') return send('image/png; charset=binary', GIF);
    if (path === '/page.html') return send('text/html; charset=utf-8', HTML);
    if (path === '/html-as.png') return send('image/png', HTML);
    if (path === '/logo.svg') return send('image/svg+xml', SVG);
    if (path === '/redirect.png') return res.writeHead(302, { location: `${origin}/target.png` }).end();
    if (path === '/big.png') {
      // 6 MiB, streamed without a Content-Length: the cap must stop the reading itself.
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(PNG);
      const chunk = Buffer.alloc(64 * 1024, 1);
      let left = 96;
      const more = () => {
        while (left > 0) {
          left -= 1;
          if (!res.write(chunk)) return res.once('drain', more);
        }
        res.end();
      };
      res.on('error', () => undefined);
      return more();
    }
    res.writeHead(404, { 'content-type': 'image/png' }).end(PNG);
  });
  return new Promise((resolve) => images.listen(0, '127.0.0.1', () => resolve()));
}

let t: TestApp;
let person: Person;
let client: TestClient;
let bot: TestBot;
let serverId: string;
let channelId: string;

beforeAll(async () => {
  await startImageServer();
  origin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  person = await createPerson(t, { username: 'pictured', name: 'Pictured' });
  client = await createClient(t, { owner: person, confidential: false, name: 'Icon App' });
  bot = await createBot(t, { name: 'Image Bot', owner: person });
  const server = await createServer(t.services, personActingOf(person.id), { name: 'Image Server' });
  serverId = server.id;
  channelId = server.channels[0]?.id as string;
  const role = await createRole(t.services, operatorActing(), server.id, { name: 'Bots', permissions: Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => images?.close(resolve));
});

/** Points the person's avatar at `url` on the image server (the API accepts only https, so the row is written directly). */
async function avatarAt(url: string): Promise<string> {
  await t.services.db.updateTable('users').set({ avatar_url: url }).where('id', '=', person.id).execute();
  return `/avatars/${person.id}/${hashOf(url)}.png`;
}

describe('CDN routes serve images from our origin (DESIGN §4, issue #36 §4)', () => {
  it('/avatars, /icons and /app-icons answer 200 with the image bytes, its type, nosniff, a sandboxing CSP and a short cache; never a redirect', async () => {
    const avatar = await t.app.inject({ method: 'GET', url: `${await avatarAt(`${origin}/a.png`)}?size=1024` });
    expect(avatar.statusCode).toBe(200);
    expect(avatar.headers['location']).toBeUndefined();
    expect(avatar.rawPayload.equals(PNG)).toBe(true);
    expect(avatar.headers['content-type']).toBe('image/png');
    expect(avatar.headers['x-content-type-options']).toBe('nosniff');
    expect(avatar.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'; sandbox");
    expect(avatar.headers['cache-control']).toBe('public, max-age=3600');

    await t.services.db.updateTable('servers').set({ icon_url: `${origin}/b.png` }).where('id', '=', serverId).execute();
    const icon = await t.app.inject({ method: 'GET', url: `/icons/${serverId}/${hashOf(`${origin}/b.png`)}.webp` });
    expect(icon.statusCode).toBe(200);
    expect(icon.rawPayload.equals(PNG)).toBe(true);

    await t.services.db.updateTable('applications').set({ icon_url: `${origin}/c.png` }).where('id', '=', client.clientId).execute();
    const appIcon = await t.app.inject({ method: 'GET', url: `/app-icons/${client.clientId}/${hashOf(`${origin}/c.png`)}.png` });
    expect(appIcon.statusCode).toBe(200);
    expect(appIcon.headers['content-type']).toBe('image/png');
  });

  it('anything that names no stored image is 404', async () => {
    await avatarAt(`${origin}/a.png`);
    for (const url of [`/avatars/${person.id}/${'0'.repeat(32)}.png`, `/avatars/${person.id}/nothex.png`, `/icons/${person.id}/${hashOf(`${origin}/a.png`)}.png`, '/avatars/x/y.png']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });

  it('a webhook message’s avatar override is served under the webhook id', async () => {
    const json = (headers: Record<string, string>, url: string, body: unknown) => t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const hook = (await json(bot.headers, `/api/v1/channels/${channelId}/webhooks`, { name: 'CDN' })).json() as { id: string; token: string };
    const posted = (await json({}, `/api/v1/webhooks/${hook.id}/${hook.token}?wait=true`, { content: 'x', avatar_url: 'https://cdn.example.com/override.png' })).json() as { id: string; author: { avatar: string } };
    expect(posted.author.avatar).toBe(hashOf('https://cdn.example.com/override.png'));
    // The API takes only https URLs; the row is pointed at the loopback image server.
    await t.services.db.updateTable('messages').set({ author_avatar_url: `${origin}/a.png` }).where('id', '=', posted.id).execute();
    const res = await t.app.inject({ method: 'GET', url: `/avatars/${hook.id}/${hashOf(`${origin}/a.png`)}.png` });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(PNG)).toBe(true);
  });

  it('an off-origin answer that is not a PNG, JPEG, GIF or WebP is not served: HTML, SVG, HTML labelled image/png → 404', async () => {
    for (const path of ['/page.html', '/logo.svg', '/html-as.png']) {
      const res = await t.app.inject({ method: 'GET', url: await avatarAt(`${origin}${path}`) });
      expect(res.statusCode, path).toBe(404);
      expect(res.headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(res.body, path).not.toContain('alert(1)');
      expect(hits.get(path), path).toBe(1);
    }
  });

  it('a mislabelled raster image is served as what its bytes are', async () => {
    const res = await t.app.inject({ method: 'GET', url: await avatarAt(`${origin}/mislabelled.png`) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/gif');
  });

  it('a redirect is not followed: 404, and the address it names is never requested', async () => {
    const res = await t.app.inject({ method: 'GET', url: await avatarAt(`${origin}/redirect.png`) });
    expect(res.statusCode).toBe(404);
    expect(res.headers['location']).toBeUndefined();
    expect(hits.get('/redirect.png')).toBe(1);
    expect(hits.get('/target.png')).toBeUndefined();
  });

  it('a body beyond 5 MiB is cut off and not served: 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: await avatarAt(`${origin}/big.png`) });
    expect(res.statusCode).toBe(404);
  });

  it('an image is fetched once and then served from memory, however often it is asked for', async () => {
    const url = await avatarAt(`${origin}/a.png`);
    const before = hits.get('/a.png') ?? 0;
    const answers = await Promise.all(Array.from({ length: 5 }, () => t.app.inject({ method: 'GET', url })));
    for (const res of answers) expect(res.statusCode).toBe(200);
    expect((hits.get('/a.png') ?? 0) - before).toBeLessThanOrEqual(1);
  });
});

describe('with GATEHOUSE_OUTBOUND_ALLOW_PRIVATE off (the default)', () => {
  let strict: TestApp;
  let someone: Person;
  beforeAll(async () => {
    strict = await createTestApp();
    someone = await createPerson(strict, { username: 'private' });
  });
  afterAll(async () => strict?.close());

  it('an image on a loopback address, named by IP or by a host name resolving to it, is refused without being requested: 404', async () => {
    const port = (images.address() as AddressInfo).port;
    for (const url of [`http://127.0.0.1:${port}/b.png?private`, `http://localhost:${port}/b.png?private`, `http://[::ffff:127.0.0.1]:${port}/b.png?private`]) {
      const before = hits.get('/b.png') ?? 0;
      await strict.services.db.updateTable('users').set({ avatar_url: url }).where('id', '=', someone.id).execute();
      const res = await strict.app.inject({ method: 'GET', url: `/avatars/${someone.id}/${hashOf(url)}.png` });
      expect(res.statusCode, url).toBe(404);
      expect(hits.get('/b.png') ?? 0, url).toBe(before);
    }
  });
});

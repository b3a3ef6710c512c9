import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { updateRole } from '../../src/modules/directory/roles.service.js';
import { getPersonById } from '../../src/modules/directory/people.service.js';
import { deleteAccountByOperator } from '../../src/modules/accounts/account-deletion.service.js';
import { setOwnAvatar } from '../../src/modules/accounts/avatar.service.js';
import { deleteAppAsOperator } from '../../src/modules/applications/apps-admin.service.js';
import { createChannel, deleteChannel } from '../../src/modules/directory/channels.service.js';
import { deleteServer, setServerIcon } from '../../src/modules/directory/servers.service.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { given, type TestBot } from '../support/given.js';
import { csrfFrom, location } from '../support/directory-fixtures.js';
import { multipartBody, pngHeader } from '../support/multipart.js';
import { nextAddress } from '../support/oauth-factory.js';

/**
 * Issue #42 §3: avatars and icons uploaded as Discord's image data (people, servers, apps,
 * webhooks), stored in the blob store under their content hash and served from our origin at
 * /avatars/…, /icons/…, /app-icons/…; bad input stores nothing; replacing or removing deletes the
 * old blob, and deleting the subject (a webhook, a server with its channels' webhooks, a channel's
 * webhooks, an app and its bot, a person) deletes its blobs. On every store this database offers.
 */
const stores = testDialect === 'postgres' ? (['fs', 'postgres'] as const) : (['fs'] as const);
if (testDialect !== 'postgres') console.log('avatar-uploads: the database store runs with TEST_DATABASE_URL (PostgreSQL) only');

const dataUri = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
/** A GIF header (signature, logical screen size) and some bytes: what image-size reads. */
const gifHeader = (width: number, height: number) => {
  const head = Buffer.alloc(13);
  head.write('GIF89a', 0, 'latin1');
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  return Buffer.concat([head, Buffer.alloc(32, 1)]);
};

for (const store of stores) {
  describe(`uploaded avatars and icons on the ${store} store (${testDialect})`, () => {
    let t: TestApp;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-images-'));
      t = await createTestApp({ env: { GATEHOUSE_FILE_STORE: store, GATEHOUSE_FILES_DIR: dir } });
    });
    afterAll(async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The keys of every blob the store holds. */
    async function blobs(): Promise<string[]> {
      if (store === 'postgres') return [...new Set((await t.services.db.selectFrom('file_chunks').select('storage_key').execute()).map((r) => r.storage_key))];
      const walk = (d: string): string[] => readdirSync(d).flatMap((name) => (statSync(join(d, name)).isDirectory() ? walk(join(d, name)) : [name]));
      return walk(dir);
    }

    const api = (method: 'PATCH' | 'POST', url: string, payload: unknown, headers: Record<string, string> = {}) =>
      t.app.inject({ method, url, payload: payload as Record<string, unknown>, headers, remoteAddress: nextAddress() });

    /** GETs a served image and checks it is our own answer, never a redirect. */
    async function served(path: string, bytes: Buffer, type: string) {
      const res = await t.app.inject({ method: 'GET', url: path });
      expect(res.statusCode, `${path}: ${res.body.slice(0, 200)}`).toBe(200);
      expect(res.headers['location']).toBeUndefined();
      expect(res.headers['content-type']).toBe(type);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toContain('immutable');
      expect(res.rawPayload.equals(bytes)).toBe(true);
      return res;
    }

    /** A server whose @everyone may manage it and its webhooks, with `bot` a member. */
    async function serverWithBot(bot: TestBot) {
      const server = await given.server(t);
      await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: Permission.VIEW_CHANNEL | Permission.MANAGE_SERVER | Permission.MANAGE_WEBHOOKS });
      await addMember(t.services, operatorActing(), server.id, bot.botUserId);
      return server;
    }

    it("a webhook's avatar uploaded by its URL is stored, answered as the hash, served from our origin with its type, and replaced and removed with its blob", async () => {
      const w = await given.webhook(t);
      const png = pngHeader(64, 64, 300);
      const res = await api('PATCH', w.path, { avatar: dataUri('image/png', png) });
      expect(res.statusCode, res.body).toBe(200);
      const hash = res.json().avatar as string;
      expect(hash).toMatch(/^[0-9a-f]{32}$/);
      const served1 = await served(`/avatars/${w.webhook.id}/${hash}.png`, png, 'image/png');
      expect(served1.headers['etag']).toBe(`"${hash}"`);
      // The hash names the content: a client that has it gets 304.
      const again = await t.app.inject({ method: 'GET', url: `/avatars/${w.webhook.id}/${hash}.png`, headers: { 'if-none-match': `"${hash}"` } });
      expect(again.statusCode).toBe(304);
      expect(await blobs()).toContain(`avatars-${w.webhook.id}-${hash}`);

      const gif = gifHeader(32, 32);
      const replaced = await api('PATCH', w.path, { avatar: dataUri('image/gif', gif) });
      expect(replaced.statusCode, replaced.body).toBe(200);
      const hash2 = replaced.json().avatar as string;
      expect(hash2).not.toBe(hash);
      await served(`/avatars/${w.webhook.id}/${hash2}.png`, gif, 'image/gif');
      // Replacing deleted the old blob; its address is gone.
      expect(await blobs()).not.toContain(`avatars-${w.webhook.id}-${hash}`);
      expect((await t.app.inject({ method: 'GET', url: `/avatars/${w.webhook.id}/${hash}.png` })).statusCode).toBe(404);

      const removed = await api('PATCH', w.path, { avatar: null });
      expect(removed.statusCode).toBe(200);
      expect(removed.json().avatar).toBeNull();
      expect(await blobs()).not.toContain(`avatars-${w.webhook.id}-${hash2}`);
      expect((await t.app.inject({ method: 'GET', url: `/avatars/${w.webhook.id}/${hash2}.png` })).statusCode).toBe(404);
    });

    it('a bot creates a webhook with an avatar and changes it (POST /channels/{id}/webhooks, PATCH /webhooks/{id})', async () => {
      const bot = await given.bot(t);
      const server = await serverWithBot(bot);
      const png = pngHeader(16, 16, 100);
      const created = await api('POST', `/api/v1/channels/${server.channels[0]?.id}/webhooks`, { name: 'Deploys', avatar: dataUri('image/png', png) }, bot.headers);
      expect(created.statusCode, created.body).toBe(201);
      const { id, avatar } = created.json() as { id: string; avatar: string };
      await served(`/avatars/${id}/${avatar}.png`, png, 'image/png');
      const png2 = pngHeader(16, 16, 101);
      const changed = await api('PATCH', `/api/v1/webhooks/${id}`, { avatar: dataUri('image/png', png2) }, bot.headers);
      expect(changed.statusCode, changed.body).toBe(200);
      await served(`/avatars/${id}/${changed.json().avatar}.png`, png2, 'image/png');
      expect(await blobs()).not.toContain(`avatars-${id}-${avatar}`);
      const removed = await api('PATCH', `/api/v1/webhooks/${id}`, { avatar: null }, bot.headers);
      expect(removed.statusCode, removed.body).toBe(200);
      expect(removed.json().avatar).toBeNull();
      expect(await blobs()).not.toContain(`avatars-${id}-${changed.json().avatar}`);
      // Deleting the webhook deletes its uploaded avatar.
      const png3 = pngHeader(16, 16, 102);
      const again = await api('PATCH', `/api/v1/webhooks/${id}`, { avatar: dataUri('image/png', png3) }, bot.headers);
      expect(await blobs()).toContain(`avatars-${id}-${again.json().avatar}`);
      expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${id}`, headers: bot.headers })).statusCode).toBe(204);
      expect(await blobs()).not.toContain(`avatars-${id}-${again.json().avatar}`);
    });

    it("a server's icon (PATCH /guilds/{id} `icon`, Manage server) is served at /icons/{id}/{hash}.png and removed with null", async () => {
      const bot = await given.bot(t);
      const server = await serverWithBot(bot);
      const png = pngHeader(128, 128, 500);
      const res = await api('PATCH', `/api/v1/guilds/${server.id}`, { icon: dataUri('image/png', png) }, bot.headers);
      expect(res.statusCode, res.body).toBe(200);
      const icon = res.json().icon as string;
      expect(icon).toMatch(/^[0-9a-f]{32}$/);
      await served(`/icons/${server.id}/${icon}.png`, png, 'image/png');
      const removed = await api('PATCH', `/api/v1/guilds/${server.id}`, { icon: null }, bot.headers);
      expect(removed.statusCode, removed.body).toBe(200);
      expect(removed.json().icon).toBeNull();
      expect(await blobs()).not.toContain(`icons-${server.id}-${icon}`);
    });

    /** Uploads `bytes` as the webhook's avatar by its URL; answers the blob key. */
    async function webhookAvatar(w: { path: string; webhook: { id: string } }, bytes: Buffer): Promise<string> {
      const res = await api('PATCH', w.path, { avatar: dataUri('image/png', bytes) });
      expect(res.statusCode, res.body).toBe(200);
      const key = `avatars-${w.webhook.id}-${res.json().avatar as string}`;
      expect(await blobs()).toContain(key);
      return key;
    }

    it("deleting a server deletes its uploaded icon's blob and its webhooks' uploaded avatars", async () => {
      const server = await given.server(t);
      const owner = personActingOf(server.owner.id);
      await setServerIcon(t.services, owner, server.id, dataUri('image/png', pngHeader(24, 24, 510)));
      const icon = (await t.services.db.selectFrom('servers').select('icon_url').where('id', '=', server.id).executeTakeFirstOrThrow()).icon_url as string;
      const iconKey = `icons-${server.id}-${icon.slice(-36, -4)}`;
      expect(await blobs()).toContain(iconKey);
      const hook = await webhookAvatar(await given.webhook(t, { channel: server.channels[0] }), pngHeader(24, 24, 511));
      await deleteServer(t.services, owner, server.id);
      const left = await blobs();
      expect(left).not.toContain(iconKey);
      expect(left).not.toContain(hook);
    });

    it("deleting a channel deletes its webhooks' uploaded avatars", async () => {
      const server = await given.server(t);
      const owner = personActingOf(server.owner.id);
      const channel = await createChannel(t.services, owner, server.id, { name: 'alerts' });
      const hook = await webhookAvatar(await given.webhook(t, { channel }), pngHeader(24, 24, 520));
      const other = await webhookAvatar(await given.webhook(t, { channel: server.channels[0] }), pngHeader(24, 24, 521));
      await deleteChannel(t.services, owner, server.id, channel.id);
      const left = await blobs();
      expect(left).not.toContain(hook);
      // A webhook of another channel keeps its avatar.
      expect(left).toContain(other);
    });

    /** Uploads a new icon for the bot's app (PATCH /applications/@me): its hash and its blob's key. */
    async function uploadAppIcon(bot: TestBot, seed: number): Promise<{ icon: string; key: string }> {
      const res = await api('PATCH', '/api/v1/applications/@me', { icon: dataUri('image/png', pngHeader(24, 24, seed)) }, bot.headers);
      expect(res.statusCode, res.body).toBe(200);
      const icon = res.json().icon as string;
      return { icon, key: `app-icons-${bot.client.app.id}-${icon}` };
    }

    /** A bot whose app has an uploaded icon and which then uploaded its own avatar; both blobs are stored. */
    async function botWithIconAndOwnAvatar(seed: number): Promise<{ bot: TestBot; iconKey: string; ownKey: string }> {
      const bot = await given.bot(t);
      const iconKey = (await uploadAppIcon(bot, seed)).key;
      const own = await api('PATCH', '/api/v1/users/@me', { avatar: dataUri('image/png', pngHeader(24, 24, seed + 1)) }, bot.headers);
      expect(own.statusCode, own.body).toBe(200);
      const ownKey = `avatars-${bot.botUserId}-${own.json().avatar as string}`;
      expect(await blobs()).toEqual(expect.arrayContaining([iconKey, ownKey]));
      return { bot, iconKey, ownKey };
    }

    it("deleting an app deletes its uploaded icon's blob and its bot's own uploaded avatar; the bot account stays, without an avatar", async () => {
      const { bot, iconKey, ownKey } = await botWithIconAndOwnAvatar(530);
      await deleteAppAsOperator(t.services, operatorActing(), bot.client.app.id);
      const left = await blobs();
      expect(left).not.toContain(iconKey);
      expect(left).not.toContain(ownKey);
      expect((await getPersonById(t.services, bot.botUserId))?.avatarUrl).toBeNull();
    });

    it("a new app icon replaces its bot's own uploaded avatar, and deletes that avatar's blob and the old icon's", async () => {
      const { bot, iconKey: firstKey, ownKey } = await botWithIconAndOwnAvatar(532);
      const second = await uploadAppIcon(bot, 534);
      const left = await blobs();
      expect(left).toContain(second.key);
      expect(left).not.toContain(firstKey);
      expect(left).not.toContain(ownKey);
      const user = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: bot.headers });
      expect(user.json().avatar).toBe(second.icon);
    });

    it("deleting a person's account deletes their uploaded avatar's blob", async () => {
      const person = await given.person(t);
      const updated = await setOwnAvatar(t.services, personActingOf(person.id), dataUri('image/png', pngHeader(24, 24, 540)));
      const key = `avatars-${person.id}-${(updated.avatarUrl as string).slice(-36, -4)}`;
      expect(await blobs()).toContain(key);
      await deleteAccountByOperator(t.services, operatorActing(), person.id);
      expect(await blobs()).not.toContain(key);
    });

    it('a bot without Manage server may not change the icon: 403 50013, nothing stored', async () => {
      const bot = await given.bot(t);
      const server = await given.server(t);
      await addMember(t.services, operatorActing(), server.id, bot.botUserId);
      const before = await blobs();
      const res = await api('PATCH', `/api/v1/guilds/${server.id}`, { icon: dataUri('image/png', pngHeader(8, 8)) }, bot.headers);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe(50013);
      expect(await blobs()).toEqual(before);
    });

    it("an app's icon (PATCH /applications/@me `icon`) is served at /app-icons/{id}/{hash}.png, and its bot's avatar follows it", async () => {
      const bot = await given.bot(t);
      const png = pngHeader(256, 256, 700);
      const res = await api('PATCH', '/api/v1/applications/@me', { icon: dataUri('image/png', png) }, bot.headers);
      expect(res.statusCode, res.body).toBe(200);
      const icon = res.json().icon as string;
      expect(icon).toMatch(/^[0-9a-f]{32}$/);
      await served(`/app-icons/${bot.client.app.id}/${icon}.png`, png, 'image/png');
      const user = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: bot.headers });
      expect(user.json().avatar).toBe(icon);
      await served(`/avatars/${bot.botUserId}/${icon}.png`, png, 'image/png');
    });

    it("a bot's own avatar (PATCH /users/@me `avatar`) is served at /avatars/{id}/{hash}.png", async () => {
      const bot = await given.bot(t);
      const gif = gifHeader(48, 48);
      const res = await api('PATCH', '/api/v1/users/@me', { avatar: dataUri('image/gif', gif) }, bot.headers);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().id).toBe(bot.botUserId);
      await served(`/avatars/${bot.botUserId}/${res.json().avatar}.png`, gif, 'image/gif');
    });

    describe('bad image data → 400 50035 at the field, nothing stored, nothing changed', () => {
      const rows: [string, unknown][] = [
        ['not a data URI', 'https://example.com/a.png'],
        ['a type Discord does not take (SVG)', `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')}`],
        ['declared PNG, really text', dataUri('image/png', Buffer.from('hello, not an image at all'))],
        ['declared GIF, really a PNG', dataUri('image/gif', pngHeader(8, 8))],
        ['empty', 'data:image/png;base64,'],
        ['not base64', 'data:image/png;base64,***'],
        ['not a string', 42],
        ['over 10 MiB', dataUri('image/png', Buffer.concat([pngHeader(8, 8), Buffer.alloc(10 * 1024 * 1024)]))],
      ];
      for (const [what, avatar] of rows) {
        it(what, async () => {
          const w = await given.webhook(t);
          const before = await blobs();
          const res = await api('PATCH', w.path, { avatar });
          expect(res.statusCode, res.body).toBe(400);
          expect(res.json().code).toBe(50035);
          expect(Object.keys(res.json().errors)).toEqual(['avatar']);
          expect(await blobs()).toEqual(before);
          const after = await t.app.inject({ method: 'GET', url: w.path });
          expect(after.json().avatar).toBeNull();
        });
      }
    });

    it('an external avatar URL still travels as before: its hash, fetched through the outbound client, not from the store', async () => {
      const w = await given.webhook(t, { avatarUrl: 'https://images.example/cat.png' });
      const res = await t.app.inject({ method: 'GET', url: w.path });
      expect(res.json().avatar_url).toBe('https://images.example/cat.png');
      expect(res.json().avatar).toMatch(/^[0-9a-f]{32}$/);
    });

    it('Settings → Profile: a person uploads an avatar with the multipart form (CSRF in the action URL), sees it, and removes it', async () => {
      const { agent, person } = await given.signedIn(t);
      const csrf = await csrfFrom(agent, '/settings/profile');
      const page = await agent.get('/settings/profile');
      expect(page.body).toContain('enctype="multipart/form-data"');
      expect(page.body).toContain('accept="image/png,image/jpeg,image/gif,image/webp"');
      const png = pngHeader(40, 40, 222);
      const form = await multipartBody({ do: 'upload' }, [{ field: 'image', filename: 'me.png', type: 'image/png', data: png }]);
      const cookie = [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const post = (csrfToken: string, body: { payload: Buffer; headers: Record<string, string> }) =>
        t.app.inject({ method: 'POST', url: `/settings/avatar?_csrf=${encodeURIComponent(csrfToken)}`, payload: body.payload, headers: { ...body.headers, cookie, origin: 'http://localhost:8080' } });
      // Without the token: refused before the body is read.
      expect((await post('wrong', form)).statusCode).toBe(403);
      expect((await getPersonById(t.services, person.id))?.avatarUrl).toBeNull();
      const res = await post(csrf, form);
      expect(res.statusCode, res.body.slice(0, 300)).toBe(303);
      expect(location(res)).toBe('/settings/profile?saved=1');
      const stored = (await getPersonById(t.services, person.id))?.avatarUrl as string;
      expect(stored).toMatch(/^\/avatars\/\d+\/[0-9a-f]{32}\.png$/);
      await served(stored, png, 'image/png');
      expect((await agent.get('/settings/profile')).body).toContain(`src="${stored}"`);
      // Not an image: the page says why, nothing changes.
      const bad = await post(csrf, await multipartBody({ do: 'upload' }, [{ field: 'image', filename: 'x.png', type: 'image/png', data: 'not a png' }]));
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('not a PNG, JPEG, GIF or WebP');
      expect((await getPersonById(t.services, person.id))?.avatarUrl).toBe(stored);
      const removed = await post(csrf, await multipartBody({ do: 'remove' }, []));
      expect(removed.statusCode).toBe(303);
      expect((await getPersonById(t.services, person.id))?.avatarUrl).toBeNull();
      expect((await t.app.inject({ method: 'GET', url: stored })).statusCode).toBe(404);
    });

    it("the server settings, app portal and Integrations pages upload a server's icon, an app's icon and a webhook's avatar, show them, and keep them when the URL field is saved empty", async () => {
      const { agent, person } = await given.signedIn(t);
      const server = await given.server(t, { owner: person });
      const client = await given.confidentialApp(t, { owner: person });
      const w = await given.webhook(t, { channel: server.channels[0] });
      const cookie = () => [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const upload = async (page: string, action: string, data: Buffer) => {
        const html = (await agent.get(page)).body;
        expect(html, page).toContain(`action="${action.replace(/&/g, '&amp;')}`);
        const csrf = await csrfFrom(agent, page);
        const form = await multipartBody({ do: 'upload' }, [{ field: 'image', filename: 'i.png', type: 'image/png', data }]);
        const url = `${action}${action.includes('?') ? '&' : '?'}_csrf=${encodeURIComponent(csrf)}`;
        return t.app.inject({ method: 'POST', url, payload: form.payload, headers: { ...form.headers, cookie: cookie(), origin: 'http://localhost:8080' } });
      };

      const icon = pngHeader(32, 32, 901);
      const r1 = await upload(`/servers/${server.id}/settings`, `/servers/${server.id}/settings/icon`, icon);
      expect(r1.statusCode, r1.body.slice(0, 300)).toBe(303);
      const serverIcon = (await t.services.db.selectFrom('servers').select('icon_url').where('id', '=', server.id).executeTakeFirstOrThrow()).icon_url as string;
      await served(serverIcon, icon, 'image/png');
      expect((await agent.get(`/servers/${server.id}/settings`)).body).toContain(`src="${serverIcon}"`);
      // The rename form, sent with its (empty) URL field, keeps the uploaded icon.
      const renamed = await agent.submit(`/servers/${server.id}/settings`, `/servers/${server.id}/settings`, { name: 'Renamed', iconUrl: '' });
      expect(renamed.statusCode).toBe(303);
      expect((await t.services.db.selectFrom('servers').select('icon_url').where('id', '=', server.id).executeTakeFirstOrThrow()).icon_url).toBe(serverIcon);
      const badIcon = await upload(`/servers/${server.id}/settings`, `/servers/${server.id}/settings/icon`, Buffer.from('not an image'));
      expect(badIcon.statusCode).toBe(400);
      expect(badIcon.body).toContain('not a PNG, JPEG, GIF or WebP');

      const appIcon = pngHeader(32, 32, 902);
      const r2 = await upload(`/developers/applications/${client.app.id}`, `/developers/applications/${client.app.id}/icon`, appIcon);
      expect(r2.statusCode, r2.body.slice(0, 300)).toBe(303);
      const storedAppIcon = (await t.services.db.selectFrom('applications').select('icon_url').where('id', '=', client.app.id).executeTakeFirstOrThrow()).icon_url as string;
      expect(storedAppIcon).toMatch(/^\/app-icons\//);
      await served(storedAppIcon, appIcon, 'image/png');

      const hookAvatar = pngHeader(32, 32, 903);
      const integrations = `/servers/${server.id}/settings/integrations`;
      const r3 = await upload(integrations, `/webhooks/${w.webhook.id}/avatar?back=server`, hookAvatar);
      expect(r3.statusCode, r3.body.slice(0, 300)).toBe(303);
      expect(location(r3)).toBe(`${integrations}?done=webhook-saved#webhook-${w.webhook.id}`);
      const hook = (await t.app.inject({ method: 'GET', url: w.path })).json() as { avatar: string };
      await served(`/avatars/${w.webhook.id}/${hook.avatar}.png`, hookAvatar, 'image/png');
    });
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { holdOnce, REVEAL_TTL_MS, takeOnce } from '../../src/modules/reveals/reveals.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, signedIn } from '../support/directory-fixtures.js';
import { answerConsent, authorizePath, createApp, requestFor } from './authorize.fixtures.js';
import { createBot, userInstall } from './dms.fixtures.js';
import { PageAgent } from '../support/page-agent.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

/**
 * Issue #24, "Managing": every destructive action asks once with what it removes, and every create
 * form redirects (POST → 303 → GET) with its one-time secret shown once on the page it leads to.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function rows(table: 'invites' | 'webhooks' | 'applications', column: 'server_id' | 'owner_id', value: string): Promise<number> {
  return (await t.services.db.selectFrom(table).select('id').where(column as never, '=', value as never).execute()).length;
}

describe('create forms redirect, and the secret is shown once', () => {
  it('an invite link: POST answers 303; the page shows the new link once, then in the list of active links; reloading creates nothing', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Reloaders' });
    const page = `/servers/${server.id}/settings/invites`;
    const posted = await owner.agent.submit(page, `/servers/${server.id}/invites`, { expiresIn: '604800', maxUses: '' });
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toBe(`${page}?done=invite-created`);
    expect(String(posted.headers.location)).not.toContain('ghinv_');

    const first = await owner.agent.get(String(posted.headers.location));
    expect(first.headers['cache-control']).toBe('no-store');
    const link = /http:\/\/localhost:8080\/invite\/ghinv_[A-Za-z0-9_-]+/.exec(first.body)?.[0];
    expect(link).toBeDefined();
    expect(first.body).toContain('Invite link created.');
    // Selectable text without JavaScript, and a Copy button app.js reveals.
    expect(first.body).toContain(`<input id="invite-url" type="text" readonly data-select value="${link}"`);
    expect(first.body).toContain('data-copy="invite-url" hidden>Copy</button>');

    const reload = await owner.agent.get(String(posted.headers.location));
    expect(reload.statusCode).toBe(200);
    expect(reload.body).not.toContain('id="invite-url"');
    // Issue #24: every active link listed with its code, to copy again; the page is never cached.
    expect(reload.headers['cache-control']).toBe('no-store');
    expect(reload.body.match(/http:\/\/localhost:8080\/invite\/ghinv_[A-Za-z0-9_-]+/g)).toEqual([link]);
    expect(await rows('invites', 'server_id', server.id)).toBe(1);
  });

  it('a webhook: one row whatever the reloads, its URL on the first GET only', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Hooks' });
    const page = `/servers/${server.id}/settings/integrations`;
    const posted = await owner.agent.submit(page, `${page}/webhooks`, { name: 'Deploys', channelId: server.channels[0]?.id as string });
    expect(posted.statusCode).toBe(303);
    expect(String(posted.headers.location)).toMatch(new RegExp(`^${page}#webhook-\\d+$`));
    const first = await owner.agent.get(String(posted.headers.location));
    expect(first.body).toMatch(/\/api\/v1\/webhooks\/\d+\/ghwt_/);
    const again = await owner.agent.get(String(posted.headers.location));
    expect(again.body).not.toContain('ghwt_');
    expect(again.body).toContain('Deploys');
    expect(await rows('webhooks', 'server_id', server.id)).toBe(1);
  });

  it('an application and its bot: the client secret and the bot token each on one GET', async () => {
    const { agent, person } = await signedIn(t);
    const posted = await agent.submit('/developers/applications', '/developers/applications', { name: 'Once Only', clientType: 'confidential' });
    expect(posted.statusCode).toBe(303);
    const detail = String(posted.headers.location);
    expect(detail).toMatch(/^\/developers\/applications\/\d+$/);
    const first = await agent.get(detail);
    expect(first.body).toMatch(/ghcs_[A-Za-z0-9_-]{43}/);
    expect(first.body).toContain('Application created.');
    expect((await agent.get(detail)).body).not.toMatch(/ghcs_/);
    expect(await rows('applications', 'owner_id', person.id)).toBe(1);

    const bot = await agent.submit(detail, `${detail}/bot`, {});
    expect(bot.statusCode).toBe(303);
    expect(bot.headers.location).toBe(`${detail}#bot`);
    expect((await agent.get(detail)).body).toMatch(/ghbt_/);
    expect((await agent.get(detail)).body).not.toMatch(/ghbt_/);
  });

  it('the held secret is for that session only, read once, and gone after five minutes', async () => {
    const deps = t.services;
    await holdOnce(deps, 'session-a', 'test', { secret: 'kept' });
    expect(await takeOnce(deps, 'session-b', 'test')).toBeUndefined();
    expect(await takeOnce(deps, 'session-a', 'other')).toBeUndefined();
    expect(await takeOnce(deps, 'session-a', 'test')).toEqual({ secret: 'kept' });
    expect(await takeOnce(deps, 'session-a', 'test')).toBeUndefined();

    await holdOnce(deps, 'session-a', 'test', 'late');
    const stored = JSON.stringify(await deps.db.selectFrom('one_time_reveals').select(['id', 'session_hash', 'sealed']).execute());
    expect(stored).not.toContain('late');
    expect(stored).not.toContain('session-a');
    t.clock.advance(REVEAL_TTL_MS + 1);
    expect(await takeOnce(deps, 'session-a', 'test')).toBeUndefined();
  });
});

describe('destructive actions ask once, naming what they remove', () => {
  it('deleting a channel: the list links to a question with its message count; only the POST deletes', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Chatty' });
    const channelId = server.channels[0]?.id as string;
    for (const text of ['one', 'two', 'three']) await postMessage(t.services, actingOf(person(owner.person.id)), channelId, text);
    const path = `/servers/${server.id}/channels/${channelId}/delete`;

    const list = await owner.agent.get(`/servers/${server.id}/settings/channels`);
    expect(list.body).toContain(`href="${path}"`);
    expect(list.body).not.toContain(`action="${path}"`);

    const confirm = await owner.agent.get(path);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('<h1>Delete # general?</h1>');
    expect(confirm.body).toContain('All 3 messages in it are deleted with it.');
    expect(confirm.body).toContain(`action="${path}"`);
    expect(confirm.body).toContain(`href="/servers/${server.id}/settings/channels"`);
    expect(await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', channelId).execute()).toHaveLength(3);

    const done = await owner.agent.submit(path, path, {});
    expect(done.statusCode).toBe(303);
    expect(await t.services.db.selectFrom('channels').select('id').where('id', '=', channelId).executeTakeFirst()).toBeUndefined();
    expect((await owner.agent.get(path)).statusCode).toBe(404);
  });

  it('the channel question is for Manage channels only: 403 for a member without it, 404 for a stranger', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Guarded' });
    const member = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id, []);
    const stranger = await signedIn(t);
    const path = `/servers/${server.id}/channels/${server.channels[0]?.id}/delete`;
    expect((await member.agent.get(path)).statusCode).toBe(403);
    expect((await stranger.agent.get(path)).statusCode).toBe(404);
  });

  it('removing a member: a question naming them and the server, then the POST removes', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Club' });
    const member = await signedIn(t, { name: 'Rita Removed' });
    await addMember(t.services, operatorActing(), server.id, member.person.id, []);
    const path = `/servers/${server.id}/members/${member.person.id}/remove`;

    const list = await owner.agent.get(`/servers/${server.id}/settings/members`);
    expect(list.body).toContain(`href="${path}"`);
    const confirm = await owner.agent.get(path);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Remove Rita Removed from Club?');
    expect(confirm.body).toContain(`@${member.person.username}`);
    expect(await t.services.db.selectFrom('members').select('user_id').where('server_id', '=', server.id).execute()).toHaveLength(2);

    const res = await owner.agent.postRaw(path, { _csrf: await csrfFrom(owner.agent, path) });
    expect(res.statusCode).toBe(303);
    expect(await t.services.db.selectFrom('members').select('user_id').where('server_id', '=', server.id).execute()).toHaveLength(1);
  });

  it('no question about the owner or someone out of reach', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Ranks' });
    const kicker = await signedIn(t);
    const kickers = await createRole(t.services, operatorActing(), server.id, { name: 'Kickers', permissions: Permission.KICK_MEMBERS });
    const admins = await createRole(t.services, operatorActing(), server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR });
    await addMember(t.services, operatorActing(), server.id, kicker.person.id, [kickers.id]);
    const admin = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, admin.person.id, [admins.id]);
    expect((await kicker.agent.get(`/servers/${server.id}/members/${owner.person.id}/remove`)).statusCode).toBeGreaterThanOrEqual(400);
    expect((await kicker.agent.get(`/servers/${server.id}/members/${admin.person.id}/remove`)).statusCode).toBe(403);
  });

  it('deauthorizing an app: a question naming what it may no longer do; only the POST ends its access', async () => {
    const { agent, person } = await signedIn(t);
    const { app } = await createApp(t, person, { name: 'Reader Deluxe' });
    await answerConsent(agent, authorizePath(requestFor(app, { scope: 'identify', prompt: 'consent' })), 'authorize');
    const path = `/settings/authorized-apps/${app.id}/deauthorize`;
    expect((await agent.get('/settings/authorized-apps')).body).toContain(`href="${path}"`);
    const confirm = await agent.get(path);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Deauthorize Reader Deluxe?');
    expect(confirm.body).toContain('every token it holds stops working');
    expect(confirm.body).toContain(`action="${path}"`);
    expect((await agent.get('/settings/authorized-apps')).body).toContain('Reader Deluxe');
    expect((await agent.postRaw(path, { _csrf: await csrfFrom(agent, path) })).statusCode).toBe(303);
    expect((await agent.get(path)).statusCode).toBe(404);
  });

  it('removing an app installed for yourself: a question, then the POST removes it', async () => {
    const { agent, person } = await signedIn(t);
    const bot = await createBot(t, { name: 'Pocket Helper' });
    await userInstall(t, bot, person);
    const path = `/settings/apps/${bot.client.app.id}/remove`;
    const confirm = await agent.get(path);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Remove Pocket Helper from your apps?');
    expect((await agent.get('/settings/apps')).body).toContain('Pocket Helper');
    expect((await agent.postRaw(path, { _csrf: await csrfFrom(agent, path) })).statusCode).toBe(303);
    expect((await agent.get(path)).statusCode).toBe(404);
  });
});

describe('channels: rename, topic, order', () => {
  async function names(serverId: string): Promise<string[]> {
    const list = await t.services.db.selectFrom('channels').select(['name', 'position', 'id']).where('server_id', '=', serverId).orderBy('position').orderBy('id').execute();
    return list.map((c) => c.name);
  }

  it('a channel is renamed with the slug rule ("Dev Ops!" → dev-ops) and given a topic', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Renames' });
    const channelId = server.channels[0]?.id as string;
    const page = `/servers/${server.id}/settings/channels`;
    const list = await owner.agent.get(page);
    expect(list.body).toContain('data-channel-slug');
    expect(list.body).toMatch(/<script src="\/assets\/channel-name\.[0-9a-f]+\.js" defer><\/script>/);
    const res = await owner.agent.submit(page, `/servers/${server.id}/channels/${channelId}`, { name: 'Dev Ops!', topic: '  Where deploys are discussed ' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${page}?done=channel-saved#channel-${channelId}`);
    const row = await t.services.db.selectFrom('channels').select(['name', 'topic']).where('id', '=', channelId).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: 'dev-ops', topic: 'Where deploys are discussed' });
    const cleared = await owner.agent.submit(page, `/servers/${server.id}/channels/${channelId}`, { name: 'dev-ops', topic: '' });
    expect(cleared.statusCode).toBe(303);
    expect((await t.services.db.selectFrom('channels').select('topic').where('id', '=', channelId).executeTakeFirstOrThrow()).topic).toBeNull();

    const bad = await owner.agent.submit(page, `/servers/${server.id}/channels/${channelId}`, { name: '!!!', topic: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('A channel name is 1–100 letters');
    expect(bad.body).toContain('value="!!!"');
    expect(await names(server.id)).toEqual(['dev-ops']);
  });

  it('channels move up and down one place; the ends stay put; without Manage channels, 403', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Order' });
    const second = await createChannel(t.services, operatorActing(), server.id, { name: 'second' });
    await createChannel(t.services, operatorActing(), server.id, { name: 'third' });
    const page = `/servers/${server.id}/settings/channels`;
    const move = (id: string, direction: string) => owner.agent.submit(page, `/servers/${server.id}/channels/${id}/move`, { direction });
    expect((await move(second.id, 'up')).statusCode).toBe(303);
    expect(await names(server.id)).toEqual(['second', 'general', 'third']);
    await move(second.id, 'up');
    expect(await names(server.id)).toEqual(['second', 'general', 'third']);
    await move(second.id, 'down');
    await move(second.id, 'down');
    expect(await names(server.id)).toEqual(['general', 'third', 'second']);
    expect((await move(second.id, 'sideways')).statusCode).toBe(400);

    const member = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id, []);
    const refused = await member.agent.postRaw(`/servers/${server.id}/channels/${second.id}/move`, { direction: 'up', _csrf: await csrfFrom(member.agent) });
    expect(refused.statusCode).toBe(403);
    expect(await names(server.id)).toEqual(['general', 'third', 'second']);
    // The settings page lists them in that order, the first with no "up" and the last with no "down".
    const list = (await owner.agent.get(page)).body;
    expect(list.indexOf('# general')).toBeLessThan(list.indexOf('# third'));
    expect(list).toMatch(/aria-label="Move #general up"[^>]* disabled/);
    expect(list).toMatch(/aria-label="Move #second down"[^>]* disabled/);
  });
});

describe('role colours', () => {
  it('are chosen with a colour input and shown as a dot in the role list and on members', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Colours' });
    const page = `/servers/${server.id}/settings/roles`;
    const form = await owner.agent.get(page);
    expect(form.body).toContain('<input id="role-color" name="color" type="color" value="#000000"');
    const res = await owner.agent.submit(page, `/servers/${server.id}/roles`, { name: 'Blurple', color: '#5865f2', permissions: [] });
    expect(res.statusCode).toBe(303);
    const none = await owner.agent.submit(page, `/servers/${server.id}/roles`, { name: 'Plain', color: '#000000', permissions: [] });
    expect(none.statusCode).toBe(303);
    const roles = await t.services.db.selectFrom('roles').select(['name', 'color']).where('server_id', '=', server.id).execute();
    expect(roles.map((r) => [r.name, Number(r.color)]).filter(([name]) => name !== '@everyone')).toEqual([
      ['Blurple', 0x5865f2],
      ['Plain', 0],
    ]);
    const list = (await owner.agent.get(page)).body;
    expect(list.match(/<circle[^>]*fill="#5865f2"/g)).toHaveLength(1);
    const blurple = (await t.services.db.selectFrom('roles').select('id').where('name', '=', 'Blurple').executeTakeFirstOrThrow()).id;
    await addMember(t.services, operatorActing(), server.id, (await signedIn(t)).person.id, [String(blurple)]);
    expect((await owner.agent.get(`/servers/${server.id}/settings/members`)).body).toMatch(/<span class="pill"><svg class="role-dot"[^>]*><circle[^>]*fill="#5865f2"\/><\/svg> Blurple<\/span>/);
  });
});

describe('server name and icon', () => {
  it('are edited in Overview; the icon must be https, empty removes it', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Iconic' });
    const page = `/servers/${server.id}/settings`;
    const saved = await owner.agent.submit(page, page, { name: 'Iconic Two', iconUrl: 'https://img.example/icon.png' });
    expect(saved.statusCode).toBe(303);
    const row = () => t.services.db.selectFrom('servers').select(['name', 'icon_url']).where('id', '=', server.id).executeTakeFirstOrThrow();
    expect(await row()).toEqual({ name: 'Iconic Two', icon_url: 'https://img.example/icon.png' });
    const shown = await owner.agent.get(`${page}?done=renamed`);
    expect(shown.body).toContain('<img class="avatar" src="https://img.example/icon.png"');
    expect(shown.body).toContain('Server settings saved.');

    const bad = await owner.agent.submit(page, page, { name: 'Iconic Two', iconUrl: 'http://img.example/icon.png' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Must be an https:// URL.');
    expect(bad.body).toContain('value="http://img.example/icon.png"');
    await owner.agent.submit(page, page, { name: 'Iconic Two', iconUrl: '' });
    expect((await row()).icon_url).toBeNull();
  });
});

describe('the current section is marked', () => {
  it('in the top bar and the settings menu with aria-current="page"', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Marked' });
    const current = async (url: string) => [...(await owner.agent.get(url)).body.matchAll(/<a href="([^"]+)"[^>]* aria-current="page">/g)].map((m) => m[1]);
    expect(await current(`/servers/${server.id}/settings/channels`)).toEqual(['/', `/servers/${server.id}/settings/channels`]);
    expect(await current('/developers/applications')).toEqual(['/developers/applications']);
    expect(await current('/settings/authorized-apps')).toContain('/settings/profile');
    expect(await current('/')).toEqual(['/']);
  });
});

describe('the sign-in page reached from an authorization link', () => {
  it('names the app that is asking; other sign-ins do not', async () => {
    const { person } = await signedIn(t);
    const { app } = await createApp(t, person, { name: 'Photo <Printer>' });
    const visitor = new PageAgent(t.app);
    const start = await visitor.get(authorizePath(requestFor(app, { scope: 'identify' })));
    expect(start.statusCode).toBe(303);
    const login = await visitor.get(String(start.headers.location));
    expect(login.statusCode).toBe(200);
    expect(login.body).toContain('<strong>Photo &lt;Printer&gt;</strong> wants to access your');
    // A refused attempt names it again.
    const loginUrl = String(start.headers.location);
    const next = new URL(loginUrl, 'http://x').searchParams.get('next') ?? '';
    const refused = await visitor.submit(loginUrl, loginUrl, { username: person.username, password: 'not the password at all', next });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('<strong>Photo &lt;Printer&gt;</strong> wants to access your');
    expect((await visitor.get('/login')).body).not.toContain('wants to access your');
    expect((await visitor.get('/login?next=%2Fapp%2Foauth2%2Fauthorize%3Fclient_id%3D999')).body).not.toContain('wants to access your');
  });
});

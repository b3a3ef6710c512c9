import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer, memberPermissions, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, runCommand, signedIn } from '../support/directory-fixtures.js';
import { PageAgent } from '../support/page-agent.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function channelNames(serverId: string): Promise<string[]> {
  const rows = await t.services.db.selectFrom('channels').select('name').where('server_id', '=', serverId).orderBy('position').orderBy('id').execute();
  return rows.map((r) => r.name);
}

async function messageCount(channelId: string): Promise<number> {
  return (await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', channelId).execute()).length;
}

async function ownedServer(): Promise<{ server: CreatedServer; owner: PageAgent; ownerId: string; general: string }> {
  const owner = await signedIn(t, { name: 'Olive Owner' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Chatter' });
  return { server, owner: owner.agent, ownerId: owner.person.id, general: server.channels[0]?.id as string };
}

const channelsPage = (serverId: string) => `/servers/${serverId}/settings/channels`;

describe('channels', () => {
  it('Manage channels creates one; its name is lower-cased with spaces turned into dashes', async () => {
    const { server, owner } = await ownedServer();
    const res = await owner.submit(channelsPage(server.id), `/servers/${server.id}/channels`, { name: ' Release Notes ', topic: 'What shipped' });
    expect(res.statusCode).toBe(303);
    expect((await owner.get(location(res))).body).toContain('Channel created.');
    expect(await channelNames(server.id)).toEqual(['general', 'release-notes']);
    const home = await owner.get('/');
    expect(home.body).toContain('# release-notes');
  });

  it('bad names and topics re-render with a message and create nothing', async () => {
    const { server, owner } = await ownedServer();
    const cases: Array<[Record<string, string>, string]> = [
      [{ name: '' }, 'A channel name is 1–100 letters'],
      // Punctuation is dropped (the Discord slug, channels.ts); nothing left is refused.
      [{ name: '!?!' }, 'A channel name is 1–100 letters'],
      [{ name: 'c'.repeat(101) }, 'A channel name is 1–100 letters'],
      [{ name: 'ok', topic: 't'.repeat(1025) }, 'A topic is at most 1024 characters.'],
    ];
    for (const [fields, message] of cases) {
      const res = await owner.submit(channelsPage(server.id), `/servers/${server.id}/channels`, fields);
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.body).toContain(message);
    }
    expect(await channelNames(server.id)).toEqual(['general']);
  });

  it('without Manage channels a member gets 403 and nothing is created or deleted', async () => {
    const { server, general } = await ownedServer();
    const member = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    expect((await member.agent.get(channelsPage(server.id))).statusCode).toBe(403);
    const token = await csrfFrom(member.agent);
    expect((await member.agent.postRaw(`/servers/${server.id}/channels`, { name: 'mine', _csrf: token })).statusCode).toBe(403);
    expect((await member.agent.postRaw(`/servers/${server.id}/channels/${general}/delete`, { _csrf: token })).statusCode).toBe(403);
    expect(await channelNames(server.id)).toEqual(['general']);
  });

  it('deleting a channel removes it and its messages; the server page then offers to create one', async () => {
    const { server, owner, ownerId, general } = await ownedServer();
    await postMessage(t.services, actingOf(person(ownerId)), general, 'soon gone');
    const res = await owner.submit(channelsPage(server.id), `/servers/${server.id}/channels/${general}/delete`, {});
    expect(res.statusCode).toBe(303);
    expect(await channelNames(server.id)).toEqual([]);
    expect(await messageCount(general)).toBe(0);
    expect((await owner.get(`/channels/${general}`)).statusCode).toBe(404);
    const empty = await owner.get(`/servers/${server.id}`);
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('This server has no channels.');
    const again = await owner.postRaw(`/servers/${server.id}/channels/${general}/delete`, { _csrf: await csrfFrom(owner) });
    expect(again.statusCode).toBe(404);
  });

  it('the CLI creates a channel and refuses a bad name', async () => {
    const { server } = await ownedServer();
    const record = await runCommand(t, 'channels create', ['--server', server.id, '--name', 'Dev Ops', '--topic', 'pipelines']);
    expect(record).toMatchObject({ guild_id: server.id, name: 'dev-ops', topic: 'pipelines', type: 0 });
    await expect(runCommand(t, 'channels create', ['--server', server.id, '--name', '#'])).rejects.toThrow('Invalid Form Body');
  });
});

describe('the channel view', () => {
  it('lists messages oldest first, newest at the bottom, escaped, with author and time', async () => {
    const { server, owner, ownerId, general } = await ownedServer();
    await postMessage(t.services, actingOf(person(ownerId)), general, 'first');
    t.clock.advance(MINUTE);
    await postMessage(t.services, actingOf(person(ownerId)), general, '<script>alert(1)</script>\nsecond line');
    const res = await owner.get(`/channels/${general}`);
    expect(res.statusCode).toBe(200);
    expect(res.body.indexOf('first')).toBeLessThan(res.body.indexOf('second line'));
    expect(res.body).not.toContain('<script>alert(1)</script>');
    expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(res.body).toContain('Olive Owner');
    expect(res.body).toMatch(/<time datetime="2026-11-21T12:0\d/);
    expect(res.body).toContain(`/servers/${server.id}/settings"`);
    expect(res.body).toContain(`action="/channels/${general}/messages`);
  });

  it('a member with Send messages posts and sees the message on the channel page', async () => {
    const { server, general } = await ownedServer();
    const member = await signedIn(t, { name: 'Pat Poster' });
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    const res = await member.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: '  Hello, channel!  ' });
    expect(res.statusCode).toBe(303);
    expect(location(res)).toBe(`/channels/${general}#post`);
    const page = await member.agent.get(`/channels/${general}`);
    expect(page.body).toContain('Hello, channel!');
    expect(page.body).toContain('Pat Poster');
    const row = await t.services.db.selectFrom('messages').selectAll().where('channel_id', '=', general).executeTakeFirstOrThrow();
    expect(row.content).toBe('Hello, channel!');
    expect(String(row.author_id)).toBe(member.person.id);
  });

  it('a member without Send messages sees no form, gets 403 when posting, and nothing is stored', async () => {
    const { server, general } = await ownedServer();
    await updateRole(t.services, operatorActing(), server.id, server.id, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.SEND_MESSAGES });
    const member = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    const page = await member.agent.get(`/channels/${general}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(`action="/channels/${general}/messages`);
    expect(page.body).toContain('You do not have permission to send messages');
    const res = await member.agent.postRaw(`/channels/${general}/messages`, { content: 'let me in', _csrf: await csrfFrom(member.agent, `/channels/${general}`) });
    expect(res.statusCode).toBe(403);
    expect(await messageCount(general)).toBe(0);

    const speakers = await createRole(t.services, operatorActing(), server.id, { name: 'Speakers', permissions: Permission.SEND_MESSAGES });
    const speaker = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, speaker.person.id, [speakers.id]);
    expect((await speaker.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: 'I may' })).statusCode).toBe(303);
    expect(await messageCount(general)).toBe(1);
  });

  it('without View channel the channel answers 403; a non-member gets 404 and cannot post', async () => {
    const { server, general } = await ownedServer();
    await updateRole(t.services, operatorActing(), server.id, server.id, { permissions: 0n });
    const member = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    expect(await memberPermissions(t.services, server.id, member.person.id)).toBe(0n);
    expect((await member.agent.get(`/channels/${general}`)).statusCode).toBe(403);

    const stranger = await signedIn(t);
    expect((await stranger.agent.get(`/channels/${general}`)).statusCode).toBe(404);
    const res = await stranger.agent.postRaw(`/channels/${general}/messages`, { content: 'hi', _csrf: await csrfFrom(stranger.agent) });
    expect(res.statusCode).toBe(404);
    expect((await stranger.agent.get('/channels/1')).statusCode).toBe(404);
    expect((await stranger.agent.get('/channels/general')).statusCode).toBe(404);
    expect(await messageCount(general)).toBe(0);
  });

  it('accepts 2000 characters, refuses 2001 and empty content with a message, keeping what was typed', async () => {
    const { owner, general } = await ownedServer();
    const limit = '🙂'.repeat(2000);
    expect((await owner.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: limit })).statusCode).toBe(303);
    expect(await messageCount(general)).toBe(1);

    const tooLong = await owner.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: `${limit}!` });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain('Must be 2000 or fewer in length.');
    expect(tooLong.body).toContain(`${limit}!</textarea>`);

    for (const content of ['', '   \n  ']) {
      const empty = await owner.submit(`/channels/${general}`, `/channels/${general}/messages`, { content });
      expect(empty.statusCode).toBe(400);
      expect(empty.body).toContain('Cannot send an empty message');
    }
    const missing = await owner.postRaw(`/channels/${general}/messages`, { _csrf: await csrfFrom(owner, `/channels/${general}`) });
    expect(missing.statusCode).toBe(400);
    expect(await messageCount(general)).toBe(1);
  });

  it('signed out, the channel page leads to sign-in and back', async () => {
    const { general } = await ownedServer();
    const res = await new PageAgent(t.app).get(`/channels/${general}`);
    expect(res.statusCode).toBe(303);
    expect(location(res)).toBe(`/login?next=${encodeURIComponent(`/channels/${general}`)}`);
  });
});

describe('seed-demo', () => {
  it('creates alice, bob and carol, a Demo Server with roles, channels and messages, and is safe to run twice', async () => {
    const first = await runCommand(t, 'seed-demo', []);
    expect(first['created']).toBe(true);
    const people = first['people'] as Array<{ id: string; username: string; password: string; role: string }>;
    expect(people.map((p) => p.username)).toEqual(['alice', 'bob', 'carol']);
    for (const p of people) expect(p.password.length).toBeGreaterThanOrEqual(8);
    const server = first['server'] as { id: string; name: string };
    expect(server.name).toBe('Demo Server');
    expect((first['channels'] as Array<{ name: string }>).map((c) => c.name)).toEqual(['general', 'announcements', 'dev']);

    const [alice, bob, carol] = people as [(typeof people)[0], (typeof people)[0], (typeof people)[0]];
    const bobBits = (await memberPermissions(t.services, server.id, bob.id)) as bigint;
    for (const bit of [Permission.MANAGE_SERVER, Permission.MANAGE_WEBHOOKS, Permission.MANAGE_MESSAGES]) expect(bobBits & bit).toBe(bit);
    expect(bobBits & Permission.ADMINISTRATOR).toBe(0n);
    expect(bobBits & Permission.BAN_MEMBERS).toBe(0n);
    expect(await memberPermissions(t.services, server.id, carol.id)).toBe(DEFAULT_EVERYONE_PERMISSIONS);
    expect((await t.services.db.selectFrom('servers').select('owner_id').where('id', '=', server.id).executeTakeFirstOrThrow()).owner_id.toString()).toBe(alice.id);
    const messages = await t.services.db.selectFrom('messages').select('id').execute();
    expect(messages.length).toBeGreaterThanOrEqual(3);

    // The printed password signs in.
    const login = await new PageAgent(t.app).submit('/login', '/login', { username: 'alice', password: alice.password });
    expect(login.statusCode).toBe(303);

    const second = await runCommand(t, 'seed-demo', []);
    expect(second['created']).toBe(false);
    expect(second['message']).toContain('already exists');
    expect((second['server'] as { id: string }).id).toBe(server.id);
    expect(JSON.stringify(second)).not.toContain(alice.password);
    expect((await t.services.db.selectFrom('servers').select('id').where('name', '=', 'Demo Server').execute()).length).toBe(1);
  });
});

describe('the channel view switches servers (issue #24: the server list beside the channels)', () => {
  it('a member of two servers sees both in the sidebar, the current one marked; a member of one sees no switcher', async () => {
    const { agent, person } = await signedIn(t, { name: 'Sam Switcher' });
    const first = await createServer(t.services, personActingOf(person.id), { name: 'First Hall' });
    const second = await createServer(t.services, personActingOf(person.id), { name: 'Second Hall' });
    const page = await agent.get(`/channels/${first.channels[0]?.id ?? ''}`);
    expect(page.statusCode).toBe(200);
    const list = /<nav class="server-list" aria-label="Your servers">[\s\S]*?<\/nav>/.exec(page.body)?.[0] ?? '';
    expect(list).toContain(`<a href="/servers/${first.id}" class="active" aria-current="true">First Hall</a>`);
    expect(list).toContain(`<a href="/servers/${second.id}">Second Hall</a>`);

    const { agent: loner, person: lonerPerson } = await signedIn(t, { name: 'Lou Loner' });
    const only = await createServer(t.services, personActingOf(lonerPerson.id), { name: 'Only Hall' });
    expect((await loner.get(`/channels/${only.channels[0]?.id ?? ''}`)).body).not.toContain('Your servers');
  });
});

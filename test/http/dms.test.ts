import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, removeMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import { createPerson } from '../support/oauth-factory.js';
import { PageAgent } from '../support/page-agent.js';
import { answerConsent } from './authorize.fixtures.js';
import { botPost, createBot, openDm, userInstall } from './dms.fixtures.js';
import { userJson } from '../support/discord-resources.js';
import { operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function dmRows(): Promise<number> {
  return (await t.services.db.selectFrom('dm_channels').select('channel_id').execute()).length;
}

describe('opening a direct message (POST /api/v1/users/@me/channels)', () => {
  it('a person who user-installed the app gets a DM from its bot and reads it on the Direct messages page', async () => {
    const { agent, person } = await signedIn(t, { name: 'Dana Doe' });
    const bot = await createBot(t, { name: 'Forecast' });
    await userInstall(t, bot, person);

    const opened = await openDm(t, bot, { recipientId: person.id });
    expect(opened.statusCode).toBe(200);
    const channel = opened.json() as { id: string; type: number; recipients: Array<Record<string, unknown>> };
    expect(channel.type).toBe(1);
    expect(channel).toMatchObject({ type: 1, last_message_id: null });
    expect(channel.recipients).toEqual([userJson({ id: person.id, username: person.username, global_name: 'Dana Doe', avatar_url: null, bot: false })]);

    const posted = await botPost(t, bot, channel.id, { content: 'Rain expected at **noon**. @everyone' });
    expect(posted.statusCode).toBe(200);
    expect(posted.json()).toMatchObject({ channel_id: channel.id, author: { id: bot.botUserId, bot: true }, mentions: [], mention_everyone: false });

    const list = await agent.get('/messages');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`href="/messages/${channel.id}"`);
    expect(list.body).toContain('Forecast');
    expect(list.body).toMatch(/<span class="badge"[^>]*>BOT<\/span>/);
    expect(list.body).toContain('Rain expected at **noon**. @everyone');

    const page = await agent.get(`/messages/${channel.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<strong>noon</strong>');
    expect(page.body).toMatch(/<span class="author">Forecast<\/span><span class="badge"[^>]*>APP<\/span>/);
    expect(page.body).toContain(`data-live="/channels/${channel.id}/events"`);
    expect(page.body).toContain('You can’t reply here');
    expect(page.body).not.toContain('<textarea');
  });

  it('a user install through the consent screen (applications.commands, no bot) lets the bot DM the person', async () => {
    const { agent, person } = await signedIn(t);
    const bot = await createBot(t, { name: 'Concierge' });
    expect((await openDm(t, bot, { recipientId: person.id })).statusCode).toBe(403);
    const answer = await answerConsent(agent, `/app/oauth2/authorize?client_id=${bot.client.app.id}&scope=applications.commands`, 'authorize');
    expect(answer.statusCode).toBeLessThan(400);
    expect((await agent.get('/settings/apps')).body).toContain('Concierge');
    const opened = await openDm(t, bot, { recipientId: person.id });
    expect(opened.statusCode).toBe(200);
    const channelId = (opened.json() as { id: string }).id;
    expect((await botPost(t, bot, channelId, { content: 'Welcome aboard' })).statusCode).toBe(200);
    expect((await agent.get(`/messages/${channelId}`)).body).toContain('Welcome aboard');
  });

  it('opening again returns the same channel; Discord’s recipient_id is accepted', async () => {
    const person = await createPerson(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const first = await openDm(t, bot, { recipientId: person.id });
    const second = await openDm(t, bot, { recipient_id: person.id, unknownKey: true });
    expect(second.statusCode).toBe(200);
    expect((second.json() as { id: string }).id).toBe((first.json() as { id: string }).id);
    const rows = await t.services.db.selectFrom('channels').select(['type', 'server_id', 'name']).where('id', '=', (first.json() as { id: string }).id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: '', server_id: null });
    expect(Number(rows[0]?.type)).toBe(1);
  });

  it('many opens at once create exactly one channel for the pair', async () => {
    const person = await createPerson(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const before = await dmRows();
    const answers = await Promise.all(Array.from({ length: 8 }, () => openDm(t, bot, { recipientId: person.id })));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => (a.json() as { id: string }).id)).size).toBe(1);
    expect(await dmRows()).toBe(before + 1);
  });

  it('without a user install and without a shared server: 403, code 50007, and no channel', async () => {
    const person = await createPerson(t);
    const bot = await createBot(t);
    const before = await dmRows();
    const res = await openDm(t, bot, { recipientId: person.id });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 50007, message: 'Cannot send messages to this user' });
    expect(await dmRows()).toBe(before);
  });

  it('sharing a server with the bot suffices, and leaving it ends that', async () => {
    const person = await createPerson(t);
    const bot = await createBot(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Hangout' });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    const res = await openDm(t, bot, { recipientId: person.id });
    expect(res.statusCode).toBe(200);
    const channelId = (res.json() as { id: string }).id;
    expect((await botPost(t, bot, channelId, { content: 'hi' })).statusCode).toBe(200);

    await removeMember(t.services, operatorActing(), server.id, bot.botUserId);
    const again = await openDm(t, bot, { recipientId: person.id });
    expect(again.statusCode).toBe(403);
    expect((again.json() as { code: number }).code).toBe(50007);
    const post = await botPost(t, bot, channelId, { content: 'still there?' });
    expect(post.statusCode).toBe(403);
    expect((post.json() as { code: number }).code).toBe(50007);
  });

  it('being in two different servers is not sharing one', async () => {
    const person = await createPerson(t);
    const other = await createPerson(t);
    const bot = await createBot(t);
    await createServer(t.services, personActingOf(person.id), { name: 'Mine' });
    const theirs = await createServer(t.services, personActingOf(other.id), { name: 'Theirs' });
    await addMember(t.services, operatorActing(), theirs.id, bot.botUserId);
    expect((await openDm(t, bot, { recipientId: person.id })).statusCode).toBe(403);
  });

  it('after Remove in Settings → Installed apps the bot can neither open the DM nor post in it; what it sent stays', async () => {
    const { agent, person } = await signedIn(t);
    const bot = await createBot(t, { name: 'Reminder' });
    await userInstall(t, bot, person);
    const channelId = ((await openDm(t, bot, { recipientId: person.id })).json() as { id: string }).id;
    expect((await botPost(t, bot, channelId, { content: 'Water the plants' })).statusCode).toBe(200);

    const removed = await agent.submit('/settings/apps', `/settings/apps/${bot.client.app.id}/remove`, {});
    expect(removed.statusCode).toBe(303);

    const open = await openDm(t, bot, { recipientId: person.id });
    expect(open.statusCode).toBe(403);
    expect((open.json() as { code: number }).code).toBe(50007);
    const post = await botPost(t, bot, channelId, { content: 'Again!' });
    expect(post.statusCode).toBe(403);
    expect((post.json() as { code: number }).code).toBe(50007);

    const page = await agent.get(`/messages/${channelId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Water the plants');
    expect(page.body).not.toContain('Again!');
    expect(page.body).toContain('It can no longer message you either');
  });

  it('a bot cannot DM itself or another bot: 50007', async () => {
    const bot = await createBot(t);
    const otherBot = await createBot(t);
    // Even when they share a server.
    const owner = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Bots' });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    await addMember(t.services, operatorActing(), server.id, otherBot.botUserId);
    for (const recipientId of [bot.botUserId, otherBot.botUserId]) {
      const res = await openDm(t, bot, { recipientId });
      expect(res.statusCode, recipientId).toBe(403);
      expect((res.json() as { code: number }).code).toBe(50007);
    }
  });

  it('a missing, malformed or unknown recipient is 400, code 50035, at the key that was sent', async () => {
    const bot = await createBot(t);
    const cases: Array<[unknown, string, string]> = [
      [{}, 'recipientId', 'BASE_TYPE_REQUIRED'],
      [{ recipientId: 'abc' }, 'recipientId', 'NUMBER_TYPE_COERCE'],
      [{ recipient_id: '-1' }, 'recipient_id', 'NUMBER_TYPE_COERCE'],
      [{ recipientId: { id: 1 } }, 'recipientId', 'NUMBER_TYPE_COERCE'],
      [{ recipientId: '99999999999999999999' }, 'recipientId', 'NUMBER_TYPE_COERCE'],
      [{ recipientId: '123456789012345678' }, 'recipientId', 'USER_UNKNOWN'],
    ];
    for (const [body, key, code] of cases) {
      const res = await openDm(t, bot, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      const answer = res.json() as { code: number; errors: Record<string, { _errors: Array<{ code: string }> }> };
      expect(answer.code).toBe(50035);
      expect(answer.errors[key]?._errors[0]?.code, JSON.stringify(body)).toBe(code);
    }
    const notObject = await openDm(t, bot, ['x']);
    expect(notObject.statusCode).toBe(400);
    expect((notObject.json() as { code: number }).code).toBe(50035);
  });

  it('needs bot credentials: no header, a Bearer token or a wrong token is 401', async () => {
    const person = await createPerson(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    for (const authorization of [undefined, `Bearer ${bot.token}`, 'Bot not-a-real-token', `Bot ${bot.token}x`]) {
      const res = await openDm(t, bot, { recipientId: person.id }, authorization === undefined ? {} : { authorization });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect((res.json() as { code: number }).code).toBe(0);
    }
  });
});

describe('the Direct messages pages', () => {
  it('a long conversation opens at its newest 50 and pages back with ?before= (issue #24), a junk before refused with 400', async () => {
    const { agent, person } = await signedIn(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const channelId = ((await openDm(t, bot, { recipientId: person.id })).json() as { id: string }).id;
    // One post a second: a bot may post 5 messages per 5 s in a channel (docs/bots.md "Rate limits").
    for (let i = 1; i <= 60; i += 1) {
      t.clock.advance(1000);
      expect((await botPost(t, bot, channelId, { content: `note ${i}.` })).statusCode).toBe(200);
    }

    const newest = await agent.get(`/messages/${channelId}`);
    expect(newest.statusCode).toBe(200);
    expect(newest.body).toContain('note 60.');
    expect(newest.body).toContain('note 11.');
    expect(newest.body).not.toContain('note 10.');
    expect(newest.body).toContain('data-live=');
    const older = /href="(\/messages\/\d+\?before=\d+)" rel="prev">Load older messages/.exec(newest.body)?.[1];
    expect(older).toBeDefined();

    const page = await agent.get(older as string);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('note 1.');
    expect(page.body).toContain('note 10.');
    expect(page.body).not.toContain('note 11.');
    expect(page.body).toContain('This is the start of your conversation.');
    expect(page.body).toContain('Jump to present');
    expect(page.body).not.toContain('data-live=');

    expect((await agent.get(`/messages/${channelId}?before=yesterday`)).statusCode).toBe(400);
  });

  it('only the two participants may see a conversation; anyone else, and unknown or malformed ids, get 404', async () => {
    const { person } = await signedIn(t);
    const stranger = await signedIn(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const channelId = ((await openDm(t, bot, { recipientId: person.id })).json() as { id: string }).id;
    await botPost(t, bot, channelId, { content: 'A secret for you' });

    for (const url of [`/messages/${channelId}`, '/messages/123456789012345678', '/messages/nope']) {
      const res = await stranger.agent.get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).toContain('Conversation not found');
      expect(res.body).not.toContain('A secret for you');
    }
    expect((await stranger.agent.get('/messages')).body).not.toContain(channelId);
  });

  it('a server channel is not a conversation: /messages/<server channel> is 404 even for its members', async () => {
    const { agent, person } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Own' });
    const res = await agent.get(`/messages/${server.channels[0]?.id}`);
    expect(res.statusCode).toBe(404);
  });

  it('signed out, the pages send you to sign in and back', async () => {
    const anon = new PageAgent(t.app);
    const res = await anon.get('/messages');
    expect(res.statusCode).toBe(303);
    expect(res.headers['location']).toBe('/login?next=%2Fmessages');
  });

  it('lists conversations with the most recently active first, and says so when there are none', async () => {
    const { agent, person } = await signedIn(t);
    expect((await agent.get('/messages')).body).toContain('No direct messages yet.');
    const older = await createBot(t, { name: 'Older Bot' });
    const newer = await createBot(t, { name: 'Newer Bot' });
    for (const bot of [older, newer]) await userInstall(t, bot, person);
    const olderDm = ((await openDm(t, older, { recipientId: person.id })).json() as { id: string }).id;
    const newerDm = ((await openDm(t, newer, { recipientId: person.id })).json() as { id: string }).id;
    // The older conversation gets the latest message, so it comes first.
    t.clock.advance(60_000);
    await botPost(t, newer, newerDm, { content: 'first' });
    t.clock.advance(60_000);
    await botPost(t, older, olderDm, { content: 'latest' });
    const body = (await agent.get('/messages')).body;
    expect(body.indexOf(`/messages/${olderDm}`)).toBeGreaterThan(-1);
    expect(body.indexOf(`/messages/${olderDm}`)).toBeLessThan(body.indexOf(`/messages/${newerDm}`));
  });

  it('shows messages oldest first, the newest at the bottom, with embeds', async () => {
    const { agent, person } = await signedIn(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    const channelId = ((await openDm(t, bot, { recipientId: person.id })).json() as { id: string }).id;
    await botPost(t, bot, channelId, { content: 'one' });
    t.clock.advance(1000);
    await botPost(t, bot, channelId, { embeds: [{ title: 'Two as an embed', description: 'details' }] });
    const body = (await agent.get(`/messages/${channelId}`)).body;
    expect(body.indexOf('>one<')).toBeGreaterThan(-1);
    expect(body.indexOf('Two as an embed')).toBeGreaterThan(body.indexOf('>one<'));
  });

  it('the main navigation links to Messages', async () => {
    const { agent } = await signedIn(t);
    expect((await agent.get('/')).body).toContain('<a href="/messages">Messages</a>');
  });
});

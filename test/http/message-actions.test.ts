import { beforeAll, describe, expect, it, vi } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { Permission } from '../../src/core/permissions.js';
import { addMember, leaveServer, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import type { TestApp } from '../support/app.js';
import { csrfFrom, location, signedIn } from '../support/directory-fixtures.js';
import type { PageAgent } from '../support/page-agent.js';
import { liveStreams, type SseReader } from '../support/sse.js';
import { stored } from '../support/stored.js';
import { botPost, createBot, openDm, userInstall } from './dms.fixtures.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

/**
 * Writing in a channel (issue #24): people edit and delete their own messages; Manage messages
 * deletes anyone's; the pages work as plain forms (POST → 303 → GET) and answer the page scripts
 * with JSON; open live views learn of edits and deletes.
 */

const live = liveStreams();
let t: TestApp;
beforeAll(() => {
  t = live.t;
});

type SignedIn = Awaited<ReturnType<typeof signedIn>>;

async function room(): Promise<{ server: CreatedServer; general: string; owner: SignedIn; member: SignedIn; moderator: SignedIn }> {
  const owner = await signedIn(t, { name: 'Olive Owner' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Writers' });
  const member = await signedIn(t, { name: 'Mia Member' });
  await addMember(t.services, operatorActing(), server.id, member.person.id);
  const mods = await createRole(t.services, operatorActing(), server.id, { name: 'Moderators', permissions: Permission.MANAGE_MESSAGES });
  const moderator = await signedIn(t, { name: 'Max Moderator' });
  await addMember(t.services, operatorActing(), server.id, moderator.person.id, [mods.id]);
  return { server, general: server.channels[0]?.id as string, owner, member, moderator };
}

async function storedMessage(id: string): Promise<{ content: string; edited_at: unknown } | undefined> {
  return t.services.db.selectFrom('messages').select(['content', 'edited_at']).where('id', '=', id).executeTakeFirst();
}

const url = (channelId: string, messageId: string, what: 'edit' | 'delete') => `/channels/${channelId}/messages/${messageId}/${what}`;

async function postAs(agent: PageAgent, action: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return agent.postRaw(action, { ...fields, _csrf: await csrfFrom(agent) }, headers);
}

const json = { accept: 'application/json' };

/** A webhook's message in a channel, stored as the execute route stores it. */
const webhookMessage = (channelId: string, content: string): Promise<string> => stored.webhookMessage(t, channelId, { content });

describe('editing one’s own message', () => {
  it('the form page holds the text as typed; saving stores it, redirects to the message and shows "(edited)"', async () => {
    const { general, member } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'Helo **world**');
    const form = await member.agent.get(url(general, m.id, 'edit'));
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('Helo **world**</textarea>');

    t.clock.advance(MINUTE);
    const saved = await member.agent.submit(url(general, m.id, 'edit'), url(general, m.id, 'edit'), { content: 'Hello **world**' });
    expect(saved.statusCode).toBe(303);
    expect(location(saved)).toBe(`/channels/${general}#m${m.id}`);
    expect(await storedMessage(m.id)).toMatchObject({ content: 'Hello **world**' });
    expect(Number((await storedMessage(m.id))?.edited_at)).toBe(t.clock.now());

    const channel = await member.agent.get(`/channels/${general}`);
    expect(channel.body).toContain('Hello <strong>world</strong>');
    expect(channel.body).toContain('(edited)');
  });

  it('asked for JSON (the page script), an edit answers the re-rendered message', async () => {
    const { general, member } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'first');
    const res = await postAs(member.agent, url(general, m.id, 'edit'), { content: 'second' }, json);
    expect(res.statusCode).toBe(200);
    const answer = res.json() as { id: string; html: string };
    expect(answer.id).toBe(m.id);
    expect(answer.html).toContain(`id="m${m.id}"`);
    expect(answer.html).toContain('second');
    expect(answer.html).toContain('(edited)');
  });

  it('an empty or too long edit comes back with its message and changes nothing', async () => {
    const { general, member } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'keep me');
    for (const [content, message] of [['   ', 'Cannot send an empty message'], ['x'.repeat(2001), 'Must be 2000 or fewer in length.']] as const) {
      const res = await member.agent.submit(url(general, m.id, 'edit'), url(general, m.id, 'edit'), { content });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain(message);
    }
    expect(await storedMessage(m.id)).toMatchObject({ content: 'keep me', edited_at: null });
  });

  it('nobody edits someone else’s message, not even the owner or a moderator: 403', async () => {
    const { general, owner, member, moderator } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'mine');
    for (const other of [owner, moderator]) {
      expect((await other.agent.get(url(general, m.id, 'edit'))).statusCode).toBe(403);
      expect((await postAs(other.agent, url(general, m.id, 'edit'), { content: 'hijacked' })).statusCode).toBe(403);
    }
    expect(await storedMessage(m.id)).toMatchObject({ content: 'mine', edited_at: null });
  });

  it('outside the server the channel does not exist (404); an unknown message is 404', async () => {
    const { general, member } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'hidden');
    const stranger = await signedIn(t);
    expect((await stranger.agent.get(url(general, m.id, 'edit'))).statusCode).toBe(404);
    expect((await postAs(stranger.agent, url(general, m.id, 'delete'), {})).statusCode).toBe(404);
    expect((await member.agent.get(url(general, '1000000000000000099', 'edit'))).statusCode).toBe(404);
    expect((await member.agent.get(url(general, 'nope', 'delete'))).statusCode).toBe(404);
    expect(await storedMessage(m.id)).toMatchObject({ content: 'hidden' });
  });
});

describe('deleting messages', () => {
  it('an author deletes their own after a confirmation page that shows the message', async () => {
    const { general, member } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'regret *this*');
    const confirm = await member.agent.get(url(general, m.id, 'delete'));
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Delete this message?');
    expect(confirm.body).toContain('regret <em>this</em>');
    expect(confirm.body).toContain(`action="/channels/${general}/messages/${m.id}/delete"`);
    expect(confirm.body).toContain(`href="/channels/${general}#m${m.id}">Cancel</a>`);
    expect(await storedMessage(m.id)).toBeDefined();

    const res = await member.agent.submit(url(general, m.id, 'delete'), url(general, m.id, 'delete'), {});
    expect(res.statusCode).toBe(303);
    expect(location(res)).toBe(`/channels/${general}`);
    expect(await storedMessage(m.id)).toBeUndefined();
  });

  it('asked for JSON, a delete answers 204', async () => {
    const { general, member } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'bye');
    expect((await postAs(member.agent, url(general, m.id, 'delete'), {}, json)).statusCode).toBe(204);
    expect(await storedMessage(m.id)).toBeUndefined();
  });

  it('without Manage messages a member cannot delete another’s message (403) and sees no Delete on it', async () => {
    const { general, owner, member } = await room();
    const m = await postMessage(t.services, actingOf(person(owner.person.id)), general, 'owner says');
    expect((await member.agent.get(url(general, m.id, 'delete'))).statusCode).toBe(403);
    const res = await postAs(member.agent, url(general, m.id, 'delete'), {});
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Manage messages');
    expect(await storedMessage(m.id)).toBeDefined();
    const page = await member.agent.get(`/channels/${general}`);
    expect(page.body).not.toContain(`/messages/${m.id}/delete`);
    expect(page.body).not.toContain(`/messages/${m.id}/edit`);
  });

  it('with Manage messages a moderator deletes anyone’s: a person’s, a webhook’s and a bot’s', async () => {
    const { server, general, owner, moderator } = await room();
    const byPerson = await postMessage(t.services, actingOf(person(owner.person.id)), general, 'person');
    const byWebhook = await webhookMessage(general, 'webhook');
    const bot = await createBot(t, { name: 'Helper' });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    const byBot = await postMessage(t.services, actingOf(person(bot.botUserId)), general, 'bot');

    const page = await moderator.agent.get(`/channels/${general}`);
    for (const id of [byPerson.id, byWebhook, byBot.id]) {
      expect(page.body).toContain(`href="/channels/${general}/messages/${id}/delete"`);
      expect(page.body).not.toContain(`/messages/${id}/edit`);
    }
    for (const id of [byPerson.id, byWebhook, byBot.id]) {
      const res = await moderator.agent.submit(url(general, id, 'delete'), url(general, id, 'delete'), {});
      expect(res.statusCode).toBe(303);
      expect(await storedMessage(id)).toBeUndefined();
    }
  });
});

describe('posting from the page script', () => {
  it('asked for JSON, a post answers 201 with the rendered message and its own Edit and Delete', async () => {
    const { general, member } = await room();
    const res = await postAs(member.agent, `/channels/${general}/messages`, { content: 'line one\nline two' }, json);
    expect(res.statusCode).toBe(201);
    const answer = res.json() as { id: string; html: string };
    expect(await storedMessage(answer.id)).toMatchObject({ content: 'line one\nline two' });
    expect(answer.html).toContain(`href="/channels/${general}/messages/${answer.id}/edit"`);
    expect(answer.html).toContain(`href="/channels/${general}/messages/${answer.id}/delete"`);
  });

  it('the channel page offers the composer script and says Enter sends', async () => {
    const { general, member } = await room();
    const page = await member.agent.get(`/channels/${general}`);
    expect(page.body).toContain('data-composer');
    expect(page.body).toContain('Enter sends, Shift+Enter adds a line.');
    expect(page.body).toMatch(/<script src="\/assets\/composer\.[0-9a-f]{12}\.js"/);
    expect(page.body).toMatch(/<script src="\/assets\/message-actions\.[0-9a-f]{12}\.js"/);
  });
});

describe('in a direct message only one’s own', () => {
  it('a person cannot delete or edit the bot’s messages in their DM (403), and sees no actions on them', async () => {
    const { agent, person } = await signedIn(t, { name: 'Dana Doe' });
    const bot = await createBot(t, { name: 'Forecast' });
    await userInstall(t, bot, person);
    const channelId = ((await openDm(t, bot, { recipientId: person.id })).json() as { id: string }).id;
    const posted = await botPost(t, bot, channelId, { content: 'Rain at noon' });
    const messageId = (posted.json() as { id: string }).id;

    const page = await agent.get(`/messages/${channelId}`);
    expect(page.body).toContain('Rain at noon');
    expect(page.body).not.toContain(`/messages/${messageId}/delete`);
    expect((await postAs(agent, url(channelId, messageId, 'delete'), {})).statusCode).toBe(403);
    expect((await postAs(agent, url(channelId, messageId, 'edit'), { content: 'x' })).statusCode).toBe(403);
    expect(await storedMessage(messageId)).toMatchObject({ content: 'Rain at noon' });

    const stranger = await signedIn(t);
    expect((await postAs(stranger.agent, url(channelId, messageId, 'delete'), {})).statusCode).toBe(404);
  });
});

async function follow(agent: PageAgent, channelId: string): Promise<SseReader> {
  const reader = await live.follow(agent, channelId);
  expect(reader.response.status).toBe(200);
  await reader.next();
  return reader;
}

describe('live views learn of edits and deletes', () => {
  it('another member’s open stream receives the edited message in place, then its removal', async () => {
    const { general, owner, member } = await room();
    const m = await postMessage(t.services, actingOf(person(member.person.id)), general, 'draft');
    const watching = await follow(owner.agent, general);

    t.clock.advance(MINUTE);
    await member.agent.submit(url(general, m.id, 'edit'), url(general, m.id, 'edit'), { content: 'final' });
    const edited = await watching.next((e) => e.event === 'message');
    expect(edited.id).toBeUndefined();
    expect(edited.data).toContain(`id="m${m.id}"`);
    expect(edited.data).toContain('final');
    expect(edited.data).toContain('(edited)');
    // The owner holds every permission, so may delete (not edit) it on their own view.
    expect(edited.data).toContain(`/messages/${m.id}/delete`);
    expect(edited.data).not.toContain(`/messages/${m.id}/edit`);

    await member.agent.submit(url(general, m.id, 'delete'), url(general, m.id, 'delete'), {});
    expect(await watching.next((e) => e.event === 'delete')).toMatchObject({ data: m.id });
  });

  it('each viewer’s stream carries their own actions: the author gets Edit, a plain member nothing', async () => {
    const { server, general, member } = await room();
    const authorView = await follow(member.agent, general);
    const plain = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, plain.person.id);
    const plainView = await follow(plain.agent, general);

    await member.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: 'hi all' });
    const mine = await authorView.next((e) => e.event === 'message');
    expect(mine.data).toContain('data-edit');
    const theirs = await plainView.next((e) => e.event === 'message');
    expect(theirs.data).not.toContain('data-message-actions');
  });

  it('a moderator whose role is taken away is no longer offered Delete on others’ messages in the open stream', async () => {
    const { server, general, owner, moderator } = await room();
    const stream = await follow(moderator.agent, general);
    await owner.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: 'first' });
    expect((await stream.next((e) => e.event === 'message')).data).toContain('data-delete');
    await setMemberRoles(t.services, operatorActing(), server.id, moderator.person.id, []);
    await owner.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: 'second' });
    const later = await stream.next((e) => e.event === 'message');
    expect(later.data).toContain('second');
    expect(later.data).not.toContain('data-delete');
  });

  // The heartbeat interval is faked and never advanced: only the access change can end these streams.
  it('a member who leaves gets `end` at once, and an edit made afterwards never reaches the stream', async () => {
    const { server, general, owner, member } = await room();
    const m = await postMessage(t.services, actingOf(person(owner.person.id)), general, 'before');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const stream = await follow(member.agent, general);
    await leaveServer(t.services, personActingOf(member.person.id), server.id);
    await owner.agent.submit(url(general, m.id, 'edit'), url(general, m.id, 'edit'), { content: 'after' });
    expect(await stream.next((e) => e.event === 'end' || e.event === 'message')).toMatchObject({ event: 'end', data: 'access ended' });
    await stream.untilEnded();
  });

  it('signing out ends the stream at once, and a delete made afterwards never reaches it', async () => {
    const { general, owner, member } = await room();
    const m = await postMessage(t.services, actingOf(person(owner.person.id)), general, 'still here');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const stream = await follow(member.agent, general);
    await member.agent.submit('/', '/logout', {});
    await owner.agent.submit(url(general, m.id, 'delete'), url(general, m.id, 'delete'), {});
    expect(await stream.next((e) => e.event === 'end' || e.event === 'delete')).toMatchObject({ event: 'end', data: 'access ended' });
    await stream.untilEnded();
  });
});

import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { person } from '../../src/core/actor.js';
import { deleteChannel } from '../../src/modules/directory/channels.service.js';
import { updateRole } from '../../src/modules/directory/roles.service.js';
import { changePassword, registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { startSession } from '../../src/modules/accounts/sessions.service.js';
import { cookieNames } from '../../src/web/pages.js';
import { addMember, removeMember } from '../../src/modules/directory/members.service.js';
import { leaveServer } from '../../src/modules/directory/members.service.js';
import { createServer, deleteServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { HEARTBEAT_MS, LIVE_FLUSH_MS } from '../../src/modules/messages/live.routes.js';
import { liveUpdate } from '../../src/modules/messages/live.service.js';
import { editMessage } from '../../src/modules/messages/message-actions.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import type { ChannelEvent, MemoryChannelEvents } from '../../src/realtime/channel-events.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import { SseReader, cookieOf, listenForStreams, liveStreams, stopListening } from '../support/sse.js';
import { sample } from '../support/metrics.js';
import { PageAgent } from '../support/page-agent.js';
import { stored } from '../support/stored.js';
import { actingOf, ANONYMOUS, personActingOf, operatorActing } from '../support/acting.js';

/**
 * The channel view's live updates (issue #5 "new messages appear without a reload"): a real
 * listening server, its event stream read with fetch as a browser's EventSource would.
 */

const live = liveStreams();
let t: TestApp;
beforeAll(() => {
  t = live.t;
});
const follow = live.follow;

/** A sample of this app's /metrics (0 when the series has not been observed yet). */
async function metric(app: TestApp, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await app.app.inject({ method: 'GET', url: '/metrics' });
  return sample(res.body, name, labels) ?? 0;
}

/** Opens a stream and waits for its first block (the retry interval): from then on it is subscribed. */
async function connected(agent: PageAgent, channelId: string, query = '', headers: Record<string, string> = {}): Promise<SseReader> {
  const reader = await follow(agent, channelId, query, headers);
  expect(reader.response.status).toBe(200);
  await reader.next();
  return reader;
}

const listeners = (channelId: string) => (t.services.events as MemoryChannelEvents).listenerCount(channelId);

async function room(): Promise<{ server: CreatedServer; general: string; owner: Awaited<ReturnType<typeof signedIn>>; member: Awaited<ReturnType<typeof signedIn>> }> {
  const owner = await signedIn(t, { name: 'Olive Owner' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Live' });
  const member = await signedIn(t, { name: 'Mia Member' });
  await addMember(t.services, operatorActing(), server.id, member.person.id);
  return { server, general: server.channels[0]?.id as string, owner, member };
}

/** A webhook's message, stored and announced as the execute route does (contract 4). */
async function webhookMessage(channelId: string, input: Parameters<typeof stored.webhookMessage>[2]): Promise<string> {
  const id = await stored.webhookMessage(t, channelId, input);
  t.services.events.publish({ type: 'message_create', channelId, messageId: id });
  return id;
}

describe('GET /channels/:channelId/events (server-sent events)', () => {
  it('a member sees a message another member posts, as the rendered list item, with its id', async () => {
    const { general, owner, member } = await room();
    const stream = await connected(member.agent, general);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.response.headers.get('x-accel-buffering')).toBe('no');
    expect(stream.response.headers.get('cache-control')).toContain('no-store');
    expect(stream.response.headers.get('content-security-policy')).toContain("script-src 'self'");

    const posted = await owner.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: 'Hello **live** <b>world</b>' });
    expect(posted.statusCode).toBe(303);
    const event = await stream.next((e) => e.event === 'message');
    const row = await t.services.db.selectFrom('messages').select(['id', 'author_id']).where('channel_id', '=', general).executeTakeFirstOrThrow();
    expect(event.id).toBe(String(row.id));
    expect(event.data).toMatch(new RegExp(`^<li class="message" id="m${String(row.id)}" data-id="${String(row.id)}" data-author="${String(row.author_id)}">`));
    expect(event.data).toContain('<span class="author">Olive Owner</span>');
    expect(event.data).toContain('<div class="body">Hello <strong>live</strong> &lt;b&gt;world&lt;/b&gt;</div>');
    expect(event.data).not.toContain('class="badge"');
  });

  it('webhook messages arrive with their name, avatar, APP badge and embeds; edits replace them and deletions remove them', async () => {
    const { general, member } = await room();
    const stream = await connected(member.agent, general);
    const id = await webhookMessage(general, {
      content: 'Deployed **v2**',
      name: 'Release Bot',
      avatarUrl: 'https://cdn.example/bot.png',
      embeds: [{ title: 'v2 is live', color: 0x3366ff, fields: [{ name: 'Region', value: 'eu', inline: true }] }],
    });
    const created = await stream.next((e) => e.event === 'message');
    expect(created.id).toBe(id);
    expect(created.data).toContain('<span class="author">Release Bot</span><span class="badge" title="Sent by an app">APP</span>');
    expect(created.data).toContain('src="https://cdn.example/bot.png"');
    expect(created.data).toContain('referrerpolicy="no-referrer"');
    expect(created.data).toContain('<span class="embed-title-text">v2 is live</span>');
    expect(created.data).toContain('fill="#3366ff"');

    t.clock.advance(MINUTE);
    await t.services.db.updateTable('messages').set({ content: 'Deployed **v2.1**', edited_at: t.clock.now() }).where('id', '=', id).execute();
    t.services.events.publish({ type: 'message_update', channelId: general, messageId: id });
    const edited = await stream.next((e) => e.event === 'message');
    // An edit keeps Last-Event-ID on the newest creation: no id field.
    expect(edited.id).toBeUndefined();
    expect(edited.data).toContain(`id="m${id}"`);
    expect(edited.data).toContain('v2.1');
    expect(edited.data).toContain('(edited)');

    await t.services.db.deleteFrom('messages').where('id', '=', id).execute();
    t.services.events.publish({ type: 'message_delete', channelId: general, messageId: id });
    expect(await stream.next((e) => e.event === 'delete')).toMatchObject({ data: id });
  });

  it('an edit of a message deleted meanwhile is sent as its removal', async () => {
    const { general, member } = await room();
    const stream = await connected(member.agent, general);
    t.services.events.publish({ type: 'message_update', channelId: general, messageId: '1000000000000000099' });
    expect(await stream.next((e) => e.event !== 'message' || e.data !== '')).toMatchObject({ event: 'delete', data: '1000000000000000099' });
  });

  it('events of other channels do not reach the stream', async () => {
    const a = await room();
    const b = await room();
    const stream = await connected(a.member.agent, a.general);
    await webhookMessage(b.general, { content: 'elsewhere' });
    const here = await webhookMessage(a.general, { content: 'here' });
    const event = await stream.next((e) => e.event === 'message');
    expect(event.id).toBe(here);
    expect(event.data).not.toContain('elsewhere');
  });

  it('a person who is not a member gets the 404 of the channel view, a signed-out browser 401, and nothing is subscribed', async () => {
    const { general } = await room();
    const stranger = await signedIn(t, { name: 'Stan Stranger' });
    const refused = await follow(stranger.agent, general);
    expect(refused.response.status).toBe(404);
    expect(await refused.response.text()).toContain('Channel not found');
    const anonymous = await follow(undefined, general);
    expect(anonymous.response.status).toBe(401);
    await anonymous.response.text();
    for (const bad of ['not-a-channel', '1000000000000000123']) expect((await follow(stranger.agent, bad)).response.status).toBe(404);
    expect(listeners(general)).toBe(0);
  });

  it('closing the stream unsubscribes it: no listener is left behind', async () => {
    const { general, owner, member } = await room();
    const first = await connected(member.agent, general);
    const second = await connected(owner.agent, general);
    expect(listeners(general)).toBe(2);
    first.close();
    await expect.poll(() => listeners(general)).toBe(1);
    second.close();
    await expect.poll(() => listeners(general)).toBe(0);
  });

  it('a page that connects late, or a browser that reconnects, first gets what was posted since (after= / Last-Event-ID)', async () => {
    const { general, owner, member } = await room();
    const one = await postMessage(t.services, actingOf(person(owner.person.id)), general, 'one');
    const two = await postMessage(t.services, actingOf(person(owner.person.id)), general, 'two');
    const three = await postMessage(t.services, actingOf(person(owner.person.id)), general, 'three');

    const late = await connected(member.agent, general, `?after=${one.id}`);
    expect((await late.next((e) => e.event === 'message')).id).toBe(two.id);
    expect((await late.next((e) => e.event === 'message')).id).toBe(three.id);

    // EventSource sends Last-Event-ID on reconnection; it wins over the page's after=.
    const again = await connected(member.agent, general, `?after=${one.id}`, { 'last-event-id': two.id });
    expect((await again.next((e) => e.event === 'message')).id).toBe(three.id);
  });

  it('sends a heartbeat comment every 25 s, and ends the stream once the person is no longer a member', async () => {
    const { server, general, member } = await room();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const stream = await connected(member.agent, general);
    vi.advanceTimersByTime(HEARTBEAT_MS);
    expect(await stream.next((e) => e.comments.length > 0)).toMatchObject({ comments: ['keep-alive'] });

    await removeMember(t.services, operatorActing(), server.id, member.person.id);
    vi.advanceTimersByTime(HEARTBEAT_MS);
    expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
    await stream.untilEnded();
    await expect.poll(() => listeners(general)).toBe(0);
  });

  it('a stream ends at the next heartbeat once its browser signs out', async () => {
    const { general, member } = await room();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const stream = await connected(member.agent, general);
    await member.agent.submit('/', '/logout', {});
    vi.advanceTimersByTime(HEARTBEAT_MS);
    expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
    await stream.untilEnded();
  });

  describe('issue #21 §5: access that ends ends the stream at once, without waiting for a heartbeat', () => {
    // The heartbeat interval is faked and never advanced: only the access change can end these streams.
    it('removal from the server: `end` at once, and a message posted afterwards never reaches the stream', async () => {
      const { server, general, owner, member } = await room();
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const stream = await connected(member.agent, general);
      await removeMember(t.services, operatorActing(), server.id, member.person.id);
      await postMessage(t.services, actingOf(person(owner.person.id)), general, 'after you left');
      const next = await stream.next((e) => e.event === 'end' || e.event === 'message');
      expect(next.event).toBe('end');
      await stream.untilEnded();
      await expect.poll(() => listeners(general)).toBe(0);
      await expect.poll(() => listeners(member.person.id)).toBe(0);
      await expect.poll(() => listeners(server.id)).toBe(0);
    });

    it('sign-out: the streams of that browser end at once; another browser of the same person keeps its stream', async () => {
      const { general, member } = await room();
      const elsewhere = await signedIn(t, {});
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const stream = await connected(member.agent, general);
      // A second browser of the same person (a new session of theirs).
      const second = await startSession(t.services, personActingOf(member.person.id), 'other browser');
      elsewhere.agent.cookies.set(cookieNames(false).session, second.token);
      const other = await connected(elsewhere.agent, general);
      await member.agent.submit('/', '/logout', {});
      expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
      await stream.untilEnded();
      const id = await webhookMessage(general, { content: 'still here' });
      expect((await other.next((e) => e.event === 'message')).id).toBe(id);
    });

    it('leaving the server: `end` at once', async () => {
      const { server, general, member } = await room();
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const stream = await connected(member.agent, general);
      await leaveServer(t.services, personActingOf(member.person.id), server.id);
      expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
      await stream.untilEnded();
    });

    it('View channel taken from @everyone, or the channel deleted: `end` at once', async () => {
      const { server, general, member } = await room();
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const stream = await connected(member.agent, general);
      await updateRole(t.services, operatorActing(), server.id, server.id, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.VIEW_CHANNEL });
      expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
      await stream.untilEnded();

      const other = await room();
      const second = await connected(other.member.agent, other.general);
      await deleteChannel(t.services, operatorActing(), other.server.id, other.general);
      expect(await second.next((e) => e.event === 'end')).toBeTruthy();
      await second.untilEnded();
    });

    it('server deletion: every member’s stream ends at once', async () => {
      const { server, general, owner, member } = await room();
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const streams = [await connected(member.agent, general), await connected(owner.agent, general)];
      await deleteServer(t.services, personActingOf(owner.person.id), server.id);
      for (const stream of streams) {
        expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
        await stream.untilEnded();
      }
    });
  });

  it('a direct-message conversation can be followed by its two people only', async () => {
    const ann = await signedIn(t, { name: 'Ann' });
    const bob = await signedIn(t, { name: 'Bob' });
    const eve = await signedIn(t, { name: 'Eve' });
    const channelId = t.services.ids.next();
    await stored.insertDmChannel(t, { channelId, userA: ann.person.id, userB: bob.person.id, createdAt: t.clock.now() });
    const stream = await connected(bob.agent, channelId);
    expect((await follow(eve.agent, channelId)).response.status).toBe(404);
    const id = await webhookMessage(channelId, { content: 'hi Bob' });
    expect((await stream.next((e) => e.event === 'message')).id).toBe(id);
  });

  it('serves the page script that follows the stream, and the channel view loads it and names its stream', async () => {
    const { general, member } = await room();
    const page = await member.agent.get(`/channels/${general}`);
    const script = /<script src="(\/assets\/live\.[0-9a-f]{12}\.js)" defer><\/script>/.exec(page.body)?.[1];
    expect(script).toMatch(/^\/assets\/live\.[0-9a-f]{12}\.js$/);
    expect(page.body).toContain(`data-live="/channels/${general}/events"`);
    const asset = await t.app.inject({ method: 'GET', url: script as string });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toContain('text/javascript');
    expect(asset.body).toContain('new EventSource(');
  });
});

describe('issue #36 §1: many streams of one channel', () => {
  it('a message is rendered once however many streams follow its channel, and each reader still gets their own Edit and Delete', async () => {
    const { server, general, owner, member } = await room();
    const reader = await signedIn(t, { name: 'Rita Reader' });
    await addMember(t.services, operatorActing(), server.id, reader.person.id);
    const streams = {
      // The owner holds Manage messages: Delete on anyone's message, Edit only on their own.
      owner: [await connected(owner.agent, general), await connected(owner.agent, general)],
      author: [await connected(member.agent, general), await connected(member.agent, general), await connected(member.agent, general)],
      reader: [await connected(reader.agent, general), await connected(reader.agent, general)],
    };
    const rendered = await metric(t, 'live_message_renders_total');

    const posted = await postMessage(t.services, actingOf(person(member.person.id)), general, 'rendered **once**');
    const received = async (list: SseReader[]) => Promise.all(list.map((s) => s.next((e) => e.event === 'message')));
    for (const event of [...(await received(streams.owner)), ...(await received(streams.author)), ...(await received(streams.reader))]) {
      expect(event.id).toBe(posted.id);
      expect(event.data).toContain('<div class="body">rendered <strong>once</strong></div>');
    }
    expect(await metric(t, 'live_message_renders_total')).toBe(rendered + 1);

    // The same markup reached everyone; only the actions differ, as on each reader's page.
    const edited = await editMessage(t.services, actingOf(person(member.person.id)), general, posted.id, 'rendered **once**, edited');
    expect(edited.message.editedAt).not.toBeNull();
    const [ownerView] = await received(streams.owner.slice(0, 1));
    const [authorView] = await received(streams.author.slice(0, 1));
    const [readerView] = await received(streams.reader.slice(0, 1));
    expect(authorView?.data).toContain('data-edit');
    expect(authorView?.data).toContain('data-delete');
    expect(ownerView?.data).not.toContain('data-edit');
    expect(ownerView?.data).toContain('data-delete');
    expect(readerView?.data).not.toContain('data-message-actions');
    const strip = (data = '') => data.replace(/<div class="message-actions"[^]*?<\/div>/, '');
    expect(strip(ownerView?.data)).toBe(strip(readerView?.data));
    expect(strip(authorView?.data)).toBe(strip(readerView?.data));
    expect(await metric(t, 'live_message_renders_total')).toBe(rendered + 2);
  });

  it('the updates of one window reach a stream in one write to its socket, in the order they happened', async () => {
    const { general, member } = await room();
    const stream = await connected(member.agent, general);
    const ids: string[] = [];
    for (const content of ['first', 'second', 'third']) ids.push(await stored.webhookMessage(t, general, { content }));
    // What the server hands its sockets: one call, one system call.
    const socketWrites: string[] = [];
    const record = (data: unknown) => {
      const text = Array.isArray(data) ? data.map((c: { chunk: unknown }) => String(c.chunk)).join('') : String(data);
      if (text.includes('event: message')) socketWrites.push(text);
    };
    const spies = [vi.spyOn(Socket.prototype, '_writev'), vi.spyOn(Socket.prototype, '_write')];
    try {
      // The flush waits for its window; held here, so the test does not depend on how fast loads are.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      // Three updates in three turns of the event loop, each loaded and queued before the next.
      for (const messageId of ids) {
        const event: ChannelEvent = { type: 'message_create', channelId: general, messageId };
        t.services.events.publish(event);
        // The memory bus hands every stream this very object: this is the stream's own load.
        await liveUpdate(t.services, event);
        await new Promise((resolve) => setImmediate(resolve));
      }
      vi.advanceTimersByTime(LIVE_FLUSH_MS);
      await new Promise((resolve) => setImmediate(resolve));
      for (const spy of spies) for (const [data] of spy.mock.calls) record(data);
      expect(socketWrites).toHaveLength(1);
      expect(socketWrites[0]?.match(/^id: \d+$/gm)).toEqual(ids.map((id) => `id: ${id}`));
    } finally {
      vi.useRealTimers();
      for (const spy of spies) spy.mockRestore();
    }
    const received = [await stream.next((e) => e.event === 'message'), await stream.next((e) => e.event === 'message'), await stream.next((e) => e.event === 'message')];
    expect(received.map((e) => e.id)).toEqual(ids);
  });

  it('a person’s 11th stream is refused with 429 and a clear reason, subscribes nothing, and a closed stream frees its place', async () => {
    const { general, owner, member } = await room();
    const streams: SseReader[] = [];
    for (let i = 0; i < 10; i += 1) streams.push(await connected(member.agent, general));
    const refusedBefore = await metric(t, 'live_streams_refused_total', { cap: 'person' });

    const eleventh = await follow(member.agent, general);
    expect(eleventh.response.status).toBe(429);
    expect(eleventh.response.headers.get('content-type')).toContain('text/html');
    const body = await eleventh.response.text();
    expect(body).toContain('Too many live views');
    expect(body).toContain('You already follow 10 conversations live');
    expect(listeners(general)).toBe(10);
    expect(await metric(t, 'live_streams_refused_total', { cap: 'person' })).toBe(refusedBefore + 1);
    // Another person of the same address is not held back by this person's streams.
    await connected(owner.agent, general);

    streams[0]?.close();
    await expect.poll(() => listeners(general)).toBe(10);
    const again = await connected(member.agent, general);
    const id = await webhookMessage(general, { content: 'in again' });
    expect((await again.next((e) => e.event === 'message')).id).toBe(id);
  });

  it('a stream refused for want of access (404) takes no place under the cap', async () => {
    const { general } = await room();
    const stranger = await signedIn(t, { name: 'Stan Stranger' });
    for (let i = 0; i < 12; i += 1) expect((await follow(stranger.agent, general)).response.status).toBe(404);
    const own = await room();
    const streams: SseReader[] = [];
    await addMember(t.services, operatorActing(), own.server.id, stranger.person.id);
    for (let i = 0; i < 10; i += 1) streams.push(await connected(stranger.agent, own.general));
    expect(streams).toHaveLength(10);
  });

  it('a password change ends the live views of the browsers it signs out at once; the browser that changed it keeps its own', async () => {
    const { server, general } = await room();
    const password = 'correct horse battery staple 36';
    const someone = await registerPerson(t.services, actingOf(ANONYMOUS), { username: `pw${t.services.ids.next()}`, name: 'Pat Password', password });
    await addMember(t.services, operatorActing(), server.id, someone.id);
    const agentWith = async () => {
      const session = await startSession(t.services, personActingOf(someone.id), 'vitest');
      const agent = new PageAgent(t.app);
      agent.cookies.set(cookieNames(false).session, session.token);
      return { agent, token: session.token };
    };
    const here = await agentWith();
    const elsewhere = await agentWith();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const kept = await connected(here.agent, general);
    const ended = await connected(elsewhere.agent, general);
    await changePassword(t.services, personActingOf(someone.id), { currentPassword: password, newPassword: 'another horse battery staple 36', currentSessionToken: here.token });
    expect(await ended.next((e) => e.event === 'end')).toBeTruthy();
    await ended.untilEnded();
    const id = await webhookMessage(general, { content: 'still following' });
    expect((await kept.next((e) => e.event === 'message')).id).toBe(id);
  });
});

describe('issue #36 §1: streams per address (GATEHOUSE_LIVE_STREAMS_PER_ADDRESS)', () => {
  let small: TestApp;
  let base = '';
  const opened: SseReader[] = [];
  beforeAll(async () => {
    small = await createTestApp({ env: { GATEHOUSE_LIVE_STREAMS_PER_PERSON: '2', GATEHOUSE_LIVE_STREAMS_PER_ADDRESS: '3' } });
    base = await listenForStreams(small);
  });
  afterAll(async () => {
    for (const s of opened) s.close();
    if (small) await stopListening(small);
  });
  const open = async (agent: PageAgent, channelId: string) => {
    const reader = await SseReader.open(`${base}/channels/${channelId}/events`, { cookie: cookieOf(agent) });
    opened.push(reader);
    return reader;
  };

  it('people behind one address share its cap: the stream beyond it is refused with 429 and says why', async () => {
    const owner = await signedIn(small, { name: 'Nat Owner' });
    const server = await createServer(small.services, personActingOf(owner.person.id), { name: 'One NAT' });
    const general = server.channels[0]?.id as string;
    const others = [await signedIn(small, { name: 'Nat One' }), await signedIn(small, { name: 'Nat Two' })];
    for (const other of others) await addMember(small.services, operatorActing(), server.id, other.person.id);
    // Two of the owner's (their own cap), then one of another person: three from 127.0.0.1.
    for (const agent of [owner.agent, owner.agent, others[0]?.agent as PageAgent]) {
      const stream = await open(agent, general);
      expect(stream.response.status).toBe(200);
      await stream.next();
    }
    const third = await open(owner.agent, general);
    expect(third.response.status).toBe(429);
    expect(await third.response.text()).toContain('You already follow 2 conversations live');

    const beyond = await open(others[1]?.agent as PageAgent, general);
    expect(beyond.response.status).toBe(429);
    expect(await beyond.response.text()).toContain('Your network already follows 3 conversations live');
    expect(await metric(small, 'live_streams_refused_total', { cap: 'address' })).toBe(1);
    expect(await metric(small, 'live_streams_open')).toBe(3);
  });
});

describe('shutting down', () => {
  it('ends every open stream at once, so a graceful shutdown is not held up (browsers reconnect elsewhere)', async () => {
    const own = await createTestApp();
    await own.app.listen({ port: 0, host: '127.0.0.1' });
    const address = own.app.server.address();
    const owner = await signedIn(own, { name: 'Sam' });
    const server = await createServer(own.services, personActingOf(owner.person.id), { name: 'Closing' });
    const general = server.channels[0]?.id as string;
    const stream = await SseReader.open(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/channels/${general}/events`, { cookie: cookieOf(owner.agent) });
    await stream.next();
    const started = Date.now();
    await own.app.close();
    expect(Date.now() - started).toBeLessThan(2000);
    await stream.untilEnded();
    expect((own.services.events as MemoryChannelEvents).listenerCount(general)).toBe(0);
    await own.services.close();
    await own.database.drop();
  });
});

import { beforeAll, describe, expect, it, vi } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { person } from '../../src/core/actor.js';
import { deleteChannel } from '../../src/modules/directory/channels.service.js';
import { updateRole } from '../../src/modules/directory/roles.service.js';
import { startSession } from '../../src/modules/accounts/sessions.service.js';
import { cookieNames } from '../../src/web/pages.js';
import { addMember, removeMember } from '../../src/modules/directory/members.service.js';
import { leaveServer } from '../../src/modules/directory/members.service.js';
import { createServer, deleteServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { HEARTBEAT_MS } from '../../src/modules/messages/live.routes.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import type { MemoryChannelEvents } from '../../src/realtime/channel-events.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import type { PageAgent } from '../support/page-agent.js';
import { SseReader, cookieOf, liveStreams } from '../support/sse.js';
import { stored } from '../support/stored.js';

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
  const server = await createServer(t.services, owner.person.id, { name: 'Live' });
  const member = await signedIn(t, { name: 'Mia Member' });
  await addMember(t.services, server.id, member.person.id);
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
    const one = await postMessage(t.services, general, owner.person.id, 'one');
    const two = await postMessage(t.services, general, owner.person.id, 'two');
    const three = await postMessage(t.services, general, owner.person.id, 'three');

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

    await removeMember(t.services, server.id, member.person.id);
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
      await removeMember(t.services, server.id, member.person.id);
      await postMessage(t.services, general, owner.person.id, 'after you left');
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
      const second = await startSession(t.services, member.person.id, 'other browser');
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
      await leaveServer(t.services, server.id, member.person.id);
      expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
      await stream.untilEnded();
    });

    it('View channel taken from @everyone, or the channel deleted: `end` at once', async () => {
      const { server, general, member } = await room();
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const stream = await connected(member.agent, general);
      await updateRole(t.services, server.id, server.id, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.VIEW_CHANNEL });
      expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
      await stream.untilEnded();

      const other = await room();
      const second = await connected(other.member.agent, other.general);
      await deleteChannel(t.services, other.server.id, other.general);
      expect(await second.next((e) => e.event === 'end')).toBeTruthy();
      await second.untilEnded();
    });

    it('server deletion: every member’s stream ends at once', async () => {
      const { server, general, owner, member } = await room();
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const streams = [await connected(member.agent, general), await connected(owner.agent, general)];
      await deleteServer(t.services, server.id, person(owner.person.id));
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

describe('shutting down', () => {
  it('ends every open stream at once, so a graceful shutdown is not held up (browsers reconnect elsewhere)', async () => {
    const own = await createTestApp();
    await own.app.listen({ port: 0, host: '127.0.0.1' });
    const address = own.app.server.address();
    const owner = await signedIn(own, { name: 'Sam' });
    const server = await createServer(own.services, owner.person.id, { name: 'Closing' });
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

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { insertMessage } from '../../src/modules/messages/messages.repository.js';
import { MemoryBucketStore } from '../../src/rate-limit/memory-store.js';
import type { ChannelEvent } from '../../src/realtime/channel-events.js';
import { createRedisChannelEvents, type RedisChannelEvents } from '../../src/realtime/redis-channel-events.js';
import { createServices } from '../../src/services.js';
import type { TestApp } from '../support/app.js';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../support/database.js';
import { signedIn } from '../support/directory-fixtures.js';
import { SseReader, cookieOf } from '../support/sse.js';
import { sample } from '../support/metrics.js';
import { operatorActing, personActingOf } from '../support/acting.js';

if (!TEST_REDIS_URL) {
  console.warn('[redis-channel-events] TEST_REDIS_URL is not set: the two-instance live-update tests need a Redis and do not run here; the outage behaviour still does.');
}

const silent = pino({ level: 'silent' });
const event = (messageId: string): ChannelEvent => ({ type: 'message_create', channelId: '1000000000000000001', messageId });

describe('Redis channel events while Redis is unreachable', () => {
  it('still deliver to this instance’s views, and log the outage once', async () => {
    const logger = { warn: vi.fn(), info: vi.fn() };
    // Port 1: nothing listens there, so every publish fails at once.
    const events = createRedisChannelEvents('redis://127.0.0.1:1', logger, `gh:test:${randomBytes(6).toString('hex')}:`);
    const seen: string[] = [];
    const off = events.subscribe('1000000000000000001', (e) => seen.push(e.messageId));
    events.publish(event('1'));
    events.publish(event('2'));
    events.publish(event('3'));
    expect(seen).toEqual(['1', '2', '3']);
    await expect.poll(() => logger.warn.mock.calls.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(events.usingLocalOnly).toBe(true);
    // A view opening during the outage is not held up waiting for Redis.
    const started = Date.now();
    await events.ready('1000000000000000001');
    expect(Date.now() - started).toBeLessThan(2500);
    off();
    expect(events.listenerCount('1000000000000000001')).toBe(0);
    await events.close();
  });
});

/** One instance of the service on a shared database and a shared Redis, listening on a free port. */
async function instance(database: TestDatabase, workerId: number, prefix: string, clock: ManualClock): Promise<TestApp & { base: string; events: RedisChannelEvents }> {
  const url = TEST_REDIS_URL as string;
  const config = { ...loadConfig({ GATEHOUSE_BASE_URL: 'http://localhost:8080', LOG_LEVEL: 'silent' }), passwordCost: { log2N: 10, r: 8, p: 1 } };
  const events = createRedisChannelEvents(url, silent, prefix);
  const services = await createServices(config, { clock, database: database.handle, logger: silent, workerId, events, buckets: new MemoryBucketStore() });
  const app = await buildApp(services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    app,
    services,
    clock,
    config,
    database,
    base,
    events,
    async close() {
      app.server.closeAllConnections();
      await app.close();
      await services.close();
    },
  };
}

describe.skipIf(!TEST_REDIS_URL)('two instances sharing one Redis (REDIS_URL)', () => {
  let database: TestDatabase;
  let a: Awaited<ReturnType<typeof instance>>;
  let b: Awaited<ReturnType<typeof instance>>;
  const streams: SseReader[] = [];
  const prefix = `gh:test:${randomBytes(6).toString('hex')}:ch:`;

  beforeAll(async () => {
    database = await createTestDatabase();
    const clock = new ManualClock();
    a = await instance(database, 1, prefix, clock);
    b = await instance(database, 2, prefix, clock);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  async function setup() {
    const owner = await signedIn(a, { name: 'Ann on A' });
    const server = await createServer(a.services, personActingOf(owner.person.id), { name: 'Across' });
    const viewer = await signedIn(a, { name: 'Ben on B' });
    await addMember(a.services, operatorActing(), server.id, viewer.person.id);
    const general = server.channels[0]?.id as string;
    const cookie = [...viewer.agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    // The viewer follows the channel on instance B.
    const stream = await SseReader.open(`${b.base}/channels/${general}/events`, { cookie });
    streams.push(stream);
    expect(stream.response.status).toBe(200);
    await stream.next();
    return { owner, viewer, general, stream };
  }

  it('a message posted through instance A reaches the live view open on instance B', async () => {
    const { owner, general, stream } = await setup();
    expect(b.events.listenerCount(general)).toBe(1);
    const posted = await owner.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: 'from **A**' });
    expect(posted.statusCode).toBe(303);
    const received = await stream.next((e) => e.event === 'message');
    expect(received.data).toContain('<div class="body">from <strong>A</strong></div>');
    expect(received.data).toContain('Ann on A');
  });

  it('issue #40 §2: an ephemeral message announced on A reaches its one person’s view on B, on that person’s topic', async () => {
    const { viewer, stream } = await setup();
    const viewerId = viewer.person.id;
    await b.events.ready(viewerId);
    // Gone by the time it is looked up (deleted by its app): the view is told to remove it.
    a.events.publish({ type: 'ephemeral_message', channelId: viewerId, messageId: '1000000000000000777' });
    const received = await stream.next((e) => e.event === 'delete');
    expect(received.data).toBe('1000000000000000777');
  });

  it('a webhook message announced on A arrives on B with its APP badge, exactly once', async () => {
    const { general, stream } = await setup();
    const id = a.services.ids.next();
    await insertMessage(a.services.db, {
      id,
      channelId: general,
      authorId: '1000000000000000007',
      webhookId: '1000000000000000007',
      applicationId: null,
      authorName: 'Pager',
      authorAvatarUrl: null,
      content: 'disk 91% full',
      embeds: [{ title: 'db-1', color: 0xff0000 }],
      createdAt: a.clock.now(),
    });
    a.services.events.publish({ type: 'message_create', channelId: general, messageId: id });
    const received = await stream.next((e) => e.event === 'message');
    expect(received.id).toBe(id);
    expect(received.data).toContain('<span class="author">Pager</span><span class="badge" title="Sent by an app">APP</span>');
    expect(received.data).toContain('fill="#ff0000"');
    a.services.events.publish({ type: 'message_delete', channelId: general, messageId: id });
    // The deletion comes next: the creation was not delivered twice (B ignores nothing but its own echo).
    expect(await stream.next((e) => e.event !== 'message' || e.data !== '')).toMatchObject({ event: 'delete', data: id });
  });

  it('issue #36 §1: a message posted through A is rendered once on B, however many of B’s streams follow the channel', async () => {
    const { owner, general, stream } = await setup();
    const more: SseReader[] = [];
    for (let i = 0; i < 4; i += 1) {
      const extra = await SseReader.open(`${b.base}/channels/${general}/events`, { cookie: cookieOf(owner.agent) });
      streams.push(extra);
      expect(extra.response.status).toBe(200);
      await extra.next();
      more.push(extra);
    }
    await b.events.ready(general);
    const renders = async () => sample(await b.services.metrics.render(), 'live_message_renders_total') ?? 0;
    const before = await renders();
    const posted = await owner.agent.submit(`/channels/${general}`, `/channels/${general}/messages`, { content: 'once on **B**' });
    expect(posted.statusCode).toBe(303);
    for (const s of [stream, ...more]) expect((await s.next((e) => e.event === 'message')).data).toContain('once on <strong>B</strong>');
    expect(await renders()).toBe(before + 1);
  });

  it('B unsubscribes from Redis when its last view of the channel closes', async () => {
    const { general, stream } = await setup();
    const probe = new Redis(TEST_REDIS_URL as string);
    // PUBSUB NUMSUB: how many connections listen on the channel's Redis key.
    const subscribers = async () => ((await probe.pubsub('NUMSUB', `${prefix}${general}`)) as [string, number])[1];
    expect(await subscribers()).toBe(1);
    stream.close();
    await expect.poll(() => b.events.listenerCount(general)).toBe(0);
    await expect.poll(subscribers).toBe(0);
    probe.disconnect();
  });
});

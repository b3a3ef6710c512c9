import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { declareCoherentCache, RedisCoherence, UnacknowledgedChangeError } from '../../src/storage/coherence.js';
import { isDatabaseUnavailable } from '../../src/storage/unavailable.js';
import { connectRedis, waitUntilReady } from '../../src/storage/redis.js';
import { TEST_REDIS_URL } from '../support/database.js';

/**
 * storage/coherence.ts on a real Redis: what one instance remembers is forgotten before another
 * instance's change returns; an instance that cannot hear changes stops answering from memory
 * within its lease, and a change waits at most a lease for it.
 */
if (!TEST_REDIS_URL) console.log('coherence: skipped: needs TEST_REDIS_URL (Redis)');

const LEASE_MS = 600;
const ROWS = declareCoherentCache<string>('test-rows', ['users'], 100);
const SMALL = declareCoherentCache<string>('test-small', ['users'], 3);
const OBJECTS = declareCoherentCache<{ person: { name: string }; scopes: string[] }>('test-objects', ['users'], 10);

describe.skipIf(!TEST_REDIS_URL)('per-instance memories kept coherent over Redis', () => {
  const opened: RedisCoherence[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });

  function instance(namespace: string, now?: () => number): { coherence: RedisCoherence; subscriber: Redis; client: Redis } {
    const subscriber = new Redis(TEST_REDIS_URL as string, { maxRetriesPerRequest: null });
    subscriber.on('error', () => undefined);
    const client = connectRedis(TEST_REDIS_URL as string);
    const coherence = new RedisCoherence(client, subscriber, { namespace, leaseMs: LEASE_MS, watch: () => undefined, ...(now ? { now } : {}) });
    opened.push(coherence);
    return { coherence, subscriber, client };
  }

  async function untilLive(coherence: RedisCoherence): Promise<void> {
    for (let i = 0; i < 200 && !coherence.live(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(coherence.live()).toBe(true);
  }

  const namespace = () => `test-${randomBytes(6).toString('hex')}`;
  const value = (v: string) => () => Promise.resolve(v);

  it("another instance's change returns only after this instance has forgotten what it remembered", async () => {
    const ns = namespace();
    const { coherence: a } = instance(ns);
    const { coherence: b } = instance(ns);
    await Promise.all([untilLive(a), untilLive(b)]);
    const cache = a.cache(ROWS);
    expect(await cache.read('k', value('old'))).toBe('old');
    expect(await cache.read('k', value('unused'))).toBe('old');
    expect(cache.size).toBe(1);
    await b.changed();
    // No await between: b's change returned, so a has already forgotten.
    expect(cache.size).toBe(0);
    expect(await cache.read('k', value('new'))).toBe('new');
  });

  it('a member that never acknowledges holds a change back until its lease has run out, then lets it return', async () => {
    const ns = namespace();
    const { coherence: a } = instance(ns);
    await untilLive(a);
    const admin = connectRedis(TEST_REDIS_URL as string);
    await waitUntilReady(admin);
    try {
      const [seconds, micros] = (await admin.time()) as [string | number, string | number];
      const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      await admin.zadd(`gh:coh:${ns}:members`, redisNow + LEASE_MS, 'silent-member');
      const started = performance.now();
      await a.changed();
      expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_MS - 5);
    } finally {
      admin.disconnect();
    }
  });

  it('an instance whose heartbeats stop coming back stops answering from memory when its lease runs out', async () => {
    let offset = 0;
    const { coherence: a, subscriber } = instance(namespace(), () => performance.now() + offset);
    await untilLive(a);
    const cache = a.cache(ROWS);
    await cache.read('k', value('remembered'));
    // Heartbeats no longer come back: the subscriber stops hearing the channel.
    await subscriber.unsubscribe();
    offset = LEASE_MS;
    expect(a.live()).toBe(false);
    expect(await cache.read('k', value('from the database'))).toBe('from the database');
    expect(await cache.read('k', value('again from the database'))).toBe('again from the database');
    expect(cache.size).toBe(0);
  });

  it('a read under way while a change is told answers its request but is not remembered', async () => {
    const ns = namespace();
    const { coherence: a } = instance(ns);
    const { coherence: b } = instance(ns);
    await Promise.all([untilLive(a), untilLive(b)]);
    const cache = a.cache(ROWS);
    let finish: (v: string) => void = () => undefined;
    const reading = cache.read('k', () => new Promise<string>((resolve) => (finish = resolve)));
    await b.changed();
    finish('read before the change');
    expect(await reading).toBe('read before the change');
    expect(cache.size).toBe(0);
  });

  it('the subscriber connection closing forgets everything and ends the lease until a heartbeat comes back', async () => {
    const { coherence: a, subscriber } = instance(namespace());
    await untilLive(a);
    const cache = a.cache(ROWS);
    await cache.read('k', value('remembered'));
    subscriber.disconnect(true);
    await new Promise((r) => subscriber.once('close', r));
    expect(a.live()).toBe(false);
    expect(cache.size).toBe(0);
    // ioredis reconnects and subscribes again; the next heartbeat starts a new lease.
    await untilLive(a);
  });

  it('a change Redis will not take is refused after a lease, once more tried: the caller answers 503', async () => {
    const { coherence: a, client } = instance(namespace());
    await untilLive(a);
    client.disconnect();
    const started = performance.now();
    const error = await a.changed().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(UnacknowledgedChangeError);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_MS - 5);
    // Its own heartbeats fail too: it stops answering from memory.
    await new Promise((r) => setTimeout(r, LEASE_MS));
    expect(a.live()).toBe(false);
  });

  it('a remembered value is handed out frozen, nested objects included: one request cannot change what the next is answered', async () => {
    const { coherence: a } = instance(namespace());
    await untilLive(a);
    const cache = a.cache(OBJECTS);
    const remembered = await cache.read('k', () => Promise.resolve({ person: { name: 'A' }, scopes: ['identify'] }));
    expect(Object.isFrozen(remembered)).toBe(true);
    expect(Object.isFrozen(remembered?.person)).toBe(true);
    expect(Object.isFrozen(remembered?.scopes)).toBe(true);
  });

  it('a full cache starts over rather than growing', async () => {
    const { coherence: a } = instance(namespace());
    await untilLive(a);
    const cache = a.cache(SMALL);
    for (const key of ['1', '2', '3', '4']) await cache.read(key, value(key));
    expect(cache.size).toBe(1);
  });
});

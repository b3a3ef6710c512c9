import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketStore } from '../../src/rate-limit/bucket.js';
import { MemoryBucketStore } from '../../src/rate-limit/memory-store.js';
import { RedisBucketStore, ResilientBucketStore } from '../../src/rate-limit/redis-store.js';
import { connectRedis, waitUntilReady } from '../../src/storage/redis.js';
import { TEST_REDIS_URL } from '../support/database.js';

const rule = { limit: 10, windowMs: 2000 };

if (!TEST_REDIS_URL) console.warn('[bucket-stores] TEST_REDIS_URL is not set: only the memory store runs the contract here, and the Redis store\'s refusals from memory are skipped.');

const stores: Array<[string, () => BucketStore]> = [['memory', () => new MemoryBucketStore()]];
if (TEST_REDIS_URL) {
  const url = TEST_REDIS_URL;
  stores.push(['redis', () => new RedisBucketStore(connectRedis(url), `gh:test:${randomBytes(6).toString('hex')}:`)]);
}

describe.each(stores)('the %s bucket store applies SPEC §8 (10 requests per 2 s) exactly', (_name, make) => {
  const store = make();
  beforeAll(async () => {
    if (store instanceof RedisBucketStore) expect(await waitUntilReady(store.client)).toBe(true);
  });
  afterAll(async () => store.close());

  it('accepts 10 requests in a window and refuses the 11th with the time left', async () => {
    const now = 1_000_000;
    const results = [];
    for (let i = 0; i < 11; i += 1) results.push(await store.take('w1', rule, now + i));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(results[9]).toMatchObject({ allowed: true, remaining: 0, limit: 10, resetAt: now + 2000 });
    expect(results[10]).toMatchObject({ allowed: false, remaining: 0, resetAt: now + 2000, resetAfterMs: 1990 });
  });

  it('a new window opens when the old one ends', async () => {
    const now = 2_000_000;
    for (let i = 0; i < 10; i += 1) await store.take('w2', rule, now);
    expect((await store.take('w2', rule, now + 1999)).allowed).toBe(false);
    expect(await store.take('w2', rule, now + 2000)).toMatchObject({ allowed: true, remaining: 9, resetAt: now + 4000 });
  });

  it('keys are independent and reset forgets one', async () => {
    const now = 3_000_000;
    for (let i = 0; i < 10; i += 1) await store.take('w3', rule, now);
    expect((await store.take('w4', rule, now)).allowed).toBe(true);
    await store.reset('w3');
    expect((await store.take('w3', rule, now)).allowed).toBe(true);
  });

  it('peek counts nothing', async () => {
    const now = 4_000_000;
    await store.take('w5', rule, now);
    expect(await store.peek('w5', rule, now)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await store.peek('w5', rule, now)).toMatchObject({ remaining: 9 });
  });

  it('100 concurrent takes on one bucket accept exactly 10', async () => {
    const now = 5_000_000;
    const results = await Promise.all(Array.from({ length: 100 }, () => store.take('w6', rule, now)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
  });
});

describe('the resilient store falls back to memory while Redis is unreachable', () => {
  it('keeps limiting on the fallback, logs once, and never throws', async () => {
    const logs: string[] = [];
    const logger = { warn: (_o: unknown, m?: string) => void logs.push(`warn:${m}`), info: (m: unknown) => void logs.push(`info:${String(m)}`) };
    // Port 1 on loopback: nothing listens, every command fails at once.
    const store = new ResilientBucketStore(new RedisBucketStore(connectRedis('redis://127.0.0.1:1')), new MemoryBucketStore(), logger);
    const results = [];
    for (let i = 0; i < 11; i += 1) results.push(await store.take('k', rule, 0));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(store.usingFallback).toBe(true);
    expect(logs.filter((l) => l.startsWith('warn:'))).toHaveLength(1);
    await store.close();
  });

  it.runIf(TEST_REDIS_URL)('returns to Redis when it is reachable again, and says so', async () => {
    const logs: string[] = [];
    const logger = { warn: (_o: unknown, m?: string) => void logs.push(`warn:${m}`), info: (m: unknown) => void logs.push(`info:${String(m)}`) };
    const client = connectRedis(TEST_REDIS_URL as string);
    expect(await waitUntilReady(client)).toBe(true);
    const store = new ResilientBucketStore(new RedisBucketStore(client, `gh:test:${randomBytes(6).toString('hex')}:`), new MemoryBucketStore(), logger);
    const ended = new Promise((resolve) => client.once('end', resolve));
    client.disconnect();
    await ended;
    await store.take('k', rule, 0);
    expect(store.usingFallback).toBe(true);
    await client.connect();
    expect(await waitUntilReady(client)).toBe(true);
    await store.take('k', rule, 0);
    expect(store.usingFallback).toBe(false);
    expect(logs).toEqual([expect.stringMatching(/^warn:/), 'info:rate limiting is back on Redis']);
    await store.close();
  });
});

describe.skipIf(!TEST_REDIS_URL)('the Redis store answers a full bucket of a never-reset rule from memory until its window ends', () => {
  const neverReset = { limit: 10, windowMs: 2000, neverReset: true };
  /** Stores on one Redis and one prefix, as instances sharing it are. */
  async function instances(count: number) {
    const prefix = `gh:test:${randomBytes(6).toString('hex')}:`;
    const stores = await Promise.all(
      Array.from({ length: count }, async () => {
        const client = connectRedis(TEST_REDIS_URL as string);
        expect(await waitUntilReady(client)).toBe(true);
        return new RedisBucketStore(client, prefix);
      }),
    );
    // Deleting a bucket behind the stores' backs shows which answers came from Redis: a store that
    // asks Redis finds an empty bucket and accepts; one answering from memory still refuses.
    const forget = (key: string) => stores[0]!.client.del(prefix + key);
    return { stores, forget, close: () => Promise.all(stores.map((s) => s.close())) };
  }

  it('after the take that fills it, refusals carry the same headers without asking Redis; the window\'s end asks Redis again', async () => {
    const { stores: [a], forget, close } = await instances(1);
    const now = 10_000_000;
    for (let i = 0; i < 10; i += 1) expect((await a!.take('wh:1', neverReset, now)).allowed).toBe(true);
    expect(await a!.take('wh:1', neverReset, now + 500)).toEqual({ allowed: false, limit: 10, remaining: 0, resetAt: now + 2000, resetAfterMs: 1500 });
    await forget('wh:1');
    expect(await a!.take('wh:1', neverReset, now + 1999)).toEqual({ allowed: false, limit: 10, remaining: 0, resetAt: now + 2000, resetAfterMs: 1 });
    expect(await a!.take('wh:1', neverReset, now + 2000)).toMatchObject({ allowed: true, remaining: 9, resetAt: now + 4000 });
    await close();
  });

  it('an instance that has not seen the bucket full asks Redis, and learns it there', async () => {
    const { stores: [a, b], close } = await instances(2);
    const now = 15_000_000;
    for (let i = 0; i < 10; i += 1) await a!.take('wh:4', neverReset, now);
    expect(await b!.take('wh:4', neverReset, now + 100)).toMatchObject({ allowed: false, remaining: 0, resetAt: now + 2000, resetAfterMs: 1900 });
    await close();
  });

  it('three instances sharing the bucket accept exactly 10 per window between them, over several windows', async () => {
    const { stores, close } = await instances(3);
    const start = 20_000_000;
    for (let window = 0; window < 4; window += 1) {
      const at = start + window * 2000;
      // Interleaved, as a load balancer spreads them; many at once.
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 3]!.take('wh:2', neverReset, at + (i % 7))));
      expect(results.filter((r) => r.allowed)).toHaveLength(10);
    }
    await close();
  });

  it('a rule whose keys can be reset (sign-in throttles) asks Redis every time, and reset forgets what this instance remembered', async () => {
    const { stores: [a], forget, close } = await instances(1);
    const now = 30_000_000;
    for (let i = 0; i < 10; i += 1) await a!.take('pair', rule, now);
    expect((await a!.take('pair', rule, now)).allowed).toBe(false);
    await forget('pair');
    expect((await a!.take('pair', rule, now)).allowed).toBe(true);
    for (let i = 0; i < 10; i += 1) await a!.take('wh:3', neverReset, now);
    await a!.reset('wh:3');
    expect((await a!.take('wh:3', neverReset, now)).allowed).toBe(true);
    await close();
  });
});

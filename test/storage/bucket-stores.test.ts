import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketStore } from '../../src/rate-limit/bucket.js';
import { MemoryBucketStore } from '../../src/rate-limit/memory-store.js';
import { RedisBucketStore, ResilientBucketStore } from '../../src/rate-limit/redis-store.js';
import { connectRedis, waitUntilReady } from '../../src/storage/redis.js';
import { TEST_REDIS_URL } from '../support/database.js';

const rule = { limit: 10, windowMs: 2000 };

if (!TEST_REDIS_URL) console.warn('[bucket-stores] TEST_REDIS_URL is not set: the Redis store runs only the memory half of the contract here.');

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

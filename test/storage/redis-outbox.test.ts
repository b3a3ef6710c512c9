import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { RedisBucketStore } from '../../src/rate-limit/redis-store.js';
import { connectRedis } from '../../src/storage/redis.js';
import type { ChannelEvent } from '../../src/realtime/channel-events.js';
import { createRedisChannelEvents, type RedisChannelEvents } from '../../src/realtime/redis-channel-events.js';
import { RIDE_WAIT_MS, RedisOutbox } from '../../src/realtime/redis-outbox.js';
import { TEST_REDIS_URL } from '../support/database.js';

if (!TEST_REDIS_URL) console.warn('[redis-outbox] TEST_REDIS_URL is not set: these tests need a Redis and do not run here.');

const silent = pino({ level: 'silent' });
const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

/**
 * Issue #26 §1: a live-update publish costs no round trip of its own when a bucket operation goes
 * to Redis in the same turn, and nothing is published for a channel no other instance watches.
 */
describe.skipIf(!TEST_REDIS_URL)('live-update publishes on Redis', () => {
  const url = TEST_REDIS_URL as string;
  const prefix = `gh:test:${randomBytes(6).toString('hex')}:ch:`;
  let tap: Redis;
  const published: string[] = [];
  let a: RedisChannelEvents;
  let b: RedisChannelEvents;
  let bucketClient: Redis;
  let store: RedisBucketStore;

  beforeAll(async () => {
    // Sees every PUBLISH on this test's channels without being a watcher itself.
    tap = new Redis(url);
    tap.on('pmessage', (_pattern: string, channel: string) => published.push(channel));
    await tap.psubscribe(`${prefix}*`);
    bucketClient = connectRedis(url);
    const outbox = new RedisOutbox(bucketClient);
    store = new RedisBucketStore(bucketClient, `${prefix}rl:`, outbox);
    a = createRedisChannelEvents(url, silent, prefix, outbox);
    b = createRedisChannelEvents(url, silent, prefix);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    tap?.disconnect();
  });

  const channel = () => String(1_000_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9)));
  const event = (channelId: string, messageId: string): ChannelEvent => ({ type: 'message_create', channelId, messageId });

  /** Runs `body` on a fresh channel B watches, with what B saw and every command sent on the bucket connection meanwhile. */
  async function watchedByB(body: (id: string, seenOnB: string[], sent: MockInstance) => Promise<void>): Promise<void> {
    const id = channel();
    const seenOnB: string[] = [];
    const off = b.subscribe(id, (e) => seenOnB.push(e.messageId));
    await b.ready(id);
    const sent = vi.spyOn(bucketClient, 'sendCommand');
    try {
      await body(id, seenOnB, sent);
    } finally {
      sent.mockRestore();
      off();
    }
  }

  it('publishes nothing for a channel nobody watches, nor for one watched only by the sender', async () => {
    const id = channel();
    a.publish(event(id, '1'));
    await settle();
    expect(published.filter((c) => c === prefix + id)).toEqual([]);
    const seenOnA: string[] = [];
    const off = a.subscribe(id, (e) => seenOnA.push(e.messageId));
    await a.ready(id);
    a.publish(event(id, '2'));
    await settle();
    expect(seenOnA).toEqual(['2']); // delivered on A itself, without Redis
    expect(published.filter((c) => c === prefix + id)).toEqual([]);
    off();
  });

  it('publishes once another instance watches, and stops once its last view closes', async () => {
    const id = channel();
    const seenOnB: string[] = [];
    const off = b.subscribe(id, (e) => seenOnB.push(e.messageId));
    await b.ready(id);
    a.publish(event(id, '10'));
    await expect.poll(() => seenOnB).toEqual(['10']);
    expect(published.filter((c) => c === prefix + id)).toHaveLength(1);
    off();
    await settle();
    a.publish(event(id, '11'));
    await settle();
    expect(published.filter((c) => c === prefix + id)).toHaveLength(1);
  });

  it('a publish and a bucket take of the same turn are one command to Redis', async () => {
    await watchedByB(async (id, seenOnB, sent) => {
      a.publish(event(id, '20'));
      const decision = await store.take('wh:1', { limit: 10, windowMs: 2000 }, Date.now());
      expect(decision.allowed).toBe(true);
      await expect.poll(() => seenOnB).toEqual(['20']);
      await settle();
      expect(sent).toHaveBeenCalledTimes(1);
    });
  });

  it('a publish made after the turn\'s bucket operations waits for the next one and rides on it', async () => {
    await watchedByB(async (id, seenOnB, sent) => {
      // An execute's publish follows its insert's commit; the next request's take comes a little later.
      a.publish(event(id, '30'));
      await new Promise((resolve) => setTimeout(resolve, RIDE_WAIT_MS / 5));
      expect(sent).not.toHaveBeenCalled();
      await store.take('wh:2', { limit: 10, windowMs: 2000 }, Date.now());
      await expect.poll(() => seenOnB).toEqual(['30']);
      await settle();
      expect(sent).toHaveBeenCalledTimes(1);
    });
  });

  it('a publish no bucket operation carries goes by itself within RIDE_WAIT_MS, those waiting together in one call', async () => {
    await watchedByB(async (id, seenOnB, sent) => {
      a.publish(event(id, '40'));
      a.publish(event(id, '41'));
      await expect.poll(() => seenOnB).toEqual(['40', '41']);
      expect(sent).toHaveBeenCalledTimes(1);
    });
  });

  it('closing an instance sends the publishes still waiting for a ride', async () => {
    await watchedByB(async (id, seenOnB) => {
      // Connected first: the publisher fails fast rather than queue while Redis is unreachable.
      const client = connectRedis(url);
      await once(client, 'ready');
      const c = createRedisChannelEvents(url, silent, prefix, new RedisOutbox(client));
      c.publish(event(id, '50'));
      await c.close();
      await expect.poll(() => seenOnB).toEqual(['50']);
    });
  });
});

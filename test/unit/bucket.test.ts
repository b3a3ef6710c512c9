import { describe, expect, it } from 'vitest';
import { peekBucket, takeFromBucket, type BucketState } from '../../src/rate-limit/bucket.js';
import { MemoryBucketStore } from '../../src/rate-limit/memory-store.js';

const rule = { limit: 10, windowMs: 2000 };

describe('the bucket rule (SPEC §8: 10 requests every 2 seconds)', () => {
  it('allows exactly `limit` requests in one window, then refuses', () => {
    let state: BucketState | undefined;
    const decisions = [];
    for (let i = 0; i < 11; i += 1) {
      const r = takeFromBucket(state, rule, 1000);
      state = r.state;
      decisions.push(r.decision);
    }
    expect(decisions.slice(0, 10).every((d) => d.allowed)).toBe(true);
    expect(decisions[9]?.remaining).toBe(0);
    expect(decisions[10]?.allowed).toBe(false);
    expect(decisions[10]?.resetAfterMs).toBe(2000);
  });

  it('the window starts with the first request and resets after windowMs', () => {
    let state: BucketState | undefined;
    for (let i = 0; i < 10; i += 1) state = takeFromBucket(state, rule, 1000 + i).state;
    expect(takeFromBucket(state, rule, 2999).decision.allowed).toBe(false);
    const after = takeFromBucket(state, rule, 3000).decision;
    expect(after.allowed).toBe(true);
    expect(after.remaining).toBe(9);
    expect(after.resetAt).toBe(5000);
  });

  it('a refused request does not count against the next window', () => {
    let state: BucketState | undefined;
    for (let i = 0; i < 15; i += 1) state = takeFromBucket(state, rule, 0).state;
    expect(state?.count).toBe(10);
  });

  it('peek reports without counting', () => {
    let state: BucketState | undefined = takeFromBucket(undefined, rule, 0).state;
    const peeked = peekBucket(state, rule, 500);
    expect(peeked.remaining).toBe(9);
    state = takeFromBucket(state, rule, 500).state;
    expect(state.count).toBe(2);
  });
});

describe('the memory bucket store', () => {
  it('keeps buckets per key and forgets them on reset', async () => {
    const store = new MemoryBucketStore();
    for (let i = 0; i < 10; i += 1) await store.take('a', rule, 0);
    expect((await store.take('a', rule, 0)).allowed).toBe(false);
    expect((await store.take('b', rule, 0)).allowed).toBe(true);
    await store.reset('a');
    expect((await store.take('a', rule, 0)).allowed).toBe(true);
  });

  it('sweeps expired buckets so memory follows active keys', async () => {
    const store = new MemoryBucketStore(100);
    for (let i = 0; i < 99; i += 1) await store.take(`k${i}`, rule, 0);
    expect(store.size).toBe(99);
    await store.take('late', rule, 10_000);
    expect(store.size).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/core/errors.js';
import { MINUTE } from '../../src/core/clock.js';
import { MemoryBucketStore } from '../../src/rate-limit/memory-store.js';
import { addressBlock, beginSignIn, slowdownMs } from '../../src/modules/accounts/sign-in-throttle.js';

describe('sign-in throttle', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::', 'fe80:0:0:0::/64'],
  ])('the address %s is counted as %s', (address, block) => {
    expect(addressBlock(address)).toBe(block);
  });

  it('the sixth attempt at an account from an address after five failures there is refused before anything is checked, with the time left', async () => {
    const buckets = new MemoryBucketStore();
    const start = 1_000_000;
    for (let i = 0; i < 5; i += 1) {
      const attempt = await beginSignIn(buckets, start + i * MINUTE, 'Alice', '192.0.2.7');
      await attempt.failed();
    }
    const refused = await beginSignIn(buckets, start + 5 * MINUTE, 'alice', '192.0.2.7').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterMs).toBe(10 * MINUTE);
    await expect(beginSignIn(buckets, start + 15 * MINUTE, 'alice', '192.0.2.7')).resolves.toMatchObject({ failed: expect.any(Function) });
  });

  it('issue #21 §2: failures from other addresses never refuse an account; they only slow it down, within a ceiling', async () => {
    const buckets = new MemoryBucketStore();
    for (let i = 0; i < 200; i += 1) await (await beginSignIn(buckets, 0, 'carol', `198.51.${Math.floor(i / 4)}.${i % 4}`)).failed();
    const owner = await beginSignIn(buckets, MINUTE, 'Carol', '203.0.113.1');
    expect(owner.delayMs).toBe(8000);
    const quiet = await beginSignIn(buckets, MINUTE, 'dave', '203.0.113.1');
    expect(quiet.delayMs).toBe(0);
  });

  it.each([
    [0, 0],
    [9, 0],
    [10, 500],
    [14, 500],
    [15, 1000],
    [25, 4000],
    [30, 8000],
    [10_000, 8000],
  ])('after %i failures an attempt at the account waits %i ms', (failures, ms) => {
    expect(slowdownMs(failures)).toBe(ms);
  });

  it('refused attempts do not extend the window', async () => {
    const buckets = new MemoryBucketStore();
    for (let i = 0; i < 5; i += 1) await (await beginSignIn(buckets, 0, 'bob', '192.0.2.1')).failed();
    for (let i = 1; i < 15; i += 1) await expect(beginSignIn(buckets, i * MINUTE, 'bob', '192.0.2.1')).rejects.toBeInstanceOf(RateLimitedError);
    await expect(beginSignIn(buckets, 15 * MINUTE, 'bob', '192.0.2.1')).resolves.toMatchObject({ failed: expect.any(Function) });
  });
});

import { describe, expect, it } from 'vitest';
import { pooledCryptoRandom } from '../../src/core/random.js';

describe('the injected CSPRNG, drawn in blocks (DESIGN §2, docs/performance.md)', () => {
  it('returns exactly the bytes asked for, different every time, across refills of its pool', () => {
    const random = pooledCryptoRandom(64);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i += 1) {
      const value = random.bytes(40);
      expect(value.length).toBe(40);
      seen.add(value.toString('hex'));
    }
    expect(seen.size).toBe(200);
  });

  it('serves a request larger than its pool straight from the CSPRNG', () => {
    const random = pooledCryptoRandom(16);
    const a = random.bytes(100);
    const b = random.bytes(100);
    expect(a.length).toBe(100);
    expect(a.equals(b)).toBe(false);
    expect(a.equals(Buffer.alloc(100))).toBe(false);
  });

  it('hands out buffers of their own: changing one changes neither the next value nor an earlier one', () => {
    const random = pooledCryptoRandom(64);
    const first = random.bytes(8);
    const copy = Buffer.from(first);
    const second = random.bytes(8);
    second.fill(0);
    expect(first.equals(copy)).toBe(true);
    expect(random.bytes(8).equals(Buffer.alloc(8))).toBe(false);
  });
});

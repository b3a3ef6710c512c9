import { describe, expect, it } from 'vitest';
import { cryptoRandom } from '../../src/core/random.js';
import { hashSecret, hasPrefix, issueSecret, matchesHash, safeEqual, SecretPrefix } from '../../src/core/secrets.js';

describe('secrets (DESIGN §3)', () => {
  it('carry a type prefix and at least 256 random bits from the alphabet [A-Za-z0-9_-]', () => {
    const s = issueSecret(cryptoRandom, 'accessToken');
    expect(s.plain.startsWith(`${SecretPrefix.accessToken}_`)).toBe(true);
    expect(s.plain).toMatch(/^[A-Za-z0-9_-]+$/);
    const body = s.plain.slice(SecretPrefix.accessToken.length + 1);
    expect(Buffer.from(body, 'base64url').length).toBeGreaterThanOrEqual(32);
  });

  it('are kept only as a SHA-256 hash that does not contain the secret', () => {
    const s = issueSecret(cryptoRandom, 'refreshToken');
    expect(s.hash).toBe(hashSecret(s.plain));
    expect(s.hash).not.toContain(s.plain.slice(5, 20));
    expect(Buffer.from(s.hash, 'base64url').length).toBe(32);
  });

  it('are different every time', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => issueSecret(cryptoRandom, 'session').plain));
    expect(seen.size).toBe(1000);
  });

  it('compare equal only when identical, whatever their lengths', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
  });

  it('match their stored hash only when presented exactly', () => {
    const s = issueSecret(cryptoRandom, 'webhookToken');
    expect(matchesHash(s.plain, s.hash)).toBe(true);
    expect(matchesHash(`${s.plain}x`, s.hash)).toBe(false);
    expect(matchesHash(s.plain.slice(0, -1), s.hash)).toBe(false);
    // A stored value of another length (corrupt or foreign) never matches, and never throws.
    expect(matchesHash(s.plain, s.hash.slice(1))).toBe(false);
    expect(matchesHash(s.plain, '')).toBe(false);
  });

  it('are recognisable by prefix', () => {
    const s = issueSecret(cryptoRandom, 'webhookToken');
    expect(hasPrefix(s.plain, 'webhookToken')).toBe(true);
    expect(hasPrefix(s.plain, 'botToken')).toBe(false);
  });
});

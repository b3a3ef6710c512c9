import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/services.js';
import { ensureSigningKeys, KEY_CACHE_TTL_MS, rotateSigningKeys, signJwt, verifyOwnJwt } from '../../src/modules/oidc/oidc-keys.service.js';
import { createTestApp, type TestApp } from '../support/app.js';

/**
 * Issue #22 §3: "nothing breaks across several instances sharing one database". A second
 * instance is the same database seen through another Kysely object (its own key cache).
 */
describe('ID-token signing keys shared by instances on one database', () => {
  let t: TestApp;
  let other: Services;

  beforeAll(async () => {
    t = await createTestApp();
    other = { ...t.services, db: t.services.db.withPlugin({ transformQuery: (a) => a.node, transformResult: async (a) => a.result }) };
  });
  afterAll(async () => t.close());

  const activeCount = async () =>
    t.services.db.selectFrom('oidc_signing_keys').select(['alg']).where('retired_at', 'is', null).execute();

  it('instances creating the first keys at once end with exactly one active key per algorithm', async () => {
    await Promise.all([ensureSigningKeys(t.services), ensureSigningKeys(other), ensureSigningKeys(t.services)]);
    expect((await activeCount()).map((r) => r.alg).sort()).toEqual(['ES256', 'RS256']);
  });

  it('after another instance rotates: this one still signs with the old key within its cache period, verifies the new kid at once (kid miss), and switches after', async () => {
    const before = await signJwt(t.services, 'ES256', { sub: '1' });
    const [rotated] = (await rotateSigningKeys(other)).filter((r) => r.alg === 'ES256');
    const fromOther = await signJwt(other, 'ES256', { sub: '2' });
    expect(decodeProtectedHeader(fromOther).kid).toBe(rotated?.kid);
    // Within the cache period this instance signs with the retired key, which stays published.
    expect(decodeProtectedHeader(await signJwt(t.services, 'ES256', { sub: '3' })).kid).toBe(decodeProtectedHeader(before).kid);
    expect(await verifyOwnJwt(t.services, fromOther)).toMatchObject({ sub: '2' });
    expect(await verifyOwnJwt(other, before)).toMatchObject({ sub: '1' });
    t.clock.advance(KEY_CACHE_TTL_MS);
    expect(decodeProtectedHeader(await signJwt(t.services, 'ES256', { sub: '4' })).kid).toBe(rotated?.kid);
  });

  it('a JWS not signed by a published key is not verified', async () => {
    const token = await signJwt(t.services, 'RS256', { sub: '5' });
    const [h, p, s] = token.split('.') as [string, string, string];
    expect(await verifyOwnJwt(t.services, `${h}.${p}.${s.slice(0, -6)}AAAAAA`)).toBeUndefined();
    expect(await verifyOwnJwt(t.services, 'not a jws')).toBeUndefined();
  });
});

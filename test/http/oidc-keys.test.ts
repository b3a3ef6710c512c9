import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '../../src/core/clock.js';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Services } from '../../src/services.js';
import { ensureSigningKeys, JWKS_MAX_AGE_S, NEXT_KEY_LEAD_MS, RETIRED_KEY_PUBLISHED_MS, rotateSigningKeys, signJwt, verifyOwnJwt } from '../../src/modules/oidc/oidc-keys.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { postForm } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { answerConsent, authorizePath, createApp, freshPkce, ISSUER, location, requestFor, signedIn } from './authorize.fixtures.js';
import { operatorActing } from '../support/acting.js';

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
  const kidOf = (token: string) => decodeProtectedHeader(token).kid;

  it('instances creating the first keys at once end with exactly one active key per algorithm', async () => {
    await Promise.all([ensureSigningKeys(t.services), ensureSigningKeys(other), ensureSigningKeys(t.services)]);
    expect((await activeCount()).map((r) => r.alg).sort()).toEqual(['ES256', 'RS256']);
  });

  it('after another instance rotates: both keep signing with the old key while the new kid is published and verified, and both switch once the lead time has passed', async () => {
    const before = await signJwt(t.services, 'ES256', { sub: '1' });
    const [rotated] = (await rotateSigningKeys(other, operatorActing())).filter((r) => r.alg === 'ES256');
    expect(rotated?.signsFrom).toBe(t.clock.now() + NEXT_KEY_LEAD_MS);
    // Issue #36 §6: published before use — neither instance signs with the new key yet.
    expect(kidOf(await signJwt(other, 'ES256', { sub: '2' }))).toBe(kidOf(before));
    expect(kidOf(await signJwt(t.services, 'ES256', { sub: '3' }))).toBe(kidOf(before));
    const published = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;
    expect(published.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([kidOf(before), rotated?.kid]));

    t.clock.advance(NEXT_KEY_LEAD_MS);
    const fromOther = await signJwt(other, 'ES256', { sub: '4' });
    expect(kidOf(fromOther)).toBe(rotated?.kid);
    expect(kidOf(await signJwt(t.services, 'ES256', { sub: '5' }))).toBe(rotated?.kid);
    expect(await verifyOwnJwt(t.services, fromOther)).toMatchObject({ sub: '4' });
    expect(await verifyOwnJwt(other, before)).toMatchObject({ sub: '1' });
  });

  it('a second rotation within the lead time does not keep the oldest key signing longer', async () => {
    const [first] = (await rotateSigningKeys(t.services, operatorActing())).filter((r) => r.alg === 'RS256');
    t.clock.advance(10 * SECOND);
    const [second] = (await rotateSigningKeys(t.services, operatorActing())).filter((r) => r.alg === 'RS256');
    t.clock.advance(NEXT_KEY_LEAD_MS - 10 * SECOND);
    // The first rotation's key signs from its own time on, and the second's after its own lead.
    expect(kidOf(await signJwt(t.services, 'RS256', { sub: '7' }))).toBe(first?.kid);
    t.clock.advance(10 * SECOND);
    expect(kidOf(await signJwt(t.services, 'RS256', { sub: '8' }))).toBe(second?.kid);
  });

  it('a JWS not signed by a published key is not verified', async () => {
    const token = await signJwt(t.services, 'RS256', { sub: '5' });
    const [h, p, s] = token.split('.') as [string, string, string];
    expect(await verifyOwnJwt(t.services, `${h}.${p}.${s.slice(0, -6)}AAAAAA`)).toBeUndefined();
    expect(await verifyOwnJwt(t.services, 'not a jws')).toBeUndefined();
  });
});

/**
 * Issue #36 §6: "a relying party that cached the JWKS (served with max-age=300) rejects tokens
 * signed with the new key for minutes" — this one keeps the key set it fetched for exactly the
 * max-age the server sends, never refetching on an unknown kid, and accepts only RS256.
 */
describe('sign-in after `keys rotate` with a relying party that keeps its first JWKS for the whole max-age', () => {
  let t: TestApp;
  let app: Application;

  beforeAll(async () => {
    t = await createTestApp();
    const { person } = await signedIn(t, 'rotation_owner');
    ({ app } = await createApp(t, person, { name: 'Caching RP', redirectUris: ['https://cache.example/cb'] }));
  });
  afterAll(async () => t.close());

  class CachingRelyingParty {
    fetches = 0;
    private keySet: JSONWebKeySet | undefined;
    private expiresAt = 0;

    private async keys(): Promise<JSONWebKeySet> {
      if (this.keySet === undefined || t.clock.now() >= this.expiresAt) {
        const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
        const maxAge = Number(/max-age=([0-9]+)/.exec(String(res.headers['cache-control']))?.[1]);
        this.keySet = res.json() as JSONWebKeySet;
        this.expiresAt = t.clock.now() + maxAge * 1000;
        this.fetches += 1;
      }
      return this.keySet;
    }

    async verify(idToken: string): Promise<string | undefined> {
      const { payload } = await jwtVerify(idToken, createLocalJWKSet(await this.keys()), {
        issuer: ISSUER,
        audience: app.id,
        algorithms: ['RS256'],
        currentDate: new Date(t.clock.now()),
      });
      return payload.sub;
    }
  }

  async function idTokenFor(agent: PageAgent): Promise<string> {
    const pkce = freshPkce();
    const path = authorizePath(requestFor(app, { scope: 'openid', nonce: 'n', code_challenge: pkce.challenge }));
    const first = await agent.get(path);
    const res = first.statusCode === 200 ? await answerConsent(agent, path, 'authorize') : first;
    const code = location(res).searchParams.get('code') as string;
    const tokens = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: 'https://cache.example/cb', client_id: app.id, code_verifier: pkce.verifier });
    expect(tokens.statusCode).toBe(200);
    return (tokens.json() as { id_token: string }).id_token;
  }

  it('every sign-in validates: right after the rotation and until the cached key set expires, then with the refetched set once the new key signs', async () => {
    const { agent, person } = await signedIn(t);
    const rp = new CachingRelyingParty();
    const before = await idTokenFor(agent);
    expect(await rp.verify(before)).toBe(person.id);
    // The worst case: the relying party fetched the key set just before the rotation.
    const [rotated] = (await rotateSigningKeys(t.services, operatorActing())).filter((r) => r.alg === 'RS256');

    expect(await rp.verify(await idTokenFor(agent))).toBe(person.id);
    t.clock.advance(JWKS_MAX_AGE_S * 1000 - SECOND);
    expect(await rp.verify(await idTokenFor(agent))).toBe(person.id);
    expect(rp.fetches).toBe(1);

    t.clock.advance(NEXT_KEY_LEAD_MS - JWKS_MAX_AGE_S * 1000 + SECOND);
    const after = await idTokenFor(agent);
    expect(decodeProtectedHeader(after).kid).toBe(rotated?.kid);
    expect(await rp.verify(after)).toBe(person.id);
    expect(rp.fetches).toBe(2);
    // A token the old key signed still validates with the refetched set until it expires.
    expect(await rp.verify(before)).toBe(person.id);
    t.clock.advance(RETIRED_KEY_PUBLISHED_MS);
    const published = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;
    expect(published.keys.map((k) => k.kid)).not.toContain(decodeProtectedHeader(before).kid);
  });
});

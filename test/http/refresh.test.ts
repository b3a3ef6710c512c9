import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, HOUR, SECOND } from '../../src/core/clock.js';
import type { Person } from '../../src/modules/directory/people.js';
import { successorTokens } from '../../src/modules/oauth/token.service.js';
import { hashSecret } from '../../src/core/secrets.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { basicAuth, createClient, createPerson, getWithBearer, obtainTokens, postForm, type TestClient, type Tokens } from '../support/oauth-factory.js';

const TOKEN = '/api/oauth2/token';

describe('POST /api/oauth2/token: refresh_token grant', () => {
  let t: TestApp;
  let person: Person;
  let confidential: TestClient;
  let pub: TestClient;
  let other: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    person = await createPerson(t);
    confidential = await createClient(t, { owner: person });
    pub = await createClient(t, { owner: person, confidential: false });
    other = await createClient(t, { owner: person });
  });
  afterAll(async () => t.close());

  const refreshAs = (client: TestClient, refreshToken: string, extra: Record<string, string> = {}) =>
    postForm(t, TOKEN, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.clientId,
      ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
      ...extra,
    });
  const works = async (accessToken: string) => (await getWithBearer(t, '/api/v1/users/@me', accessToken)).statusCode === 200;

  it('SPEC §3 refresh token current → replaced, F3: a refresh returns a new refresh and a new access token; the old refresh token stops working', async () => {
    const first = await obtainTokens(t, pub, person, ['identify', 'email']);
    const res = await refreshAs(pub, first.refresh_token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['pragma']).toBe('no-cache');
    const next = res.json() as Tokens;
    expect(next).toEqual({ access_token: expect.stringMatching(/^ghat_/), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.stringMatching(/^ghrt_/), scope: 'identify email' });
    expect(next.refresh_token).not.toBe(first.refresh_token);
    expect(next.access_token).not.toBe(first.access_token);
    expect(await works(next.access_token)).toBe(true);

    t.clock.advance(31 * SECOND);
    const old = await refreshAs(pub, first.refresh_token);
    expect(old.statusCode).toBe(400);
    expect(old.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('F4: reusing a rotated refresh token after the grace window answers invalid_grant and ends the whole grant', async () => {
    const first = await obtainTokens(t, confidential, person);
    const second = (await refreshAs(confidential, first.refresh_token)).json() as Tokens;
    t.clock.advance(31 * SECOND);
    const reuse = await refreshAs(confidential, first.refresh_token);
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token already used: it was replaced by a newer one, and the authorization has been revoked' });
    expect(await works(second.access_token)).toBe(false);
    expect(await works(first.access_token)).toBe(false);
    expect((await refreshAs(confidential, second.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('grace window: a retry within 30 s from the same client gets back the same successor pair, and the tokens keep working', async () => {
    const first = await obtainTokens(t, pub, person);
    const a = (await refreshAs(pub, first.refresh_token)).json() as Tokens;
    t.clock.advance(10 * SECOND);
    const retry = await refreshAs(pub, first.refresh_token);
    expect(retry.statusCode).toBe(200);
    const b = retry.json() as Tokens;
    expect(b.access_token).toBe(a.access_token);
    expect(b.refresh_token).toBe(a.refresh_token);
    expect(b.expires_in).toBe(3590);
    expect(await works(a.access_token)).toBe(true);
    expect((await refreshAs(pub, a.refresh_token)).statusCode).toBe(200);
  });

  it('grace window: once the successor has been used, a retry of the old token is reuse and ends the grant', async () => {
    const first = await obtainTokens(t, pub, person);
    const second = (await refreshAs(pub, first.refresh_token)).json() as Tokens;
    const third = (await refreshAs(pub, second.refresh_token)).json() as Tokens;
    const retry = await refreshAs(pub, first.refresh_token);
    expect(retry.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await works(third.access_token)).toBe(false);
  });

  it('grace window: the same token from another client within 30 s is not a retry (invalid_grant), and the grant survives', async () => {
    const first = await obtainTokens(t, confidential, person);
    const second = (await refreshAs(confidential, first.refresh_token)).json() as Tokens;
    const res = await refreshAs(other, first.refresh_token);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was not issued to this client' });
    expect(await works(second.access_token)).toBe(true);
  });

  it('F5: concurrent refreshes with one token mint exactly one pair, and every caller gets that pair', async () => {
    const first = await obtainTokens(t, pub, person);
    const results = await Promise.all(Array.from({ length: 10 }, () => refreshAs(pub, first.refresh_token)));
    expect(results.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    const pairs = new Set(results.map((r) => `${(r.json() as Tokens).access_token} ${(r.json() as Tokens).refresh_token}`));
    expect(pairs.size).toBe(1);
    const rows = await t.services.db.selectFrom('oauth_refresh_tokens').select('token_hash').where('grant_id', '=', first.grantId).execute();
    expect(rows).toHaveLength(2);
    const access = await t.services.db.selectFrom('oauth_access_tokens').select('token_hash').where('grant_id', '=', first.grantId).execute();
    expect(access).toHaveLength(2);
  });

  it('F1: a refresh token presented by another client answers invalid_grant', async () => {
    const tokens = await obtainTokens(t, confidential, person);
    const res = await refreshAs(other, tokens.refresh_token);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await refreshAs(confidential, tokens.refresh_token)).statusCode).toBe(200);
  });

  it('F2: a confidential client must authenticate on refresh', async () => {
    const tokens = await obtainTokens(t, confidential, person);
    const none = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: confidential.clientId });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: 'invalid_client' });
    const wrong = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { headers: { authorization: basicAuth(confidential.clientId, 'ghcs_nope') } });
    expect(wrong.statusCode).toBe(401);
    const basic = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { headers: { authorization: basicAuth(confidential.clientId, confidential.clientSecret as string) } });
    expect(basic.statusCode).toBe(200);
  });

  it('F6: a scope parameter narrows the new access token; the new refresh token keeps the full scope', async () => {
    const tokens = await obtainTokens(t, pub, person, ['identify', 'email', 'servers']);
    const narrow = await refreshAs(pub, tokens.refresh_token, { scope: 'email' });
    expect(narrow.statusCode).toBe(200);
    const n = narrow.json() as Tokens;
    expect(n.scope).toBe('email');
    expect((await getWithBearer(t, '/api/v1/users/@me', n.access_token)).statusCode).toBe(403);
    const me = await getWithBearer(t, '/api/v1/oauth2/@me', n.access_token);
    expect((me.json() as { scopes: string[] }).scopes).toEqual(['email']);
    const full = (await refreshAs(pub, n.refresh_token)).json() as Tokens;
    expect(full.scope).toBe('identify email servers');
  });

  it('F6: a scope parameter that widens answers invalid_scope, and the refresh token is not consumed', async () => {
    const tokens = await obtainTokens(t, pub, person, ['identify']);
    const wide = await refreshAs(pub, tokens.refresh_token, { scope: 'identify email' });
    expect(wide.statusCode).toBe(400);
    expect(wide.json()).toEqual({ error: 'invalid_scope', error_description: 'scope exceeds the scope originally granted' });
    const unknown = await refreshAs(pub, tokens.refresh_token, { scope: 'admin' });
    expect(unknown.json()).toMatchObject({ error: 'invalid_scope' });
    expect((await refreshAs(pub, tokens.refresh_token)).statusCode).toBe(200);
  });

  it('F7: after revocation the refresh token answers invalid_grant', async () => {
    const tokens = await obtainTokens(t, pub, person);
    const revoked = await postForm(t, '/api/oauth2/token/revoke', { token: tokens.access_token, client_id: pub.clientId });
    expect(revoked.statusCode).toBe(200);
    const res = await refreshAs(pub, tokens.refresh_token);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token is invalid or revoked' });
  });

  it('F8, SPEC §8: a refresh token is valid 30 days; after that it answers invalid_grant "refresh token expired"', async () => {
    const a = await obtainTokens(t, pub, person);
    const b = await obtainTokens(t, pub, person);
    t.clock.advance(30 * DAY - 1000);
    expect((await refreshAs(pub, a.refresh_token)).statusCode).toBe(200);
    t.clock.advance(1000);
    const res = await refreshAs(pub, b.refresh_token);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token expired' });
  });

  it('SPEC §8: the access token from a refresh is valid 1 hour', async () => {
    const a = await obtainTokens(t, pub, person);
    const next = (await refreshAs(pub, a.refresh_token)).json() as Tokens;
    t.clock.advance(HOUR - 1000);
    expect(await works(next.access_token)).toBe(true);
    t.clock.advance(1000);
    expect(await works(next.access_token)).toBe(false);
  });

  it('SPEC §7: a used, expired or replaced refresh token is not accepted: two rotations in a row, each old token refused', async () => {
    const a = await obtainTokens(t, confidential, person);
    const b = (await refreshAs(confidential, a.refresh_token)).json() as Tokens;
    const c = (await refreshAs(confidential, b.refresh_token)).json() as Tokens;
    expect(await works(c.access_token)).toBe(true);
    t.clock.advance(31 * SECOND);
    expect((await refreshAs(confidential, b.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('F9: refresh tokens encode no grant id: they are opaque random values looked up by hash', async () => {
    const a = await obtainTokens(t, pub, person);
    expect(a.refresh_token).not.toContain(a.grantId);
    const tampered = `${a.refresh_token.slice(0, -2)}${a.refresh_token.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await refreshAs(pub, tampered)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refresh_token is required; a value of another token type is refused', async () => {
    expect((await postForm(t, TOKEN, { grant_type: 'refresh_token', client_id: pub.clientId })).json()).toEqual({ error: 'invalid_request', error_description: 'refresh_token is required' });
    const a = await obtainTokens(t, pub, person);
    expect((await refreshAs(pub, a.access_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('successor tokens cannot be computed from an old refresh token alone: they depend on a random key kept in the database', async () => {
    const a = await obtainTokens(t, pub, person);
    const row = await t.services.db.selectFrom('oauth_refresh_tokens').select('rotation_key').where('token_hash', '=', hashSecret(a.refresh_token)).executeTakeFirstOrThrow();
    expect(row.rotation_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const next = (await refreshAs(pub, a.refresh_token)).json() as Tokens;
    expect(successorTokens(t.services.secrets[0], a.refresh_token, row.rotation_key as string)).toEqual({ access: next.access_token, refresh: next.refresh_token });
    expect(successorTokens(t.services.secrets[0], a.refresh_token, '').refresh).not.toBe(next.refresh_token);
  });

  it('issue #21 §5: nor from an old refresh token and a copy of the database: they depend on the server secret, which is not in it', async () => {
    const a = await obtainTokens(t, pub, person);
    const next = (await refreshAs(pub, a.refresh_token)).json() as Tokens;
    // Everything the database holds about the old token, as a dump would show it.
    const dump = await t.services.db.selectFrom('oauth_refresh_tokens').selectAll().where('token_hash', '=', hashSecret(a.refresh_token)).executeTakeFirstOrThrow();
    const rotationKey = dump.rotation_key as string;
    // The derivation keyed with the presented token (what an attacker could compute before) no longer gives the live pair...
    const keyedWithToken = (label: string) => createHmac('sha256', a.refresh_token).update(`${label}\0${rotationKey}`).digest('base64url');
    expect(`ghrt_${keyedWithToken('gatehouse-rotate-refresh-v1')}`).not.toBe(next.refresh_token);
    // ...nor does the current derivation with any key found in the database.
    for (const guess of [rotationKey, dump.token_hash, dump.successor_hash ?? '', '']) {
      expect(successorTokens(guess, a.refresh_token, rotationKey).refresh).not.toBe(next.refresh_token);
    }
    expect(Object.values(dump).map(String).join(' ')).not.toContain(t.services.secrets[0]);
  });
});

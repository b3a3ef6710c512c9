import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/core/clock.js';
import type { Person } from '../../src/modules/directory/people.js';
import { updateProfile } from '../../src/modules/accounts/accounts.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createClient, createPerson, getWithBearer, obtainTokens, postForm, type TestClient } from '../support/oauth-factory.js';
import { applicationJson, userJson } from '../support/discord-resources.js';
import { operatorActing, personActingOf } from '../support/acting.js';

describe('identity endpoints (bearer tokens)', () => {
  let t: TestApp;
  let person: Person;
  let client: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    person = await createPerson(t, { username: 'alice', name: 'Alice A.', email: 'alice@example.com', avatarUrl: 'https://cdn.example.com/a.png' });
    client = await createClient(t, { owner: person, confidential: false, name: 'Photo Frame' });
  });
  afterAll(async () => t.close());

  it('SPEC §2.5: GET /users/@me with identify gives Discord\'s user: id, username, global_name and avatar (avatar_url), and no e-mail', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    const res = await getWithBearer(t, '/api/v1/users/@me', tokens.access_token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...userJson({ id: person.id, username: 'alice', global_name: 'Alice A.', avatar_url: 'https://cdn.example.com/a.png' }), mfa_enabled: false });
  });

  it('SPEC §2.5: scope email adds email and verified', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify', 'email']);
    const res = await getWithBearer(t, '/api/v1/users/@me', tokens.access_token);
    expect(res.json()).toEqual({ ...userJson({ id: person.id, username: 'alice', global_name: 'Alice A.', avatar_url: 'https://cdn.example.com/a.png' }), mfa_enabled: false, email: 'alice@example.com', verified: false });
  });

  it('E5: a token without identify answers 403 (50026) with error="insufficient_scope"', async () => {
    const tokens = await obtainTokens(t, client, person, ['email']);
    const res = await getWithBearer(t, '/api/v1/users/@me', tokens.access_token);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 50026, message: 'Missing required OAuth2 scope: identify' });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]*", error="insufficient_scope", scope="identify"$/);
  });

  it('E5: a missing token answers 401 with WWW-Authenticate: Bearer error="invalid_token"', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 0, message: '401: Unauthorized' });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]*", error="invalid_token"/);
  });

  it('E5: an unknown token, another scheme, or a malformed header answer 401 invalid_token', async () => {
    for (const authorization of ['Bearer ghat_unknownunknownunknownunknownunknown0000', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b']) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    }
    // DESIGN §1: the Bot scheme is a bot's credential on /users/@me; an unknown bot token is 401 too.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: { authorization: 'Bot abc' } })).statusCode).toBe(401);
  });

  it('E5: the Bearer scheme name is case-insensitive', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: { authorization: `bearer ${tokens.access_token}` } });
    expect(res.statusCode).toBe(200);
  });

  it('E5: an expired token (after 1 hour) answers 401 invalid_token', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    t.clock.advance(HOUR - 1);
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    t.clock.advance(1);
    const res = await getWithBearer(t, '/api/v1/users/@me', tokens.access_token);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('E5: a revoked token answers 401 invalid_token', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    await postForm(t, '/api/oauth2/token/revoke', { token: tokens.refresh_token, client_id: client.clientId });
    const res = await getWithBearer(t, '/api/v1/users/@me', tokens.access_token);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('E5: a token in the query string is refused, even next to a valid header', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    const queryOnly = await t.app.inject({ method: 'GET', url: `/api/v1/users/@me?access_token=${tokens.access_token}` });
    expect(queryOnly.statusCode).toBe(401);
    expect(queryOnly.headers['www-authenticate']).toContain('error="invalid_request"');
    const both = await t.app.inject({ method: 'GET', url: `/api/v1/users/@me?access_token=${tokens.access_token}`, headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(both.statusCode).toBe(401);
  });

  it('SPEC §2.7: GET /oauth2/@me reports the application, the token’s scopes, its expiry, and the user with identify', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify', 'servers']);
    const res = await getWithBearer(t, '/api/v1/oauth2/@me', tokens.access_token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      application: applicationJson({ id: client.clientId, name: 'Photo Frame', icon_url: null, description: 'An app for tests', bot_public: true, bot_require_code_grant: false, verify_key: expect.stringMatching(/^[0-9a-f]{64}$/) }),
      scopes: ['identify', 'servers'],
      expires: new Date(t.clock.now() + HOUR).toISOString(),
      user: { ...userJson({ id: person.id, username: 'alice', global_name: 'Alice A.', avatar_url: 'https://cdn.example.com/a.png' }), mfa_enabled: false },
    });
  });

  it('SPEC §2.7: without identify, /oauth2/@me has no user', async () => {
    const tokens = await obtainTokens(t, client, person, ['servers']);
    const body = (await getWithBearer(t, '/api/v1/oauth2/@me', tokens.access_token)).json() as Record<string, unknown>;
    expect(body['scopes']).toEqual(['servers']);
    expect(body).not.toHaveProperty('user');
  });

  it('/oauth2/@me without a token answers 401', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/oauth2/@me' })).statusCode).toBe(401);
  });

  it('SPEC §2.6: GET /users/@me/servers with scope servers lists the person’s servers with owner and permissions; /guilds is an alias', async () => {
    const bob = await createPerson(t, { username: 'bob' });
    const own = await createServer(t.services, personActingOf(person.id), { name: 'Alice Home' });
    const theirs = await createServer(t.services, personActingOf(bob.id), { name: 'Bob Place' });
    await addMember(t.services, operatorActing(), theirs.id, person.id);
    await createServer(t.services, personActingOf(bob.id), { name: 'Not Alice' });
    const tokens = await obtainTokens(t, client, person, ['servers']);
    const res = await getWithBearer(t, '/api/v1/users/@me/servers', tokens.access_token);
    expect(res.statusCode).toBe(200);
    const list = res.json() as Array<{ id: string; name: string; icon: string | null; icon_url: string | null; owner: boolean; permissions: string; features: string[] }>;
    expect(list.map((s) => s.name).sort()).toEqual(['Alice Home', 'Bob Place']);
    const mine = list.find((s) => s.id === own.id);
    expect(mine).toMatchObject({ owner: true, icon: null, icon_url: null, features: [] });
    expect(mine?.permissions).toMatch(/^[0-9]+$/);
    expect(list.find((s) => s.id === theirs.id)).toMatchObject({ owner: false });
    const guilds = await getWithBearer(t, '/api/v1/users/@me/guilds', tokens.access_token);
    expect(guilds.json()).toEqual(list);
  });

  it('E5: /users/@me/servers without the servers scope answers 403 50026', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify']);
    const res = await getWithBearer(t, '/api/v1/users/@me/servers', tokens.access_token);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 50026 });
  });

  it('GET /users/@me, answered from the body written for the person (docs/performance.md §Issue #43 §2), follows each token\'s scopes and a changed profile', async () => {
    const bob = await createPerson(t, { username: 'written_bob', name: 'Bob B.', email: 'bob@example.com' });
    const identify = await obtainTokens(t, client, bob, ['identify']);
    const withEmail = await obtainTokens(t, client, bob, ['identify', 'email']);
    const me = async (token: string) => (await getWithBearer(t, '/api/v1/users/@me', token)).json() as Record<string, unknown>;
    for (let i = 0; i < 2; i += 1) {
      expect(await me(identify.access_token)).not.toHaveProperty('email');
      expect(await me(withEmail.access_token)).toMatchObject({ global_name: 'Bob B.', email: 'bob@example.com' });
    }
    await updateProfile(t.services, personActingOf(bob.id), { name: 'Robert', email: 'robert@example.com' });
    expect(await me(identify.access_token)).toMatchObject({ global_name: 'Robert' });
    expect(await me(withEmail.access_token)).toMatchObject({ global_name: 'Robert', email: 'robert@example.com', verified: false });
    const res = await getWithBearer(t, '/api/v1/users/@me', identify.access_token);
    expect(res.headers['content-type']).toBe('application/json');
  });

  it('each token carries the scopes of the request that produced it', async () => {
    const narrow = await obtainTokens(t, client, person, ['email']);
    const wide = await obtainTokens(t, client, person, ['identify', 'email', 'servers']);
    expect(((await getWithBearer(t, '/api/v1/oauth2/@me', narrow.access_token)).json() as { scopes: string[] }).scopes).toEqual(['email']);
    expect(((await getWithBearer(t, '/api/v1/oauth2/@me', wide.access_token)).json() as { scopes: string[] }).scopes).toEqual(['identify', 'email', 'servers']);
  });
});

import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActing } from '../../src/core/acting.js';
import { hashSecret } from '../../src/core/secrets.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addResourceServer } from '../../src/modules/resource-servers/resource-servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given, type TestClient } from '../support/given.js';
import { basicAuth, getWithBearer, postForm } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';

const DEVICE = '/api/oauth2/device/authorize';
const TOKEN = '/api/oauth2/token';
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const API = 'https://api.example/tv/';
const JWT_API = 'https://api.example/jwt/';

interface Started {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Issue #41 §2: the device authorization grant (RFC 8628), driven through HTTP and the /activate pages. */
describe('the device flow (RFC 8628)', () => {
  let t: TestApp;
  let tv: TestClient;
  let other: TestClient;
  let confidential: TestClient;
  let agent: PageAgent;
  let person: Person;

  beforeAll(async () => {
    t = await createTestApp();
    const owner = await given.person(t, { username: 'tvmaker' });
    tv = await given.publicApp(t, { owner, name: 'Living Room TV' });
    other = await given.publicApp(t, { owner, name: 'Other Device' });
    confidential = await given.confidentialApp(t, { owner, name: 'Kiosk' });
    const api = await given.confidentialApp(t, { owner, name: 'TV API' });
    await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: API, scopes: ['watch'], scopeDescriptions: ['Watch your shows'] });
    await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: JWT_API, scopes: ['record'], scopeDescriptions: ['Record your shows'], jwtAccessTokens: true });
    ({ agent, person } = await given.signedIn(t, { username: 'viewer' }));
  });
  afterAll(async () => t.close());

  async function start(client: TestClient = tv, fields: Record<string, string> = { scope: 'openid identify' }): Promise<Started> {
    const res = await postForm(t, DEVICE, { client_id: client.clientId, ...fields });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Started;
  }

  const poll = (deviceCode: string, client: TestClient = tv) => postForm(t, TOKEN, { grant_type: GRANT, device_code: deviceCode, client_id: client.clientId });

  /** The person types the code on /activate and answers the consent screen. */
  async function answer(userCode: string, decision: 'authorize' | 'cancel') {
    return agent.submit(`/activate?user_code=${encodeURIComponent(userCode)}`, '/activate', { user_code: userCode, decision });
  }

  describe('POST /api/oauth2/device/authorize', () => {
    it('answers a device code, an 8-letter user code shown XXXX-XXXX, the /activate URIs, expires_in 600 and interval 5', async () => {
      const started = await start();
      expect(started.device_code).toMatch(/^ghdc_/);
      expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      expect(started.verification_uri).toBe('http://localhost:8080/activate');
      expect(started.verification_uri_complete).toBe(`http://localhost:8080/activate?user_code=${started.user_code}`);
      expect(started.expires_in).toBe(600);
      expect(started.interval).toBe(5);
      // Hashed at rest: neither code is stored as sent.
      const rows = await t.services.db.selectFrom('oauth_device_codes').selectAll().execute();
      const text = JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      expect(text).not.toContain(started.device_code);
      expect(text).not.toContain(started.user_code.replace('-', ''));
      expect(rows.some((r) => r.device_code_hash === hashSecret(started.device_code))).toBe(true);
    });

    it('is also served under /api/v1, POST only, and never cached', async () => {
      const res = await postForm(t, '/api/v1/oauth2/device/authorize', { client_id: tv.clientId, scope: 'identify' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const get = await t.app.inject({ method: 'GET', url: DEVICE });
      expect(get.statusCode).toBe(405);
      expect(get.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('authenticates the client as the token endpoint does: unknown clients and wrong secrets are invalid_client, a confidential app uses its secret', async () => {
      const unknown = await postForm(t, DEVICE, { client_id: '123456789012345678', scope: 'identify' });
      expect(unknown.statusCode).toBe(401);
      expect(unknown.json()).toMatchObject({ error: 'invalid_client' });
      const noSecret = await postForm(t, DEVICE, { client_id: confidential.clientId, scope: 'identify' });
      expect(noSecret.json()).toMatchObject({ error: 'invalid_client' });
      const wrong = await postForm(t, DEVICE, { scope: 'identify' }, { headers: { authorization: basicAuth(confidential.clientId, 'ghcs_wrong') } });
      expect(wrong.statusCode).toBe(401);
      const right = await postForm(t, DEVICE, { scope: 'identify' }, { headers: { authorization: basicAuth(confidential.clientId, confidential.clientSecret as string) } });
      expect(right.statusCode).toBe(200);
    });

    it('refuses a missing or unknown scope and the browser-only scopes with invalid_scope, an unknown resource with invalid_target, a repeated parameter with invalid_request, storing nothing', async () => {
      const before = (await t.services.db.selectFrom('oauth_device_codes').select('device_code_hash').execute()).length;
      const cases: [Record<string, string | string[]>, string][] = [
        [{}, 'invalid_scope'],
        [{ scope: 'identify nonsense' }, 'invalid_scope'],
        [{ scope: 'bot' }, 'invalid_scope'],
        [{ scope: 'webhook.incoming' }, 'invalid_scope'],
        [{ scope: 'identify', resource: 'https://unknown.example/' }, 'invalid_target'],
        [{ scope: ['identify', 'email'] }, 'invalid_request'],
      ];
      for (const [fields, error] of cases) {
        const res = await postForm(t, DEVICE, { client_id: tv.clientId, ...fields });
        expect(res.statusCode, JSON.stringify(fields)).toBe(400);
        expect(res.json(), JSON.stringify(fields)).toMatchObject({ error });
        expect(typeof (res.json() as { error_description: unknown }).error_description).toBe('string');
      }
      const after = (await t.services.db.selectFrom('oauth_device_codes').select('device_code_hash').execute()).length;
      expect(after).toBe(before);
    });
  });

  describe('the metadata', () => {
    it('names the device authorization endpoint and the device_code grant type, in RFC 8414 and OpenID discovery', async () => {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const doc = (await t.app.inject({ method: 'GET', url: path })).json() as Record<string, unknown>;
        expect(doc['device_authorization_endpoint'], path).toBe('http://localhost:8080/api/oauth2/device/authorize');
        expect(doc['grant_types_supported'], path).toContain(GRANT);
      }
    });
  });

  describe('polling and /activate', () => {
    it('authorization_pending, then slow_down when polling faster than the interval (which grows by 5 s each time), then pending again at the new pace', async () => {
      const { device_code } = await start();
      expect((await poll(device_code)).json()).toMatchObject({ error: 'authorization_pending' });
      const fast = await poll(device_code);
      expect(fast.statusCode).toBe(400);
      expect(fast.json()).toMatchObject({ error: 'slow_down' });
      t.clock.advance(5_000);
      // The interval is 10 s now: 5 s later is still too fast, and grows it to 15.
      expect((await poll(device_code)).json()).toMatchObject({ error: 'slow_down' });
      t.clock.advance(15_000);
      expect((await poll(device_code)).json()).toMatchObject({ error: 'authorization_pending' });
    });

    it('a signed-out visitor to /activate signs in first and comes back to the same code', async () => {
      const { user_code } = await start();
      const res = await t.app.inject({ method: 'GET', url: `/activate?user_code=${user_code}` });
      expect(res.statusCode).toBe(303);
      expect(String(res.headers.location)).toBe(`/login?next=${encodeURIComponent(`/activate?user_code=${user_code}`)}`);
    });

    it('the person types the code (any case, with or without dash or spaces), sees the app, its scopes and that a device is asking, approves; the device gets an access token, a refresh token and an ID token, once', async () => {
      const started = await start(tv, { scope: 'openid identify' });
      const form = await agent.get('/activate');
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain('name="user_code"');
      const typed = ` ${started.user_code.replace('-', ' ').toLowerCase()} `;
      const consent = await agent.submit('/activate', '/activate', { user_code: typed });
      expect(consent.statusCode).toBe(200);
      expect(consent.body).toContain('Living Room TV wants to access your');
      expect(consent.body).toContain('A device is asking');
      expect(consent.body).toContain(started.user_code);
      expect(consent.body).toContain('name="decision" value="authorize"');
      const answered = await answer(started.user_code, 'authorize');
      expect(answered.statusCode).toBe(200);
      expect(answered.body).toContain('Living Room TV is connected');

      const res = await poll(started.device_code);
      expect(res.statusCode, res.body).toBe(200);
      const tokens = res.json() as Record<string, unknown>;
      expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'openid identify', expires_in: 3600 });
      expect(tokens['access_token']).toMatch(/^ghat_/);
      expect(tokens['refresh_token']).toMatch(/^ghrt_/);
      expect(typeof tokens['id_token']).toBe('string');
      const me = await getWithBearer(t, '/api/v1/users/@me', tokens['access_token'] as string);
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ id: person.id });
      // The refresh token rotates as any other (the code flow's issuance).
      const refreshed = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: tokens['refresh_token'] as string, client_id: tv.clientId });
      expect(refreshed.statusCode).toBe(200);

      t.clock.advance(5_000);
      const again = await poll(started.device_code);
      expect(again.statusCode).toBe(400);
      expect(again.json()).toMatchObject({ error: 'invalid_grant' });
      // grant.created is audited for the person.
      const audited = await t.services.db.selectFrom('audit_events').select(['action', 'subject_user_id']).where('action', '=', 'grant.created').where('application_id', '=', tv.clientId).execute();
      expect(audited.map((a) => String(a.subject_user_id))).toContain(person.id);
    });

    it('Cancel: the device hears access_denied, gets no token, and device.denied is audited', async () => {
      const started = await start();
      const answered = await answer(started.user_code, 'cancel');
      expect(answered.statusCode).toBe(200);
      expect(answered.body).toContain('was not connected');
      const res = await poll(started.device_code);
      expect(res.json()).toMatchObject({ error: 'access_denied' });
      const audited = await t.services.db.selectFrom('audit_events').select('action').where('action', '=', 'device.denied').where('application_id', '=', tv.clientId).execute();
      expect(audited.length).toBeGreaterThan(0);
      // An answered code cannot be answered again.
      const twice = await agent.get(`/activate?user_code=${started.user_code}`);
      expect(twice.statusCode).toBe(400);
    });

    it('after 10 minutes the device hears expired_token, and the code is refused on /activate with the answer given for an unknown one', async () => {
      const started = await start();
      t.clock.advance(600_000);
      expect((await poll(started.device_code)).json()).toMatchObject({ error: 'expired_token' });
      const expired = await agent.get(`/activate?user_code=${started.user_code}`);
      const unknown = await agent.get('/activate?user_code=BBBB-BBBB');
      expect(expired.statusCode).toBe(400);
      expect(unknown.statusCode).toBe(400);
      const message = (body: string) => /<div class="error" role="alert">([^<]*)<\/div>/.exec(body)?.[1];
      expect(message(expired.body)).toBeDefined();
      expect(message(expired.body)).toBe(message(unknown.body));
    });

    it('a device code polled by another client is invalid_grant and changes nothing for its own client', async () => {
      const started = await start();
      await answer(started.user_code, 'authorize');
      const stolen = await poll(started.device_code, other);
      expect(stolen.statusCode).toBe(400);
      expect(stolen.json()).toMatchObject({ error: 'invalid_grant' });
      const own = await poll(started.device_code);
      expect(own.statusCode).toBe(200);
    });

    it('single use: of two concurrent polls of an approved code exactly one gets the tokens', async () => {
      const started = await start();
      await answer(started.user_code, 'authorize');
      const both = await Promise.all([poll(started.device_code), poll(started.device_code)]);
      expect(both.map((r) => r.statusCode).sort()).toEqual([200, 400]);
      const refused = both.find((r) => r.statusCode === 400)?.json() as { error: string };
      expect(['slow_down', 'invalid_grant']).toContain(refused.error);
      const stored = await t.services.db.selectFrom('oauth_refresh_tokens').select('token_hash').where('application_id', '=', tv.clientId).execute();
      const issued = both.find((r) => r.statusCode === 200)?.json() as { refresh_token: string };
      expect(stored.map((r) => r.token_hash)).toContain(hashSecret(issued.refresh_token));
    });

    it('the API reference documents the device authorization endpoint and the device_code grant type', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
        paths: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, { enum?: string[] }> } }> } } }>;
      };
      const device = doc.paths[DEVICE]?.post?.requestBody?.content?.['application/x-www-form-urlencoded']?.schema;
      expect(Object.keys(device?.properties ?? {})).toEqual(['client_id', 'client_secret', 'scope', 'resource']);
      const token = doc.paths[TOKEN]?.post?.requestBody?.content?.['application/x-www-form-urlencoded']?.schema;
      expect(token?.properties?.['grant_type']?.enum).toContain(GRANT);
      expect(Object.keys(token?.properties ?? {})).toContain('device_code');
    });

    it('access removed in Settings → Authorized apps before the device polled: access_denied, and no token', async () => {
      const started = await start();
      await answer(started.user_code, 'authorize');
      const removed = await agent.submit(`/settings/authorized-apps/${tv.clientId}/deauthorize`, `/settings/authorized-apps/${tv.clientId}/deauthorize`, {});
      expect(removed.statusCode).toBe(303);
      const res = await poll(started.device_code);
      expect(res.json()).toMatchObject({ error: 'access_denied' });
    });

    it('an unknown device code or none is refused; the grant type is listed in the token endpoint\'s refusals', async () => {
      expect((await poll('ghdc_unknown')).json()).toMatchObject({ error: 'invalid_grant' });
      expect((await postForm(t, TOKEN, { grant_type: GRANT, client_id: tv.clientId })).json()).toMatchObject({ error: 'invalid_request' });
      const unsupported = (await postForm(t, TOKEN, { grant_type: 'password', client_id: tv.clientId })).json() as { error_description: string };
      expect(unsupported.error_description).toContain(GRANT);
    });

    it('the consent form needs its CSRF token: without it nothing is answered', async () => {
      const started = await start();
      const res = await agent.postRaw('/activate', { user_code: started.user_code, decision: 'authorize' });
      expect(res.statusCode).toBe(403);
      expect((await poll(started.device_code)).json()).toMatchObject({ error: 'authorization_pending' });
    });

    it('RFC 8707: a device asking for a resource server gets its scopes described by that API, and a token for it without an ID token', async () => {
      const started = await start(tv, { resource: API });
      const consent = await agent.get(`/activate?user_code=${started.user_code}`);
      expect(consent.body).toContain(`<strong class="mono">${API}</strong>, an API of TV API`);
      expect(consent.body).toContain('Watch your shows');
      await answer(started.user_code, 'authorize');
      const tokens = (await poll(started.device_code)).json() as Record<string, unknown>;
      expect(tokens).toMatchObject({ scope: 'watch', token_type: 'Bearer' });
      expect(tokens['id_token']).toBeUndefined();
    });

    it('RFC 9068: a device asking for a resource server set to JWT access tokens gets a 5-minute at+jwt for the person, as the code flow gives', async () => {
      const started = await start(tv, { resource: JWT_API });
      await answer(started.user_code, 'authorize');
      const res = await poll(started.device_code);
      expect(res.statusCode, res.body).toBe(200);
      const tokens = res.json() as { access_token: string; expires_in: number; scope: string; id_token?: string };
      expect(tokens).toMatchObject({ scope: 'record', expires_in: 300 });
      expect(tokens.id_token).toBeUndefined();
      const keys = createLocalJWKSet((await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json());
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, keys, { issuer: 'http://localhost:8080', audience: JWT_API, typ: 'at+jwt', currentDate: new Date(t.clock.now()) });
      expect(protectedHeader.typ).toBe('at+jwt');
      const now = Math.floor(t.clock.now() / 1000);
      expect(payload).toMatchObject({ sub: person.id, client_id: tv.clientId, scope: 'record', iat: now, exp: now + 300 });
      // The JWT names the stored access token row by jti (jwt-access-token.ts), so revocation finds it.
      const rows = await t.services.db.selectFrom('oauth_access_tokens').select('token_hash').where('application_id', '=', tv.clientId).execute();
      expect(rows.map((r) => r.token_hash)).toContain(payload.jti);
    });
  });
});

describe('guessing user codes (RFC 8628 §5.1)', () => {
  let t: TestApp;
  let tv: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    tv = await given.publicApp(t, { name: 'Guessed TV' });
  });
  afterAll(async () => t.close());

  it('after 10 codes that do not work, a person is refused with 429 even for a valid code, until the window passes', async () => {
    const { agent } = await given.signedIn(t);
    const started = (await postForm(t, DEVICE, { client_id: tv.clientId, scope: 'identify' })).json() as Started;
    for (let i = 0; i < 10; i++) expect((await agent.get('/activate?user_code=BBBB-BBBB')).statusCode).toBe(400);
    const refused = await agent.get(`/activate?user_code=${started.user_code}`);
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('Too many codes');
    // The same address for another person: the address's count holds too.
    const { agent: neighbour } = await given.signedIn(t);
    expect((await neighbour.get(`/activate?user_code=${started.user_code}`)).statusCode).toBe(429);
    t.clock.advance(10 * 60_000);
    // The first code expired with the window; a new one is shown its consent screen.
    const fresh = (await postForm(t, DEVICE, { client_id: tv.clientId, scope: 'identify' })).json() as Started;
    expect((await agent.get(`/activate?user_code=${fresh.user_code}`)).statusCode).toBe(200);
  });
});

describe('a registered (RFC 7591) app on the device consent screen', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_CLIENT_REGISTRATION: 'open' } });
  });
  afterAll(async () => t.close());

  it('is marked "Registered automatically, not reviewed" instead of its maker; a reviewed app is not', async () => {
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/oauth2/register',
      payload: JSON.stringify({ client_name: 'Agent Device', token_endpoint_auth_method: 'none', grant_types: [GRANT] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const clientId = (registered.json() as { client_id: string }).client_id;
    const reviewed = await given.publicApp(t, { name: 'Reviewed TV' });
    const { agent } = await given.signedIn(t);
    const consentFor = async (client: string) => {
      const started = (await postForm(t, DEVICE, { client_id: client, scope: 'identify' })).json() as Started;
      const page = await agent.get(`/activate?user_code=${started.user_code}`);
      expect(page.statusCode, page.body).toBe(200);
      return page.body;
    };
    const agentPage = await consentFor(clientId);
    expect(agentPage).toContain('Agent Device wants to access your');
    expect(agentPage).toContain('Registered automatically, not reviewed');
    expect(await consentFor(reviewed.clientId)).not.toContain('Registered automatically, not reviewed');
  });
});

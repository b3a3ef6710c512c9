import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActing } from '../../src/core/acting.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { authorizePath, requestFor, signedIn } from './authorize.fixtures.js';
import { findApplication } from '../../src/modules/applications/applications.repository.js';
import type { Application } from '../../src/modules/applications/applications.js';

const REGISTER = '/api/oauth2/register';
type Json = Record<string, unknown>;

function register(t: TestApp, body: unknown, headers: Record<string, string> = {}, remoteAddress = '203.0.113.7') {
  return t.app.inject({ method: 'POST', url: REGISTER, payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers }, remoteAddress });
}

const countApps = async (t: TestApp) => Number((await t.services.db.selectFrom('applications').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

const confidentialMetadata = { client_name: 'Agent CLI', redirect_uris: ['https://agent.example/cb'], grant_types: ['authorization_code', 'refresh_token'], scope: 'identify email', client_uri: 'https://agent.example/', future_field: 'ignored' };

describe('dynamic client registration (RFC 7591, RFC 7592; issue #41 §3)', () => {
  describe('GATEHOUSE_CLIENT_REGISTRATION=off (the default)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(async () => t.close());

    it('has no registration endpoint: 404, and the metadata names none', async () => {
      const res = await register(t, confidentialMetadata);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: 'invalid_request' });
      expect(await countApps(t)).toBe(0);
      const metadata = (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json() as Json;
      expect(metadata.registration_endpoint).toBeUndefined();
    });
  });

  describe('GATEHOUSE_CLIENT_REGISTRATION=open', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: { GATEHOUSE_CLIENT_REGISTRATION: 'open' } });
    });
    afterAll(async () => t.close());

    it('the OAuth and OpenID metadata name the registration endpoint', async () => {
      for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const metadata = (await t.app.inject({ method: 'GET', url })).json() as Json;
        expect(metadata.registration_endpoint).toBe('http://localhost:8080/api/oauth2/register');
      }
    });

    it('a confidential client gets 201 with its id, secret, registration access token and URI, and the metadata as registered (unknown fields ignored)', async () => {
      const res = await register(t, confidentialMetadata);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json() as Json;
      expect(body).toMatchObject({
        client_name: 'Agent CLI',
        redirect_uris: ['https://agent.example/cb'],
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: 'identify email',
        client_uri: 'https://agent.example/',
        client_secret_expires_at: 0,
        registration_client_uri: `http://localhost:8080/api/oauth2/register/${body.client_id as string}`,
      });
      expect(body.future_field).toBeUndefined();
      expect(body.client_secret).toMatch(/^ghcs_/);
      expect(body.registration_access_token).toMatch(/^ghra_/);
      expect(body.client_id_issued_at).toBe(Math.floor(t.clock.now() / 1000));
      const app = (await findApplication(t.services.db, body.client_id as string)) as Application;
      expect(app.confidential).toBe(true);
      // Hashed at rest: neither secret is stored as given.
      const row = await t.services.db.selectFrom('registered_clients').selectAll().where('application_id', '=', app.id).executeTakeFirstOrThrow();
      expect(row.registration_token_hash).not.toContain(body.registration_access_token as string);
      expect(app.clientSecretHash).not.toBe(body.client_secret);
      const audit = await t.services.db.selectFrom('audit_events').selectAll().where('application_id', '=', app.id).where('action', '=', 'app.registered').execute();
      expect(audit).toHaveLength(1);
      expect(audit[0]?.address).toBe('203.0.113.7');
    });

    it('the client secret works at the token endpoint (client credentials)', async () => {
      const body = (await register(t, { ...confidentialMetadata, grant_types: ['authorization_code', 'client_credentials'] })).json() as Json;
      const basic = Buffer.from(`${body.client_id as string}:${body.client_secret as string}`).toString('base64');
      const res = await t.app.inject({ method: 'POST', url: '/api/oauth2/token', payload: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` } });
      // The grant itself decides the scopes; what matters here is that the client authenticates.
      expect(res.statusCode === 200 || (res.json() as Json).error !== 'invalid_client', res.body).toBe(true);
    });

    it('token_endpoint_auth_method none makes a public client with a loopback or private-use redirect URI, without a secret', async () => {
      const res = await register(t, { client_name: 'Local agent', token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/callback', 'com.example.agent:/cb'] });
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json() as Json;
      expect(body.client_secret).toBeUndefined();
      expect(body.client_secret_expires_at).toBeUndefined();
      expect((await findApplication(t.services.db, body.client_id as string))?.confidential).toBe(false);
    });

    it.each([
      ['an http redirect URI that is not loopback', { redirect_uris: ['http://agent.example/cb'] }, 'invalid_redirect_uri'],
      ['no redirect URIs with the code grant', { redirect_uris: [] }, 'invalid_redirect_uri'],
      ['redirect_uris that is not a list of strings', { redirect_uris: 'https://agent.example/cb' }, 'invalid_redirect_uri'],
      ['a private-use scheme for a confidential client', { redirect_uris: ['com.example.agent:/cb'] }, 'invalid_redirect_uri'],
      ['a fragment in a redirect URI', { redirect_uris: ['https://agent.example/cb#x'] }, 'invalid_redirect_uri'],
      ['an unsupported authentication method', { token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
      ['an unknown grant type', { grant_types: ['password'] }, 'invalid_client_metadata'],
      ['client credentials for a public client', { token_endpoint_auth_method: 'none', grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      ['a response type other than code', { response_types: ['token'] }, 'invalid_client_metadata'],
      ['response type code without the code grant', { grant_types: ['client_credentials'], response_types: ['code'] }, 'invalid_client_metadata'],
      ['a name that passes for the platform', { client_name: 'Gatehouse' }, 'invalid_client_metadata'],
      ['a one-character name', { client_name: 'x' }, 'invalid_client_metadata'],
      ['an http logo', { logo_uri: 'http://agent.example/logo.png' }, 'invalid_client_metadata'],
      ['a client_uri that is not https', { client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata'],
      ['a scope with a quote', { scope: 'identify "email"' }, 'invalid_client_metadata'],
    ])('refuses %s with 400 %s and a description, registering nothing', async (_what, change, error) => {
      const before = await countApps(t);
      const res = await register(t, { ...confidentialMetadata, ...change }, {}, '198.51.100.1');
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json() as Json;
      expect(body.error).toBe(error);
      expect(String(body.error_description).length).toBeGreaterThan(10);
      expect(await countApps(t)).toBe(before);
    });

    it('refuses a body that is not a JSON object, or not JSON at all, with 400', async () => {
      expect((await register(t, ['a'])).json()).toMatchObject({ error: 'invalid_client_metadata' });
      const form = await t.app.inject({ method: 'POST', url: REGISTER, payload: 'client_name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.statusCode).toBe(400);
      expect(form.json()).toMatchObject({ error: 'invalid_client_metadata' });
      const broken = await t.app.inject({ method: 'POST', url: REGISTER, payload: '{"client_name":', headers: { 'content-type': 'application/json' } });
      expect(broken.statusCode).toBe(400);
    });

    describe('RFC 7592: the registration access token reads, updates and deletes', () => {
      let client: Json;
      const uri = () => `/api/oauth2/register/${client.client_id as string}`;
      const bearer = (token = client.registration_access_token as string) => ({ authorization: `Bearer ${token}` });
      beforeAll(async () => {
        client = (await register(t, confidentialMetadata)).json() as Json;
      });

      it('GET answers the registration without the secret', async () => {
        const res = await t.app.inject({ method: 'GET', url: uri(), headers: bearer() });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as Json;
        expect(body).toMatchObject({ client_id: client.client_id, client_name: 'Agent CLI', registration_access_token: client.registration_access_token, registration_client_uri: client.registration_client_uri });
        expect(body.client_secret).toBeUndefined();
      });

      it('no token, a wrong token, another client’s token, or a portal app are all 401 invalid_token', async () => {
        const other = (await register(t, confidentialMetadata)).json() as Json;
        for (const headers of [{}, bearer('ghra_wrong'), bearer(other.registration_access_token as string), { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }]) {
          const res = await t.app.inject({ method: 'GET', url: uri(), headers });
          expect(res.statusCode).toBe(401);
          expect(res.json()).toMatchObject({ error: 'invalid_token' });
          expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
        }
        expect((await t.app.inject({ method: 'GET', url: '/api/oauth2/register/not-an-id', headers: bearer() })).statusCode).toBe(401);
      });

      it('PUT replaces the metadata by the registration rules; the body must name this client, and the type cannot change', async () => {
        const put = (body: unknown) => t.app.inject({ method: 'PUT', url: uri(), payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...bearer() } });
        const renamed = await put({ ...confidentialMetadata, client_id: client.client_id, client_name: 'Agent CLI 2', redirect_uris: ['https://agent.example/cb2'] });
        expect(renamed.statusCode, renamed.body).toBe(200);
        expect(renamed.json()).toMatchObject({ client_name: 'Agent CLI 2', redirect_uris: ['https://agent.example/cb2'] });
        const app = (await findApplication(t.services.db, client.client_id as string)) as Application;
        expect(app.name).toBe('Agent CLI 2');
        expect(app.redirectUris).toEqual(['https://agent.example/cb2']);

        expect((await put({ ...confidentialMetadata, client_id: '123' })).json()).toMatchObject({ error: 'invalid_request' });
        expect((await put({ ...confidentialMetadata, client_id: client.client_id, client_secret: 'ghcs_wrong' })).json()).toMatchObject({ error: 'invalid_request' });
        expect((await put({ ...confidentialMetadata, client_id: client.client_id, client_secret: client.client_secret })).statusCode).toBe(200);
        const typeChange = await put({ ...confidentialMetadata, client_id: client.client_id, token_endpoint_auth_method: 'none' });
        expect(typeChange.statusCode).toBe(400);
        expect(typeChange.json()).toMatchObject({ error: 'invalid_client_metadata' });
        const bad = await put({ ...confidentialMetadata, client_id: client.client_id, redirect_uris: ['http://evil.example/'] });
        expect(bad.json()).toMatchObject({ error: 'invalid_redirect_uri' });
        expect((await findApplication(t.services.db, client.client_id as string))?.redirectUris).toEqual(['https://agent.example/cb']);
      });

      it('a registered app cannot have a bot, not even by the operator', async () => {
        await expect(enableBot(t.services, cliActing(t.clock), client.client_id as string)).rejects.toMatchObject({ status: 400, code: 50035 });
      });

      it('gatehouse apps list marks registered apps', async () => {
        const listed = (await runCommand(t, 'apps list', [])) as { apps: Json[] };
        expect(listed.apps.find((a) => a.id === client.client_id)).toMatchObject({ registered: true });
      });

      it('the consent screen says the app was registered automatically, not reviewed', async () => {
        const app = (await findApplication(t.services.db, client.client_id as string)) as Application;
        const { agent } = await signedIn(t);
        const page = await agent.get(authorizePath(requestFor(app, { scope: 'identify' })));
        expect(page.statusCode, page.body).toBe(200);
        expect(page.body).toContain('Registered automatically, not reviewed');
      });

      it('DELETE removes the client: 204, then its token is refused', async () => {
        const res = await t.app.inject({ method: 'DELETE', url: uri(), headers: bearer() });
        expect(res.statusCode, res.body).toBe(204);
        expect(await findApplication(t.services.db, client.client_id as string)).toBeUndefined();
        expect((await t.app.inject({ method: 'GET', url: uri(), headers: bearer() })).statusCode).toBe(401);
        const audit = await t.services.db.selectFrom('audit_events').selectAll().where('application_id', '=', client.client_id as string).where('action', '=', 'app.deleted').execute();
        expect(audit).toHaveLength(1);
      });
    });
  });

  it('one address registers at most 10 clients per hour (429 with Retry-After); another address still can', async () => {
    const t = await createTestApp({ env: { GATEHOUSE_CLIENT_REGISTRATION: 'open' } });
    try {
      for (let i = 0; i < 10; i += 1) expect((await register(t, confidentialMetadata, {}, '192.0.2.50')).statusCode).toBe(201);
      const refused = await register(t, confidentialMetadata, {}, '192.0.2.50');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error: 'temporarily_unavailable' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(await countApps(t)).toBe(10);
      expect((await register(t, confidentialMetadata, {}, '192.0.2.51')).statusCode).toBe(201);
      t.clock.advance(60 * 60 * 1000);
      expect((await register(t, confidentialMetadata, {}, '192.0.2.50')).statusCode).toBe(201);
    } finally {
      await t.close();
    }
  });

  describe('GATEHOUSE_CLIENT_REGISTRATION=token', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: { GATEHOUSE_CLIENT_REGISTRATION: 'token' } });
    });
    afterAll(async () => t.close());

    it('needs an initial access token from gatehouse apps registration-token; unknown and expired ones are 401 invalid_token', async () => {
      const without = await register(t, confidentialMetadata);
      expect(without.statusCode).toBe(401);
      expect(without.json()).toMatchObject({ error: 'invalid_token' });
      expect((await register(t, confidentialMetadata, { authorization: 'Bearer ghia_unknown' })).statusCode).toBe(401);
      expect(await countApps(t)).toBe(0);

      const minted = await runCommand(t, 'apps registration-token', ['--expires-in', '1h']);
      expect(minted).toMatchObject({ registration_endpoint: 'http://localhost:8080/api/oauth2/register', client_registration: 'token' });
      expect(minted.registration_token).toMatch(/^ghia_/);
      const stored = await t.services.db.selectFrom('registration_tokens').select('token_hash').execute();
      expect(JSON.stringify(stored)).not.toContain(minted.registration_token as string);
      const headers = { authorization: `Bearer ${minted.registration_token as string}` };
      expect((await register(t, confidentialMetadata, headers)).statusCode).toBe(201);
      expect((await register(t, confidentialMetadata, headers)).statusCode).toBe(201);
      const audit = await t.services.db.selectFrom('audit_events').selectAll().where('action', '=', 'registration_token.created').execute();
      expect(audit).toHaveLength(1);

      t.clock.advance(60 * 60 * 1000);
      expect((await register(t, confidentialMetadata, headers)).statusCode).toBe(401);
    });

    it('refuses an --expires-in it cannot read', async () => {
      await expect(runCommand(t, 'apps registration-token', ['--expires-in', 'soon'])).rejects.toMatchObject({ status: 400 });
      expect((await runCommand(t, 'apps registration-token', ['--expires-in', 'never'])).expires_at).toBeNull();
    });
  });
});

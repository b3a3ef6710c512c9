import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActing } from '../../src/core/acting.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addResourceServer, removeResourceServer, type ResourceServer } from '../../src/modules/resource-servers/resource-servers.service.js';
import { resolveCommand } from '../../src/cli/command.js';
import { commands } from '../../src/cli/commands/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { given, type TestClient } from '../support/given.js';
import { basicAuth, getWithBearer, obtainTokens, postForm } from '../support/oauth-factory.js';
import { answerConsent, authorizePath, freshPkce, location, requestFor } from './authorize.fixtures.js';
import type { PageAgent } from '../support/page-agent.js';

const TOKEN = '/api/oauth2/token';
const INTROSPECT = '/api/oauth2/token/introspect';
const API = 'https://api.example/things/';

/** Issue #41 §1–§2: resource servers, RFC 8707, RFC 7662, RFC 9728 and client credentials. */
describe('resource servers and the tokens for them (issue #41)', () => {
  let t: TestApp;
  let owner: Person;
  /** The app serving https://api.example/things/ (a resource server). */
  let api: TestClient;
  /** Another confidential app serving an API of its own. */
  let other: TestClient;
  /** A public client asking a person for access to the API. */
  let reader: TestClient;
  let resource: ResourceServer;
  let agent: PageAgent;
  let person: Person;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await given.person(t, { username: 'apiowner' });
    api = await given.confidentialApp(t, { owner, name: 'Things API' });
    other = await given.confidentialApp(t, { owner, name: 'Other API' });
    reader = await given.publicApp(t, { name: 'Things Reader', redirectUris: ['https://reader.example/cb'] });
    resource = await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: API, scopes: ['read:things', 'write:things'], scopeDescriptions: ['Read your things', 'Change your things'] });
    await addResourceServer(t.services, cliActing(t.clock), other.clientId, { identifier: 'https://other.example/', scopes: ['other'], scopeDescriptions: [] });
    ({ agent, person } = await given.signedIn(t));
  });
  afterAll(async () => t.close());

  const introspect = (client: TestClient, token: string) => postForm(t, INTROSPECT, { token }, { headers: { authorization: basicAuth(client.clientId, client.clientSecret as string) } });

  /** The code flow with `resource`, consented in the page agent, exchanged by the reader. */
  async function tokenForResource(extra: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const pkce = freshPkce();
    const res = await answerConsent(agent, authorizePath(requestFor(reader.app, { scope: 'read:things', resource: API, code_challenge: pkce.challenge, ...extra })), 'authorize');
    const code = location(res).searchParams.get('code') as string;
    const exchanged = await postForm(t, TOKEN, { grant_type: 'authorization_code', code, redirect_uri: reader.redirectUri, client_id: reader.clientId, code_verifier: pkce.verifier, resource: API });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    return exchanged.json() as Record<string, unknown>;
  }

  describe('declaring a resource server', () => {
    it('an identifier is https, or http on a loopback address only; a taken identifier is refused', async () => {
      const add = (identifier: string) => addResourceServer(t.services, cliActing(t.clock), other.clientId, { identifier, scopes: ['x'], scopeDescriptions: [] });
      await expect(add('http://api.example/')).rejects.toMatchObject({ status: 400, code: 50035 });
      await expect(add('https://api.example/things/#frag')).rejects.toMatchObject({ status: 400, code: 50035 });
      await expect(add(API)).rejects.toMatchObject({ status: 400, code: 50035 });
      const loopback = await add('http://127.0.0.1:4000/mcp');
      expect(loopback.identifier).toBe('http://127.0.0.1:4000/mcp');
      await removeResourceServer(t.services, cliActing(t.clock), other.clientId, loopback.identifier);
    });

    it("a scope is an RFC 6749 scope token, declared once, and not one of Gatehouse's own", async () => {
      const add = (scopes: string[]) => addResourceServer(t.services, cliActing(t.clock), other.clientId, { identifier: 'https://scopes.example/', scopes, scopeDescriptions: [] });
      await expect(add(['has space'])).rejects.toMatchObject({ code: 50035 });
      await expect(add(['a', 'a'])).rejects.toMatchObject({ code: 50035 });
      await expect(add([])).rejects.toMatchObject({ code: 50035 });
      // Gatehouse's own scope names (and Discord's aliases) are not an API's.
      for (const reserved of ['openid', 'identify', 'bot', 'webhook.incoming', 'guilds']) await expect(add([reserved])).rejects.toMatchObject({ code: 50035 });
    });
  });

  describe('gatehouse apps resource add|list|remove', () => {
    it('the three-word commands resolve, print snake_case records, and refuse a bad identifier with 50035', async () => {
      const words = ['apps', 'resource', 'add', '--app', other.clientId, '--identifier', 'https://cli.example/', '--scope', 'a', '--scope-description', 'Do A', '--scope', 'b'];
      const { command, args } = resolveCommand(commands, words);
      expect(command.name).toBe('apps resource add');
      const added = await runCommand(t, command.name, args);
      expect(added).toMatchObject({ application_id: other.clientId, identifier: 'https://cli.example/', scopes: [{ name: 'a', description: 'Do A' }, { name: 'b', description: 'b' }] });
      const listed = await runCommand(t, 'apps resource list', ['--app', other.clientId]);
      expect((listed['resource_servers'] as { identifier: string }[]).map((r) => r.identifier)).toContain('https://cli.example/');
      await expect(runCommand(t, 'apps resource add', ['--app', other.clientId, '--identifier', 'ftp://cli.example/', '--scope', 'a'])).rejects.toMatchObject({ code: 50035 });
      const removed = await runCommand(t, 'apps resource remove', ['--app', other.clientId, '--identifier', 'https://cli.example']);
      expect(removed['removed']).toMatchObject({ identifier: 'https://cli.example/' });
      // Two-word commands still resolve as before.
      expect(resolveCommand(commands, ['apps', 'create', '--owner', 'x']).command.name).toBe('apps create');
    });
  });

  describe('the portal\'s Resource servers section', () => {
    it('the owner adds a resource server with its scopes and their words, sees it on the app page, and removes it', async () => {
      const { agent: dev, person: developer } = await given.signedIn(t);
      const app = await given.confidentialApp(t, { owner: developer, name: 'Portal API' });
      const page = `/developers/applications/${app.clientId}`;
      const added = await dev.submitAndFollow(page, `${page}/resource-servers`, { identifier: 'https://portal.example/api', scopes: 'read:notes Read your notes\nwrite:notes' });
      expect(added.body).toContain('<strong class="mono">https://portal.example/api</strong>');
      expect(added.body).toContain('<code>read:notes</code>: Read your notes');
      expect(added.body).toContain('<code>write:notes</code>: write:notes');
      expect(added.body).toContain('<span class="pill">opaque access tokens</span>');
      const jwt = await dev.submitAndFollow(page, `${page}/resource-servers`, { identifier: 'https://portal.example/jwt', scopes: 'j', jwt: 'on' });
      expect(jwt.body).toContain('<strong class="mono">https://portal.example/jwt</strong> <span class="pill">JWT access tokens</span>');
      const bad = await dev.submit(page, `${page}/resource-servers`, { identifier: 'http://portal.example/', scopes: 'x' });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('Resource server not added');
      const [server, jwtServer] = await t.services.db.selectFrom('resource_servers').select('id').where('application_id', '=', app.clientId).orderBy('id').execute();
      await dev.submitAndFollow(page, `${page}/resource-servers/${String(jwtServer?.id)}/remove`, {});
      // Someone else's app: 404, and nothing is removed.
      const stranger = (await given.signedIn(t)).agent;
      const foreign = await stranger.submit('/developers/applications', `${page}/resource-servers/${String(server?.id)}/remove`, {});
      expect(foreign.statusCode).toBe(404);
      const removed = await dev.submitAndFollow(page, `${page}/resource-servers/${String(server?.id)}/remove`, {});
      expect(removed.body).toContain('No resource servers yet.');
    });
  });

  describe('RFC 8707 at the authorization endpoint', () => {
    it('the consent screen names the resource, the app serving it, and its scopes in its own words', async () => {
      const res = await agent.get(authorizePath(requestFor(reader.app, { scope: 'read:things write:things', resource: API })));
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(`<strong class="mono">${API}</strong>, an API of Things API`);
      expect(res.body).toContain('Read your things');
      expect(res.body).toContain('Change your things');
    });

    it('an unknown resource is invalid_target on the redirect, and nothing is stored', async () => {
      const before = await t.services.db.selectFrom('oauth_grants').select('id').execute();
      const res = await agent.get(authorizePath(requestFor(reader.app, { scope: 'read:things', resource: 'https://unknown.example/' })));
      const to = location(res);
      expect(to.origin + to.pathname).toBe('https://reader.example/cb');
      expect(to.searchParams.get('error')).toBe('invalid_target');
      expect(to.searchParams.get('state')).toBe('xyz-state');
      expect(await t.services.db.selectFrom('oauth_grants').select('id').execute()).toHaveLength(before.length);
    });

    it('a repeated resource is invalid_target: a token here is for one resource', async () => {
      const res = await agent.get(authorizePath(requestFor(reader.app, { scope: 'read:things', resource: [API, 'https://other.example/'] })));
      expect(location(res).searchParams.get('error')).toBe('invalid_target');
    });

    it("a scope the resource does not define is invalid_scope (Gatehouse's own scopes included)", async () => {
      const res = await agent.get(authorizePath(requestFor(reader.app, { scope: 'read:things identify', resource: API })));
      expect(location(res).searchParams.get('error')).toBe('invalid_scope');
    });
  });

  describe('RFC 8707 at the token endpoint, and the token it gives', () => {
    it("the token carries the resource's scopes, has no ID token, and Gatehouse's own API refuses it with 401 and resource_metadata", async () => {
      const tokens = await tokenForResource();
      expect(tokens['scope']).toBe('read:things');
      expect(tokens['id_token']).toBeUndefined();
      const me = await getWithBearer(t, '/api/v1/users/@me', tokens['access_token'] as string);
      expect(me.statusCode).toBe(401);
      expect(me.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(me.headers['www-authenticate']).toContain('resource_metadata="http://localhost:8080/.well-known/oauth-protected-resource"');
    });

    it('the refreshed token keeps its audience; a refresh naming another resource is invalid_target', async () => {
      const tokens = await tokenForResource();
      const wrong = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: tokens['refresh_token'] as string, client_id: reader.clientId, resource: 'https://other.example/' });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json()).toMatchObject({ error: 'invalid_target' });
      const refreshed = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: tokens['refresh_token'] as string, client_id: reader.clientId });
      expect(refreshed.statusCode).toBe(200);
      const described = (await introspect(api, refreshed.json<{ access_token: string }>().access_token)).json();
      expect(described).toMatchObject({ active: true, aud: API, scope: 'read:things' });
    });

    it('a code exchanged with a resource other than the authorized one is invalid_target (400) and the code still works', async () => {
      const pkce = freshPkce();
      const res = await answerConsent(agent, authorizePath(requestFor(reader.app, { scope: 'read:things', resource: API, code_challenge: pkce.challenge })), 'authorize');
      const code = location(res).searchParams.get('code') as string;
      const fields = { grant_type: 'authorization_code', code, redirect_uri: reader.redirectUri, client_id: reader.clientId, code_verifier: pkce.verifier };
      for (const bad of ['https://other.example/', 'https://unknown.example/', 'not a uri', 'http://localhost:8080']) {
        const refused = await postForm(t, TOKEN, { ...fields, resource: bad });
        expect(refused.statusCode, bad).toBe(400);
        expect(refused.json(), bad).toMatchObject({ error: 'invalid_target' });
      }
      const repeated = await postForm(t, TOKEN, { ...fields, resource: [API, API] });
      expect(repeated.statusCode).toBe(400);
      expect(repeated.json()).toMatchObject({ error: 'invalid_request' });
      expect((await postForm(t, TOKEN, fields)).statusCode).toBe(200);
    });
  });

  describe('RFC 7662 introspection', () => {
    it('the resource server learns about a token for its identifier: active, scope, client_id, username, sub, aud, exp, iat, token_type', async () => {
      const tokens = await tokenForResource();
      const res = await introspect(api, tokens['access_token'] as string);
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const now = Math.floor(t.clock.now() / 1000);
      expect(res.json()).toEqual({ active: true, scope: 'read:things', client_id: reader.clientId, username: person.username, sub: person.id, aud: API, exp: now + 3600, iat: now, token_type: 'Bearer' });
    });

    it('a foreign resource server, or the client the token was issued to, learns only {"active": false}', async () => {
      const tokens = await tokenForResource();
      expect((await introspect(other, tokens['access_token'] as string)).json()).toEqual({ active: false });
      const issuer = await given.confidentialApp(t);
      expect((await introspect(issuer, tokens['access_token'] as string)).json()).toEqual({ active: false });
    });

    it("a token for Gatehouse's own API is described to the client it was issued to, to nobody else", async () => {
      const client = await given.confidentialApp(t);
      const someone = await given.person(t);
      const tokens = await obtainTokens(t, client, someone, ['identify']);
      expect((await introspect(client, tokens.access_token)).json()).toMatchObject({ active: true, aud: 'http://localhost:8080', sub: someone.id, username: someone.username, client_id: client.clientId });
      expect((await introspect(api, tokens.access_token)).json()).toEqual({ active: false });
    });

    it('unknown, revoked and expired tokens and refresh tokens are inactive; a public client is invalid_client; a repeated token is invalid_request', async () => {
      const tokens = await tokenForResource();
      expect((await introspect(api, 'ghat_unknown')).json()).toEqual({ active: false });
      expect((await introspect(api, tokens['refresh_token'] as string)).json()).toEqual({ active: false });
      const pub = await postForm(t, INTROSPECT, { token: tokens['access_token'] as string, client_id: reader.clientId });
      expect(pub.statusCode).toBe(401);
      expect(pub.json()).toMatchObject({ error: 'invalid_client' });
      const repeated = await postForm(t, INTROSPECT, { token: [tokens['access_token'] as string, 'x'] }, { headers: { authorization: basicAuth(api.clientId, api.clientSecret as string) } });
      expect(repeated.statusCode).toBe(400);
      expect(repeated.json()).toMatchObject({ error: 'invalid_request' });
      t.clock.advance(3600 * 1000);
      expect((await introspect(api, tokens['access_token'] as string)).json()).toEqual({ active: false });
    });

    it('removing the resource server ends its tokens at once', async () => {
      const gone = await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: 'https://gone.example/', scopes: ['g'], scopeDescriptions: [] });
      const issued = (await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: gone.identifier }, { headers: { authorization: basicAuth(api.clientId, api.clientSecret as string) } })).json<{ access_token: string }>();
      expect((await introspect(api, issued.access_token)).json()).toMatchObject({ active: true });
      await removeResourceServer(t.services, cliActing(t.clock), api.clientId, gone.id);
      expect((await introspect(api, issued.access_token)).json()).toEqual({ active: false });
    });
  });

  describe('client credentials (RFC 6749 §4.4)', () => {
    const asApi = () => ({ headers: { authorization: basicAuth(api.clientId, api.clientSecret as string) } });

    it("a confidential app gets its own token for its resource server: the resource's scopes by default, no refresh token; introspection names the client as subject", async () => {
      const res = await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: API }, asApi());
      expect(res.statusCode).toBe(200);
      const body = res.json() as Record<string, unknown>;
      expect(body).toEqual({ access_token: expect.stringMatching(/^ghat_/), token_type: 'Bearer', expires_in: 3600, scope: 'read:things write:things' });
      const described = (await introspect(api, body['access_token'] as string)).json() as Record<string, unknown>;
      expect(described).toMatchObject({ active: true, sub: api.clientId, client_id: api.clientId, aud: resource.identifier });
      expect(described['username']).toBeUndefined();
      const narrowed = await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: API, scope: 'read:things' }, asApi());
      expect(narrowed.json()).toMatchObject({ scope: 'read:things' });
    });

    it("the app's own tokens are not listed as its owner's authorized apps", async () => {
      await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: API }, asApi());
      const grants = await t.services.db.selectFrom('oauth_grants').select('id').where('user_id', '=', owner.id).where('app_only', '=', 1).where('revoked_at', 'is', null).execute();
      expect(grants).toHaveLength(1);
      const page = await (await given.signedIn(t)).agent.get('/settings/authorized-apps');
      expect(page.body).not.toContain('Things API');
    });

    it('a public client is unauthorized_client; no resource, another app’s resource or an unknown one is invalid_target; a foreign scope is invalid_scope', async () => {
      const pub = await postForm(t, TOKEN, { grant_type: 'client_credentials', client_id: reader.clientId, resource: API });
      expect(pub.statusCode).toBe(400);
      expect(pub.json()).toMatchObject({ error: 'unauthorized_client' });
      for (const fields of [{}, { resource: 'https://other.example/' }, { resource: 'https://unknown.example/' }] as Record<string, string>[]) {
        const res = await postForm(t, TOKEN, { grant_type: 'client_credentials', ...fields }, asApi());
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_target' });
      }
      const scope = await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: API, scope: 'identify' }, asApi());
      expect(scope.json()).toMatchObject({ error: 'invalid_scope' });
      const wrongSecret = await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: API }, { headers: { authorization: basicAuth(api.clientId, 'wrong') } });
      expect(wrongSecret.statusCode).toBe(401);
    });
  });

  describe('RFC 9068 JWT access tokens, for a resource server that chose them', () => {
    const JWT_API = 'https://jwt.example/';
    const asApi = () => ({ headers: { authorization: basicAuth(api.clientId, api.clientSecret as string) } });

    async function verified(token: string) {
      const keys = createLocalJWKSet((await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json());
      return jwtVerify(token, keys, { issuer: 'http://localhost:8080', audience: JWT_API, typ: 'at+jwt', currentDate: new Date(t.clock.now()) });
    }

    beforeAll(async () => {
      await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: JWT_API, scopes: ['jwt:read'], scopeDescriptions: ['Read by JWT'], jwtAccessTokens: true });
    });

    it('client credentials give a 5-minute at+jwt signed with the JWKS keys: iss, sub, aud, client_id, scope, iat, exp, jti; introspection and revocation know it', async () => {
      const res = await postForm(t, TOKEN, { grant_type: 'client_credentials', resource: JWT_API }, asApi());
      expect(res.statusCode).toBe(200);
      const body = res.json() as { access_token: string; expires_in: number };
      expect(body.expires_in).toBe(300);
      const { payload, protectedHeader } = await verified(body.access_token);
      expect(protectedHeader.typ).toBe('at+jwt');
      const now = Math.floor(t.clock.now() / 1000);
      expect(payload).toMatchObject({ sub: api.clientId, client_id: api.clientId, scope: 'jwt:read', iat: now, exp: now + 300 });
      expect(typeof payload.jti).toBe('string');
      expect((await introspect(api, body.access_token)).json()).toMatchObject({ active: true, aud: JWT_API, exp: now + 300 });
      expect((await introspect(other, body.access_token)).json()).toEqual({ active: false });
      const revoked = await postForm(t, '/api/oauth2/token/revoke', { token: body.access_token }, asApi());
      expect(revoked.statusCode).toBe(200);
      expect((await introspect(api, body.access_token)).json()).toEqual({ active: false });
    });

    it('the code flow and every refresh give a JWT for the person; a tampered JWT is no token', async () => {
      const pkce = freshPkce();
      const consented = await answerConsent(agent, authorizePath(requestFor(reader.app, { scope: 'jwt:read', resource: JWT_API, code_challenge: pkce.challenge })), 'authorize');
      const code = location(consented).searchParams.get('code') as string;
      const exchanged = (await postForm(t, TOKEN, { grant_type: 'authorization_code', code, redirect_uri: reader.redirectUri, client_id: reader.clientId, code_verifier: pkce.verifier })).json() as Record<string, string | number>;
      expect(exchanged['expires_in']).toBe(300);
      expect((await verified(exchanged['access_token'] as string)).payload).toMatchObject({ sub: person.id, client_id: reader.clientId, scope: 'jwt:read' });
      const refreshed = (await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: exchanged['refresh_token'] as string, client_id: reader.clientId })).json() as Record<string, string | number>;
      expect(refreshed['expires_in']).toBe(300);
      expect((await verified(refreshed['access_token'] as string)).payload).toMatchObject({ sub: person.id });
      expect((await introspect(api, refreshed['access_token'] as string)).json()).toMatchObject({ active: true, sub: person.id, username: person.username });
      const [header, claims, signature] = (refreshed['access_token'] as string).split('.');
      const forged = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(claims as string, 'base64url').toString()), scope: 'admin' })).toString('base64url')}.${signature}`;
      expect((await introspect(api, forged)).json()).toEqual({ active: false });
      // Gatehouse's own API refuses it, as any resource server's token.
      expect((await getWithBearer(t, '/api/v1/users/@me', refreshed['access_token'] as string)).statusCode).toBe(401);
    });
  });

  describe('RFC 9728 protected-resource metadata', () => {
    it("describes Gatehouse's own API: resource, authorization server, scopes, header bearer tokens", async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        resource: 'http://localhost:8080',
        authorization_servers: ['http://localhost:8080'],
        scopes_supported: expect.arrayContaining(['identify', 'servers']),
        bearer_methods_supported: ['header'],
      });
    });
  });
});

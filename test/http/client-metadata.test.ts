import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { authorizePath, consentFields, freshPkce, location, signedIn } from './authorize.fixtures.js';
import { cliActing } from '../../src/core/acting.js';
import { addResourceServer } from '../../src/modules/resource-servers/resource-servers.service.js';
import { given } from '../support/given.js';
import { basicAuth } from '../support/oauth-factory.js';

/**
 * Client ID metadata documents (issue #41 §3; draft-ietf-oauth-client-id-metadata-document): a
 * document server on a loopback port plays the client's website, reachable because the tests set
 * GATEHOUSE_OUTBOUND_ALLOW_PRIVATE (which also allows plain http on loopback client ids).
 */

type Json = Record<string, unknown>;
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const TOKEN = '/api/oauth2/token';
const REDIRECT = 'https://mcp-client.example/callback';

let server: Server;
let base = '';
const routes = new Map<string, Handler>();
const hits = new Map<string, number>();

function json(body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** A document at `path` that names itself correctly, with `extra` fields. */
function documentAt(path: string, extra: Json = {}, headers: Record<string, string> = {}): string {
  const url = `${base}${path}`;
  routes.set(path, json({ client_id: url, client_name: 'MCP Inspector', redirect_uris: [REDIRECT, 'http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', ...extra }, headers));
  return url;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const handler = routes.get(path);
    if (handler) return handler(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function authorizeRequest(clientId: string, overrides: Record<string, string | undefined> = {}) {
  const pkce = freshPkce();
  return { pkce, path: authorizePath({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'identify', state: 's1', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...overrides }) };
}

function tokenRequest(t: TestApp, form: Record<string, string>) {
  return t.app.inject({ method: 'POST', url: TOKEN, payload: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
}

const countApps = async (t: TestApp) => Number((await t.services.db.selectFrom('applications').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; issue #41 §3)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => t.close());
  beforeEach(() => {
    routes.clear();
    hits.clear();
  });

  it('the OAuth and OpenID metadata say client_id_metadata_document_supported', async () => {
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      expect(((await t.app.inject({ method: 'GET', url })).json() as Json).client_id_metadata_document_supported).toBe(true);
    }
  });

  it('a URL client_id is fetched and used as a public client: the consent screen shows the host, the name as a claim; the code is exchanged with PKCE by the same URL', async () => {
    const clientId = documentAt('/oauth/client.json');
    const { agent } = await signedIn(t);
    const { pkce, path } = authorizeRequest(clientId);
    const page = await agent.get(path);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain(`An app at 127.0.0.1:${new URL(base).port} wants to access your`);
    expect(page.body).toContain('not reviewed');
    expect(page.body).toContain('it calls itself “MCP Inspector”');
    const fields = consentFields(page.body);
    expect(fields['client_id']).toBe(clientId);
    const answer = await agent.postRaw('/app/oauth2/authorize', { ...fields, decision: 'authorize' });
    const back = location(answer);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    const code = back.searchParams.get('code') as string;
    expect(code).toBeTruthy();

    // RFC 7636: the public client proves the code with its verifier; without it nothing is issued.
    const noVerifier = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId });
    expect(noVerifier.statusCode).toBe(400);
    const { pkce: other, path: second } = authorizeRequest(clientId);
    const fields2 = consentFields((await agent.get(second)).body);
    const code2 = location(await agent.postRaw('/app/oauth2/authorize', { ...fields2, decision: 'authorize' })).searchParams.get('code') as string;
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, client_id: clientId, code_verifier: other.verifier });
    expect(tokens.statusCode, tokens.body).toBe(200);
    expect((tokens.json() as Json).access_token).toMatch(/^ghat_/);
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: { authorization: `Bearer ${(tokens.json() as Json).access_token as string}` } });
    expect(me.statusCode).toBe(200);
    expect(pkce.verifier).not.toBe(other.verifier);
    // A secret makes no sense for a document's client: invalid_client.
    const withSecret = await tokenRequest(t, { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, client_id: clientId, client_secret: 'x', code_verifier: other.verifier });
    expect(withSecret.statusCode).toBe(401);
    expect(withSecret.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('the client is known by its URL wherever its client_id is shown: the ID token’s aud, introspection’s client_id and a JWT access token’s client_id', async () => {
    const clientId = documentAt('/oauth/known-by-url.json');
    const owner = await given.person(t, { username: 'notesowner' });
    const api = await given.confidentialApp(t, { owner, name: 'Notes API' });
    await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: 'https://notes.example/opaque/', scopes: ['notes:read'], scopeDescriptions: ['Read your notes'] });
    await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: 'https://notes.example/jwt/', scopes: ['notes:read'], scopeDescriptions: ['Read your notes'], jwtAccessTokens: true });
    const { agent } = await signedIn(t);
    const tokensFor = async (overrides: Record<string, string>) => {
      const { pkce, path } = authorizeRequest(clientId, overrides);
      const page = await agent.get(path);
      expect(page.statusCode, page.body).toBe(200);
      const code = location(await agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'authorize' })).searchParams.get('code') as string;
      const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: pkce.verifier, ...('resource' in overrides ? { resource: overrides['resource'] as string } : {}) });
      expect(tokens.statusCode, tokens.body).toBe(200);
      return tokens.json() as Json;
    };
    const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8')) as Json;

    const openid = await tokensFor({ scope: 'openid identify' });
    expect(payloadOf(openid.id_token as string)).toMatchObject({ aud: clientId, iss: t.services.config.baseUrl });

    const opaque = await tokensFor({ scope: 'notes:read', resource: 'https://notes.example/opaque/' });
    const described = await t.app.inject({ method: 'POST', url: '/api/oauth2/token/introspect', payload: new URLSearchParams({ token: opaque.access_token as string }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(api.clientId, api.clientSecret as string) } });
    expect(described.json()).toMatchObject({ active: true, client_id: clientId, aud: 'https://notes.example/opaque/' });

    const jwt = await tokensFor({ scope: 'notes:read', resource: 'https://notes.example/jwt/' });
    expect(payloadOf(jwt.access_token as string)).toMatchObject({ client_id: clientId, aud: 'https://notes.example/jwt/' });
    const jwtDescribed = await t.app.inject({ method: 'POST', url: '/api/oauth2/token/introspect', payload: new URLSearchParams({ token: jwt.access_token as string }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(api.clientId, api.clientSecret as string) } });
    expect(jwtDescribed.json()).toMatchObject({ active: true, client_id: clientId });
  });

  it('consent is asked every time (RFC 8252 as for public clients): prompt=none after an approval is consent_required', async () => {
    const clientId = documentAt('/every-time.json');
    const { agent } = await signedIn(t);
    const first = authorizeRequest(clientId);
    const fields = consentFields((await agent.get(first.path)).body);
    expect(location(await agent.postRaw('/app/oauth2/authorize', { ...fields, decision: 'authorize' })).searchParams.get('code')).toBeTruthy();
    const again = await agent.get(authorizeRequest(clientId).path);
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('not reviewed');
    const silent = location(await agent.get(authorizeRequest(clientId, { prompt: 'none' }).path));
    expect(silent.searchParams.get('error')).toBe('consent_required');
  });

  it('the document is fetched once while Cache-Control max-age holds, again after it, and changes to it are used', async () => {
    const clientId = documentAt('/cached.json', {}, { 'cache-control': 'max-age=600' });
    const { agent } = await signedIn(t);
    expect((await agent.get(authorizeRequest(clientId).path)).statusCode).toBe(200);
    expect((await agent.get(authorizeRequest(clientId).path)).statusCode).toBe(200);
    expect(hits.get('/cached.json')).toBe(1);
    documentAt('/cached.json', { client_name: 'Renamed agent' }, { 'cache-control': 'max-age=600' });
    t.clock.advance(601_000);
    const page = await agent.get(authorizeRequest(clientId).path);
    expect(hits.get('/cached.json')).toBe(2);
    expect(page.body).toContain('it calls itself “Renamed agent”');
  });

  it('the application behind a document answers to the URL only, not to its numeric id', async () => {
    const clientId = documentAt('/by-url-only.json');
    const { agent } = await signedIn(t);
    expect((await agent.get(authorizeRequest(clientId).path)).statusCode).toBe(200);
    const row = await t.services.db.selectFrom('client_metadata_documents').select('application_id').where('url', '=', clientId).executeTakeFirstOrThrow();
    const byId = await agent.get(authorizeRequest(String(row.application_id)).path);
    expect(byId.statusCode).toBe(400);
    expect(byId.headers.location).toBeUndefined();
    const token = await tokenRequest(t, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, client_id: String(row.application_id), code_verifier: 'v'.repeat(43) });
    expect(token.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('the device flow resolves a URL client_id too, and /activate names the document’s host', async () => {
    const clientId = documentAt('/device.json');
    const started = await t.app.inject({ method: 'POST', url: '/api/oauth2/device/authorize', payload: new URLSearchParams({ client_id: clientId, scope: 'identify' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(started.statusCode, started.body).toBe(200);
    const { agent } = await signedIn(t);
    const consent = await agent.submit('/activate', '/activate', { user_code: (started.json() as Json).user_code as string });
    expect(consent.statusCode).toBe(200);
    expect(consent.body).toContain(`An app at 127.0.0.1:${new URL(base).port} wants to access your`);
    expect(consent.body).toContain('it calls itself “MCP Inspector”');
  });

  describe('a document that cannot be verified: an error page on authorize (never a redirect), invalid_client at the token endpoint, nothing created', () => {
    const cases: Array<[string, () => string, RegExp]> = [
      [
        'larger than 5 KiB',
        () => {
          const url = `${base}/large.json`;
          routes.set('/large.json', json({ client_id: url, redirect_uris: [REDIRECT], padding: 'x'.repeat(6000) }));
          return url;
        },
        /larger than 5120 bytes/,
      ],
      [
        'not JSON',
        () => {
          routes.set('/html', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'));
          return `${base}/html`;
        },
        /must be served as application\/json/,
      ],
      [
        'JSON that does not parse',
        () => {
          routes.set('/broken.json', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"client_id":'));
          return `${base}/broken.json`;
        },
        /not valid JSON/,
      ],
      [
        'a redirect (3xx), which is not followed',
        () => {
          documentAt('/elsewhere.json');
          routes.set('/moved.json', (_req, res) => res.writeHead(302, { location: `${base}/elsewhere.json` }).end());
          return `${base}/moved.json`;
        },
        /redirected \(HTTP 302\)/,
      ],
      [
        'a client_id that is not the URL it was fetched from',
        () => {
          routes.set('/mismatch.json', json({ client_id: `${base}/other.json`, redirect_uris: [REDIRECT] }));
          return `${base}/mismatch.json`;
        },
        /client_id does not equal the URL/,
      ],
      [
        'an http redirect URI on a host that is not loopback',
        () => {
          const url = `${base}/http-redirect.json`;
          routes.set('/http-redirect.json', json({ client_id: url, redirect_uris: ['http://mcp-client.example/callback'] }));
          return url;
        },
        /not acceptable/,
      ],
      [
        'no redirect_uris',
        () => {
          const url = `${base}/no-redirects.json`;
          routes.set('/no-redirects.json', json({ client_id: url }));
          return url;
        },
        /redirect_uris/,
      ],
      ['a secret in the document', () => documentAt('/secret.json', { client_secret: 'shh' }), /must not contain client_secret/],
      ['a token endpoint auth method other than none', () => documentAt('/jwt.json', { token_endpoint_auth_method: 'private_key_jwt' }), /token_endpoint_auth_method must be none/],
      ['an answer other than 200', () => `${base}/missing.json`, /HTTP 404/],
      ['a URL without a path', () => `${base}/`, /must have a path/],
      ['an http URL on a host that is not loopback', () => 'http://mcp-client.example/client.json', /must use https/],
    ];

    it.each(cases)('%s', async (_name, setUp, description) => {
      const clientId = setUp();
      const before = await countApps(t);
      const { agent } = await signedIn(t);
      const page = await agent.get(authorizeRequest(clientId).path);
      expect(page.statusCode).toBe(400);
      expect(page.headers.location).toBeUndefined();
      expect(page.body).toContain('This application could not be verified');
      expect(page.body).toMatch(description);
      const token = await tokenRequest(t, { grant_type: 'authorization_code', code: 'unknown', redirect_uri: REDIRECT, client_id: clientId, code_verifier: 'v'.repeat(43) });
      expect(token.statusCode).toBe(401);
      expect(token.json()).toMatchObject({ error: 'invalid_client' });
      expect((token.json() as Json).error_description).toMatch(description);
      expect(await countApps(t)).toBe(before);
    });

    it('a redirect_uri the document does not list is an error page, not a redirect', async () => {
      const clientId = documentAt('/listed.json');
      const { agent } = await signedIn(t);
      const page = await agent.get(authorizeRequest(clientId, { redirect_uri: 'https://attacker.example/callback' }).path);
      expect(page.statusCode).toBe(400);
      expect(page.headers.location).toBeUndefined();
    });

    it('a document that does not arrive within 5 seconds', async () => {
      routes.set('/slow.json', () => {
        // Never answers: the outbound client's deadline ends the request.
      });
      const { agent } = await signedIn(t);
      const page = await agent.get(authorizeRequest(`${base}/slow.json`).path);
      expect(page.statusCode).toBe(400);
      expect(page.body).toMatch(/did not arrive within 5 seconds/);
    }, 20_000);
  });
});

describe('client ID metadata documents without GATEHOUSE_OUTBOUND_ALLOW_PRIVATE, and turned off', () => {
  let t: TestApp;
  let off: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    off = await createTestApp({ env: { GATEHOUSE_CLIENT_ID_METADATA: 'off', GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await t.close();
    await off.close();
  });

  it('a document on a private address is refused (and plain http on loopback is not a client id)', async () => {
    routes.clear();
    const clientId = documentAt('/private.json');
    const { agent } = await signedIn(t);
    const https = await agent.get(authorizeRequest(clientId.replace('http://', 'https://')).path);
    expect(https.statusCode).toBe(400);
    expect(https.body).toMatch(/not a public address/);
    const http = await agent.get(authorizeRequest(clientId).path);
    expect(http.statusCode).toBe(400);
    expect(http.body).toMatch(/must use https/);
    expect(hits.get('/private.json')).toBeUndefined();
  });

  it('GATEHOUSE_CLIENT_ID_METADATA=off: no metadata flag, and a URL client_id is refused without a fetch', async () => {
    routes.clear();
    hits.clear();
    const clientId = documentAt('/off.json');
    expect(((await off.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json() as Json).client_id_metadata_document_supported).toBeUndefined();
    const { agent } = await signedIn(off);
    const page = await agent.get(authorizeRequest(clientId).path);
    expect(page.statusCode).toBe(400);
    expect(page.body).toMatch(/does not accept client ID metadata documents/);
    const token = await tokenRequest(off, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, client_id: clientId, code_verifier: 'v'.repeat(43) });
    expect(token.json()).toMatchObject({ error: 'invalid_client' });
    expect(hits.get('/off.json')).toBeUndefined();
  });
});

describe('client ID metadata documents: new clients per host', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => t.close());

  it('one host brings at most 20 new clients an hour (each is an application); known ones still work, and the next hour more', async () => {
    routes.clear();
    const { agent } = await signedIn(t);
    const urls = Array.from({ length: 21 }, (_, i) => documentAt(`/many/${i}.json`));
    for (const url of urls.slice(0, 20)) expect((await agent.get(authorizeRequest(url).path)).statusCode).toBe(200);
    const before = await countApps(t);
    const refused = await agent.get(authorizeRequest(urls[20] as string).path);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/more than 20 new clients from 127\.0\.0\.1/i);
    expect(await countApps(t)).toBe(before);
    t.clock.advance(60 * 60_000);
    expect((await agent.get(authorizeRequest(urls[0] as string).path)).statusCode).toBe(200);
    expect((await agent.get(authorizeRequest(urls[20] as string).path)).statusCode).toBe(200);
  });
});

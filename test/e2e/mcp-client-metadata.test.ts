import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../support/database.js';
import { databaseUrlFor, ensureBuilt, startServer, type ServerProcess } from '../support/server-process.js';
import { csrfTokenIn } from '../support/page-agent.js';

/**
 * Issue #41 §3 with the unmodified MCP SDK: its `auth()` names the client with a client ID
 * metadata document (`clientMetadataUrl`) when Gatehouse's metadata says
 * client_id_metadata_document_supported, and registers nothing. The SDK accepts only an https
 * document URL, so the document is served over TLS on a loopback port with a certificate made for
 * tests (test/support/tls/), which the server process trusts through NODE_EXTRA_CA_CERTS (and reaches through
 * GATEHOUSE_OUTBOUND_ALLOW_PRIVATE).
 */

/** A self-signed certificate for 127.0.0.1 (valid for a century), made for tests only. */
const TLS = fileURLToPath(new URL('../support/tls', import.meta.url));

/** A browser's cookies and redirects, over fetch: enough for the sign-up and consent forms. */
class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly baseUrl: string) {}

  async request(path: string, form?: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = (pair as string).indexOf('=');
      this.cookies.set((pair as string).slice(0, at), (pair as string).slice(at + 1));
    }
    return { status: response.status, location: response.headers.get('location'), body: await response.text() };
  }
}

function consentFields(markup: string): Record<string, string> {
  const form = /<form method="post" action="\/app\/oauth2\/authorize">([\s\S]*?)<\/form>/.exec(markup)?.[1] ?? '';
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[m[1] as string] = (m[2] as string).replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[e] ?? '');
  }
  return fields;
}

class DocumentClientProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(
    readonly clientMetadataUrl: string,
    readonly redirectUrl: string,
  ) {}
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Notes agent', redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('the MCP SDK names its client with a client ID metadata document (issue #41 §3)', () => {
  let dir: string;
  let database: TestDatabase;
  let server: ServerProcess;
  let documents: Server;
  let documentUrl = '';
  const redirectUrl = 'http://127.0.0.1:53682/callback';
  let fetches = 0;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-cimd-'));
    documents = createHttpsServer({ key: readFileSync(join(TLS, 'loopback-key.pem')), cert: readFileSync(join(TLS, 'loopback-cert.pem')) }, (_req, res) => {
      fetches += 1;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      res.end(JSON.stringify({ client_id: documentUrl, client_name: 'Notes agent', redirect_uris: [redirectUrl], token_endpoint_auth_method: 'none' }));
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentUrl = `https://127.0.0.1:${(documents.address() as AddressInfo).port}/oauth/client.json`;
    database = await createTestDatabase({ sqliteFile: join(dir, 'gatehouse.db') });
    server = await startServer({
      databaseUrl: databaseUrlFor(database),
      ...(TEST_REDIS_URL ? { redisUrl: TEST_REDIS_URL } : {}),
      env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true', NODE_EXTRA_CA_CERTS: join(TLS, 'loopback-cert.pem') },
    });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    documents?.closeAllConnections();
    await new Promise<void>((resolve) => (documents ? documents.close(() => resolve()) : resolve()));
    if (database) await database.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('auth() sends the document URL as client_id without registering; the person consents on a screen naming the host; the code exchange gives a token that reads the person and an ID token for the URL', async () => {
    const provider = new DocumentClientProvider(documentUrl, redirectUrl);
    // The agent asks for what it needs (the protected resource's metadata lists every scope).
    expect(await auth(provider, { serverUrl: server.baseUrl, scope: 'openid identify' })).toBe('REDIRECT');
    expect(provider.info?.client_id).toBe(documentUrl);
    const authorizationUrl = provider.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get('client_id')).toBe(documentUrl);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

    const browser = new Browser(server.baseUrl);
    const signUp = await browser.request('/register');
    const signedUp = await browser.request('/register', { username: 'robin', name: 'Robin Hood', email: '', password: 'sherwood forest 1', next: '', token: '', _csrf: csrfTokenIn(signUp.body) as string });
    expect([302, 303]).toContain(signedUp.status);
    const consent = await browser.request(`${authorizationUrl.pathname}${authorizationUrl.search}`);
    expect(consent.status, `${consent.location} ${consent.body.slice(0, 300)}`).toBe(200);
    expect(consent.body).toContain(`An app at ${new URL(documentUrl).host} wants to access your`);
    expect(consent.body).toContain('it calls itself “Notes agent”');
    const answered = await browser.request('/app/oauth2/authorize', { ...consentFields(consent.body), decision: 'authorize' });
    const back = new URL(answered.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(redirectUrl);
    const code = back.searchParams.get('code') as string;

    expect(await auth(provider, { serverUrl: server.baseUrl, scope: 'openid identify', authorizationCode: code })).toBe('AUTHORIZED');
    // Draft §3: the client_id is the URL, so the ID token is for the URL, not for the application behind it.
    const idToken = provider.saved?.id_token as string;
    expect(JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString('utf8'))).toMatchObject({ aud: documentUrl });
    const me = await fetch(`${server.baseUrl}/api/v1/users/@me`, { headers: { authorization: `Bearer ${provider.saved?.access_token as string}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string }).username).toBe('robin');
    // Within the document's max-age the server fetched it once, for the authorization and the token request.
    expect(fetches).toBe(1);
  });
});

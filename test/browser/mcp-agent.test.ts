import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { actingOf, ANONYMOUS } from '../support/acting.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { runCommand } from '../support/directory-fixtures.js';
import { createClient, createPerson, obtainTokens } from '../support/oauth-factory.js';
import { freePort } from '../support/ports.js';

warnIfChromiumMissing('test/browser/mcp-agent.test.ts');

/**
 * Issue #41's end-to-end test with unmodified clients (docs/mcp.md runs the same steps): an MCP
 * server built with @modelcontextprotocol/sdk (requireBearerAuth, mcpAuthMetadataRouter, the
 * Streamable HTTP transport) whose tool `list_my_servers` exchanges the token it was given for a
 * Gatehouse API token (RFC 8693) and reads the person's servers; and an agent using the SDK's
 * client `auth()`: it discovers the MCP server's RFC 9728 metadata and Gatehouse's RFC 8414
 * metadata, registers itself (RFC 7591, GATEHOUSE_CLIENT_REGISTRATION=open), and sends the person
 * through consent in Chromium with `resource`. Twice: a resource server verifying by introspection
 * (RFC 7662), and one declared --jwt verifying RFC 9068 access tokens locally with jose.
 */

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const SCOPE = 'servers:read';
const SCOPE_WORDS = 'See which servers you are in';

/** The agent's side of the SDK's auth(): it starts with no client id, so auth() registers (DCR). */
class AgentProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  /** Where the person's browser is sent (the test hands it to Chromium). */
  onRedirect: (url: URL) => void = () => undefined;
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Server lister agent', redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
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
    this.onRedirect(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

interface McpServerHandle {
  url: string;
  server: Server;
  /** What each token exchange of list_my_servers sent and got, for the checks. */
  exchanges: { subjectTokenType: string; scope: string | undefined; tokenType: string | undefined }[];
  /** The Gatehouse API tokens the exchanges gave. */
  apiTokens: string[];
}

describe.skipIf(!chromiumAvailable)('an MCP agent (SDK auth(), DCR, consent in Chromium) calls a tool of an SDK-protected MCP server that reads the person’s servers by token exchange (issue #41)', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let base = '';
  let mcpApp: { id: string; secret: string };
  let introspecting: McpServerHandle;
  let verifyingJwt: McpServerHandle;
  /** The agent's loopback redirect (RFC 8252 §7.3): it answers the browser and keeps the code. */
  let loopback: Server;
  let redirectUrl = '';
  let codes: string[] = [];
  let agent: AgentProvider;
  let jwtAgent: AgentProvider;

  /** The MCP server's part of RFC 8693: its own client authentication, the person's token as the subject. */
  async function exchangeForGatehouseToken(subjectToken: string, subjectTokenType: string, handle: McpServerHandle): Promise<string> {
    const config = await client.discovery(new URL(base), mcpApp.id, mcpApp.secret, client.ClientSecretBasic(mcpApp.secret), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
    let answer: client.TokenEndpointResponse;
    try {
      answer = await client.genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: subjectToken, subject_token_type: subjectTokenType, scope: 'guilds' });
    } catch (error) {
      // RFC 8693 §2.2.2: the error code tells the agent why (invalid_grant once the person revoked).
      if (error instanceof client.ResponseBodyError) throw new Error(`token exchange refused: ${error.error}`);
      throw error;
    }
    handle.exchanges.push({ subjectTokenType, scope: answer.scope, tokenType: answer.token_type });
    handle.apiTokens.push(answer.access_token);
    return answer.access_token;
  }

  /** An MCP server on its own loopback port, protected by the SDK's bearer middleware with `verifier`. */
  async function startMcpServer(port: number, verifier: (url: string) => OAuthTokenVerifier, subjectTokenType: string): Promise<McpServerHandle> {
    const url = `http://127.0.0.1:${port}/mcp`;
    const handle: McpServerHandle = { url, server: undefined as unknown as Server, exchanges: [], apiTokens: [] };
    const app = express();
    const oauthMetadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Parameters<typeof mcpAuthMetadataRouter>[0]['oauthMetadata'];
    app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: new URL(url), scopesSupported: [SCOPE], resourceName: 'Server lister' }));
    const bearer = requireBearerAuth({ verifier: verifier(url), requiredScopes: [SCOPE], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(url)), expectedResource: new URL(url) });
    app.post('/mcp', express.json(), bearer, async (req, res) => {
      // Stateless: a server and transport per request.
      const mcp = new McpServer({ name: 'server-lister', version: '1.0.0' });
      mcp.registerTool('list_my_servers', { description: 'The names of the servers you are in' }, async (extra) => {
        // MCP authorization spec: no token passthrough; the person's token becomes a Gatehouse API token.
        const apiToken = await exchangeForGatehouseToken(extra.authInfo?.token as string, subjectTokenType, handle);
        const guilds = await fetch(`${base}/api/v1/users/@me/guilds`, { headers: { authorization: `Bearer ${apiToken}` } });
        if (!guilds.ok) throw new Error(`Gatehouse answered ${guilds.status}`);
        const names = ((await guilds.json()) as { name: string }[]).map((g) => g.name);
        return { content: [{ type: 'text', text: JSON.stringify(names) }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      await mcp.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
    handle.server = await new Promise<Server>((resolve) => {
      const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
    });
    return handle;
  }

  /** RFC 7662 through Gatehouse: any inactive token is InvalidTokenError (the SDK's 401). */
  const introspectionVerifier = (): OAuthTokenVerifier => ({
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const res = await fetch(`${base}/api/oauth2/token/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${mcpApp.id}:${mcpApp.secret}`).toString('base64')}` },
        body: new URLSearchParams({ token }),
      });
      const t = (await res.json()) as { active: boolean; scope?: string; client_id?: string; exp?: number; aud?: string; sub?: string };
      if (!t.active) throw new InvalidTokenError('token is not active for this server');
      return { token, clientId: t.client_id as string, scopes: (t.scope ?? '').split(' '), expiresAt: t.exp as number, resource: new URL(t.aud as string), extra: { sub: t.sub } };
    },
  });

  /** RFC 9068 checked locally: signature against Gatehouse's JWKS, typ at+jwt, iss, aud, exp. */
  const jwtVerifier = (jwksUri: string) => (url: string): OAuthTokenVerifier => {
    const keys = createRemoteJWKSet(new URL(jwksUri));
    return {
      async verifyAccessToken(token: string): Promise<AuthInfo> {
        try {
          const { payload } = await jwtVerify(token, keys, { typ: 'at+jwt', issuer: base, audience: url });
          return { token, clientId: payload['client_id'] as string, scopes: String(payload['scope'] ?? '').split(' '), expiresAt: payload.exp as number, resource: new URL(url), extra: { sub: payload.sub } };
        } catch {
          throw new InvalidTokenError('not an access token of this server');
        }
      },
    };
  };

  /** The agent: the SDK's Client over Streamable HTTP with `headers`, calling list_my_servers. */
  async function listMyServers(url: string, token: string): Promise<{ names?: string[]; isError: boolean; text: string }> {
    const mcp = new Client({ name: 'server-lister-agent', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const result = (await mcp.callTool({ name: 'list_my_servers', arguments: {} })) as { isError?: boolean; content: { type: string; text: string }[] };
      const text = result.content[0]?.text ?? '';
      return result.isError ? { isError: true, text } : { names: JSON.parse(text) as string[], isError: false, text };
    } finally {
      await mcp.close();
    }
  }

  /**
   * The person in Chromium: the authorization URL auth() produced, a sign-in when needed, the
   * consent screen (checked by `look`), Authorize, and the code the loopback server received.
   */
  async function consentInChromium(url: URL, look: () => Promise<void>): Promise<string> {
    const { page } = browser;
    const before = codes.length;
    await page.goto(url.href);
    if (new URL(page.url()).pathname === '/login') {
      await submitSignIn(page, 'robin', 'sherwood forest 1');
      await page.waitForURL(/\/app\/oauth2\/authorize\?/);
    }
    await look();
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((landed) => `${landed.origin}${landed.pathname}` === redirectUrl);
    expect(codes.length).toBe(before + 1);
    return codes[codes.length - 1] as string;
  }

  beforeAll(async () => {
    served = await serveTestApp({ env: { GATEHOUSE_CLIENT_REGISTRATION: 'open' } });
    base = served.baseUrl;
    const t = served.t;
    // The person, in two servers: one of their own and one they joined.
    await registerPerson(t.services, actingOf(ANONYMOUS), { username: 'robin', name: 'Robin Hood', password: 'sherwood forest 1' });
    await registerPerson(t.services, actingOf(ANONYMOUS), { username: 'marian', name: 'Marian', password: 'sherwood forest 2' });
    await runCommand(t, 'servers create', ['--owner', 'robin', '--name', 'Sherwood Outlaws']);
    const joined = await runCommand(t, 'servers create', ['--owner', 'marian', '--name', 'Nottingham Market']);
    await runCommand(t, 'members add', ['--server', String(joined['id']), '--username', 'robin']);
    await runCommand(t, 'servers create', ['--owner', 'marian', '--name', 'Marian Only']);

    // The MCP server's app: confidential (it introspects and exchanges tokens), two resource servers.
    const made = await runCommand(t, 'apps create', ['--owner', 'marian', '--name', 'Server Lister']);
    mcpApp = { id: String(made['client_id']), secret: String(made['client_secret']) };
    const [introspectedPort, jwtPort] = [await freePort(), await freePort()];
    for (const [port, jwt] of [[introspectedPort, false], [jwtPort, true]] as const) {
      await runCommand(t, 'apps resource add', [
        '--app', mcpApp.id, '--identifier', `http://127.0.0.1:${port}/mcp`,
        '--scope', SCOPE, '--scope-description', SCOPE_WORDS,
        '--delegate', 'identify', '--delegate', 'guilds',
        ...(jwt ? ['--jwt'] : []),
      ]);
    }
    // RFC 8414 §2: the keys are named in the document a resource server reads, not only in OpenID's.
    const asMetadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as { jwks_uri: string };
    introspecting = await startMcpServer(introspectedPort, introspectionVerifier, ACCESS_TOKEN_TYPE);
    verifyingJwt = await startMcpServer(jwtPort, jwtVerifier(asMetadata.jwks_uri), JWT_TOKEN_TYPE);

    loopback = createServer((req: IncomingMessage, res: ServerResponse) => {
      const code = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('code');
      if (code) codes.push(code);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('Signed in. You can close this window.');
    });
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    redirectUrl = `http://127.0.0.1:${(loopback.address() as { port: number }).port}/callback`;
    codes = [];
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    for (const s of [introspecting?.server, verifyingJwt?.server, loopback]) {
      if (!s) continue;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
    await served?.close();
  });

  it('auth() discovers both metadata documents, registers by DCR, and sends the person through consent with resource; the tool names the person’s two servers', async () => {
    agent = new AgentProvider(redirectUrl);
    expect(await auth(agent, { serverUrl: introspecting.url })).toBe('REDIRECT');
    // Registered through Gatehouse's registration_endpoint (RFC 7591): a numeric client id, no secret.
    expect(agent.info?.client_id).toMatch(/^[0-9]+$/);
    expect((agent.info as { client_secret?: string }).client_secret).toBeUndefined();
    const url = agent.authorizationUrl as URL;
    expect(url.origin).toBe(base);
    // RFC 8707, the resource the MCP server's RFC 9728 metadata names; the scope its scopes_supported lists.
    expect(url.searchParams.get('resource')).toBe(introspecting.url);
    expect(url.searchParams.get('scope')).toBe(SCOPE);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');

    const { page } = browser;
    const code = await consentInChromium(url, async () => {
      await expect.poll(() => page.locator('h1').textContent()).toBe('Server lister agent wants to access your Gatehouse account');
      const card = page.locator('.consent');
      await expect.poll(() => card.textContent()).toContain('Registered automatically, not reviewed');
      await expect.poll(() => card.textContent()).toContain(SCOPE_WORDS);
      await expect.poll(() => card.textContent()).toContain(`This access is for ${introspecting.url}, an API of Server Lister`);
      // The delegated section: what the MCP server's app may also do on the person's behalf on Gatehouse.
      await expect.poll(() => card.textContent()).toMatch(/Server Lister can also, on your behalf, on Gatehouse/);
      await expect.poll(() => card.textContent()).toContain('Know your name, username and avatar');
      await expect.poll(() => card.textContent()).toContain('See the list of servers you are in and your permissions there');
      await screenshot(page, 'mcp-agent-01-consent');
    });

    expect(await auth(agent, { serverUrl: introspecting.url, authorizationCode: code })).toBe('AUTHORIZED');
    expect(agent.saved?.scope).toBe(SCOPE);

    // The agent connects as MCP clients do, its provider supplying the bearer token.
    const mcp = new Client({ name: 'server-lister-agent', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(introspecting.url), { authProvider: agent }));
    const tools = await mcp.listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual(['list_my_servers']);
    const result = (await mcp.callTool({ name: 'list_my_servers', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
    await mcp.close();
    expect(result.isError ?? false).toBe(false);
    expect((JSON.parse(result.content[0]?.text as string) as string[]).sort()).toEqual(['Nottingham Market', 'Sherwood Outlaws']);
    // RFC 8693 §2.2.1: a Gatehouse API token with the delegated scope asked for.
    expect(introspecting.exchanges).toEqual([{ subjectTokenType: ACCESS_TOKEN_TYPE, scope: 'servers', tokenType: 'bearer' }]);
  });

  it("the MCP server refuses a token for Gatehouse's own API (401 naming its resource metadata); Gatehouse's API refuses the MCP token", async () => {
    const t = served.t;
    const someone = await createPerson(t, { username: 'will', name: 'Will Scarlet' });
    const other = await createClient(t, { owner: someone, confidential: true, name: 'Plain app' });
    const gatehouseToken = (await obtainTokens(t, other, someone, ['identify', 'servers'])).access_token;
    const refused = await fetch(introspecting.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${gatehouseToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${getOAuthProtectedResourceMetadataUrl(new URL(introspecting.url))}"`);
    await expect(listMyServers(introspecting.url, gatehouseToken)).rejects.toThrow();

    const me = await fetch(`${base}/api/v1/users/@me/guilds`, { headers: { authorization: `Bearer ${agent.saved?.access_token as string}` } });
    expect(me.status).toBe(401);
  });

  it('the JWT variant: a resource server declared --jwt verifies the RFC 9068 token locally (typ, iss, aud, exp) and exchanges the JWT for an API token', async () => {
    // The same registered agent (auth() keeps client information per authorization server), a second MCP server.
    jwtAgent = new AgentProvider(redirectUrl);
    jwtAgent.info = agent.info;
    expect(await auth(jwtAgent, { serverUrl: verifyingJwt.url })).toBe('REDIRECT');
    const url = jwtAgent.authorizationUrl as URL;
    expect(url.searchParams.get('client_id')).toBe(agent.info?.client_id);
    expect(url.searchParams.get('resource')).toBe(verifyingJwt.url);
    const { page } = browser;
    // RFC 8252 §8.6: a public client on a loopback redirect sees the consent screen every time.
    const code = await consentInChromium(url, async () => {
      await expect.poll(() => page.locator('.consent').textContent()).toContain(`This access is for ${verifyingJwt.url}, an API of Server Lister`);
    });
    expect(await auth(jwtAgent, { serverUrl: verifyingJwt.url, authorizationCode: code })).toBe('AUTHORIZED');
    const token = jwtAgent.saved?.access_token as string;
    expect(token.split('.')).toHaveLength(3);

    const listed = await listMyServers(verifyingJwt.url, token);
    expect(listed.names?.sort()).toEqual(['Nottingham Market', 'Sherwood Outlaws']);
    expect(verifyingJwt.exchanges).toEqual([{ subjectTokenType: JWT_TOKEN_TYPE, scope: 'servers', tokenType: 'bearer' }]);
    // The JWT is for the MCP server only: the introspecting server's audience check refuses it, and so does Gatehouse's API.
    await expect(listMyServers(introspecting.url, token)).rejects.toThrow();
    expect((await fetch(`${base}/api/v1/users/@me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('after the person deauthorizes the agent in Authorized apps, both tools fail: the introspected token is refused, and the JWT can no longer be exchanged', async () => {
    const { page } = browser;
    await page.goto(`${base}/settings/authorized-apps`);
    await page.getByRole('link', { name: 'Deauthorize Server lister agent…' }).click();
    await page.getByRole('button', { name: 'Deauthorize Server lister agent' }).click();
    await page.waitForURL(/removed=1/);

    // Opaque and introspected: refused at once (401 from the SDK's middleware).
    await expect(listMyServers(introspecting.url, agent.saved?.access_token as string)).rejects.toThrow();
    // The JWT still verifies locally until its exp (5 minutes), but Gatehouse refuses to exchange it.
    const afterRevocation = await listMyServers(verifyingJwt.url, jwtAgent.saved?.access_token as string);
    expect(afterRevocation.isError).toBe(true);
    expect(afterRevocation.text).toContain('invalid_grant');
    expect(verifyingJwt.exchanges).toHaveLength(1);
    // The API tokens the exchanges gave belong to the same authorization: they ended with it.
    expect([introspecting.apiTokens.length, verifyingJwt.apiTokens.length]).toEqual([1, 1]);
    for (const apiToken of [...introspecting.apiTokens, ...verifyingJwt.apiTokens]) {
      expect((await fetch(`${base}/api/v1/users/@me/guilds`, { headers: { authorization: `Bearer ${apiToken}` } })).status).toBe(401);
    }
  });
});

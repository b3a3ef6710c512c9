import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActing } from '../../src/core/acting.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addResourceServer } from '../../src/modules/resource-servers/resource-servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { browse, sessionCookie as sessionCookieOf } from '../support/consent-browser.js';
import { createClient, createPerson, obtainTokens, type TestClient } from '../support/oauth-factory.js';
import { freePort } from '../support/ports.js';

/**
 * Issue #41 §1–§2 with unmodified clients against a listening server: openid-client 6 and
 * oauth4webapi (client credentials, introspection), and an MCP server built with the official SDK
 * (its requireBearerAuth middleware, with a verifier that asks Gatehouse's introspection endpoint)
 * that accepts a token obtained by the code flow with `resource=<the MCP server's URL>` and
 * refuses a token for Gatehouse's own API.
 */
describe('resource servers with unmodified clients (issue #41)', () => {
  let t: TestApp;
  let baseUrl: string;
  let person: Person;
  /** The MCP server's application: it serves the resource and introspects its tokens. */
  let mcpApp: TestClient;
  /** The agent: a public client sending the person through consent with `resource`. */
  let agentApp: TestClient;
  let mcp: Server;
  let mcpUrl: string;

  /** RFC 7662 through Gatehouse, as the MCP server's verifier: any inactive token is InvalidTokenError (401). */
  async function verifyAccessToken(token: string): Promise<AuthInfo> {
    const res = await fetch(`${baseUrl}/api/oauth2/token/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${mcpApp.clientId}:${mcpApp.clientSecret as string}`).toString('base64')}` },
      body: new URLSearchParams({ token }),
    });
    const body = (await res.json()) as { active: boolean; scope?: string; client_id?: string; exp?: number; aud?: string; sub?: string };
    if (!body.active) throw new InvalidTokenError('token is not active for this resource');
    return { token, clientId: body.client_id as string, scopes: (body.scope ?? '').split(' '), expiresAt: body.exp as number, resource: new URL(body.aud as string), extra: { sub: body.sub } };
  }

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    // The SDK's middleware compares exp with its own clock.
    t.clock.set(Date.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    person = await createPerson(t, { username: 'mia', name: 'Mia' });
    mcpApp = await createClient(t, { owner: person, confidential: true, name: 'Notes MCP' });
    agentApp = await createClient(t, { owner: await createPerson(t), name: 'Agent', confidential: false, redirectUris: ['http://127.0.0.1/callback'] });

    const mcpPort = await freePort();
    mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
    await addResourceServer(t.services, cliActing(t.clock), mcpApp.clientId, { identifier: mcpUrl, scopes: ['notes:read'], scopeDescriptions: ['Read your notes'] });

    const server = express();
    const oauthMetadata = (await (await fetch(`${baseUrl}/.well-known/oauth-authorization-server`)).json()) as Parameters<typeof mcpAuthMetadataRouter>[0]['oauthMetadata'];
    server.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: new URL(mcpUrl), scopesSupported: ['notes:read'], resourceName: 'Notes' }));
    const auth = requireBearerAuth({ verifier: { verifyAccessToken }, requiredScopes: ['notes:read'], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(mcpUrl)), expectedResource: new URL(mcpUrl) });
    server.post('/mcp', express.json(), auth, async (req, res) => {
      // Stateless: a server and transport per request.
      const mcpServer = new McpServer({ name: 'notes', version: '1.0.0' });
      mcpServer.registerTool('whoami', { description: 'Who the token speaks for' }, async (extra) => ({
        content: [{ type: 'text', text: JSON.stringify({ sub: extra.authInfo?.extra?.['sub'], client: extra.authInfo?.clientId, scopes: extra.authInfo?.scopes }) }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      await mcpServer.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
    mcp = await new Promise<Server>((resolve) => {
      const listening = server.listen(mcpPort, '127.0.0.1', () => resolve(listening));
    });
    expect((mcp.address() as AddressInfo).port).toBe(mcpPort);
  });
  afterAll(async () => {
    await new Promise((resolve) => mcp.close(resolve));
    await t.close();
  });

  /** The MCP client calling whoami with `token`. */
  async function whoami(token: string): Promise<{ sub: string; client: string; scopes: string[] }> {
    const mcpClient = new Client({ name: 'agent', version: '1.0.0' });
    await mcpClient.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const result = (await mcpClient.callTool({ name: 'whoami', arguments: {} })) as { content: { type: string; text: string }[] };
      return JSON.parse(result.content[0]?.text ?? '{}') as { sub: string; client: string; scopes: string[] };
    } finally {
      await mcpClient.close();
    }
  }

  it('an MCP server (SDK requireBearerAuth, verifying by introspection) accepts a token from the code flow with resource=<its URL>', async () => {
    const config = await client.discovery(new URL(baseUrl), agentApp.clientId, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: agentApp.redirectUri,
      scope: 'notes:read',
      state,
      resource: mcpUrl,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    let consentForm = '';
    const callback = await browse(baseUrl, await sessionCookieOf(t, person.id), url, { inspect: (form) => (consentForm = form) });
    expect(consentForm).toContain(mcpUrl);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, { resource: mcpUrl });
    expect(tokens.scope).toBe('notes:read');
    expect(await whoami(tokens.access_token)).toEqual({ sub: person.id, client: agentApp.clientId, scopes: ['notes:read'] });
    // Gatehouse's own API refuses the MCP server's token.
    const me = await fetch(`${baseUrl}/api/v1/users/@me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(401);
  });

  it("the MCP server refuses a token for Gatehouse's own API with 401 and its resource metadata", async () => {
    const other = await createClient(t, { owner: person, confidential: true });
    const tokens = await obtainTokens(t, other, person, ['identify']);
    const res = await fetch(mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=');
    await expect(whoami(tokens.access_token)).rejects.toThrow();
    // The protected-resource metadata the SDK serves names Gatehouse as the authorization server.
    const metadata = (await (await fetch(getOAuthProtectedResourceMetadataUrl(new URL(mcpUrl)))).json()) as { authorization_servers: string[] };
    expect(metadata.authorization_servers.map((s) => s.replace(/\/$/, ''))).toEqual([baseUrl]);
  });

  it('openid-client: clientCredentialsGrant for the resource, then tokenIntrospection by the resource server', async () => {
    const config = await client.discovery(new URL(baseUrl), mcpApp.clientId, undefined, client.ClientSecretBasic(mcpApp.clientSecret as string), { execute: [client.allowInsecureRequests] });
    expect(config.serverMetadata().introspection_endpoint).toBe(`${baseUrl}/api/oauth2/token/introspect`);
    const tokens = await client.clientCredentialsGrant(config, { resource: mcpUrl, scope: 'notes:read' });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.expiresIn()).toBeGreaterThan(0);
    const described = await client.tokenIntrospection(config, tokens.access_token);
    expect(described).toMatchObject({ active: true, client_id: mcpApp.clientId, sub: mcpApp.clientId, aud: mcpUrl, scope: 'notes:read', token_type: 'Bearer' });
    expect(await whoami(tokens.access_token)).toEqual({ sub: mcpApp.clientId, client: mcpApp.clientId, scopes: ['notes:read'] });
    const unknown = await client.tokenIntrospection(config, 'ghat_not-a-token');
    expect(unknown.active).toBe(false);
  });

  it('oauth4webapi: client credentials and introspection, processed by the library unmodified', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const issuer = new URL(baseUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const c: oauth.Client = { client_id: mcpApp.clientId };
    const auth = oauth.ClientSecretPost(mcpApp.clientSecret as string);
    const granted = await oauth.processClientCredentialsResponse(as, c, await oauth.clientCredentialsGrantRequest(as, c, auth, new URLSearchParams({ resource: mcpUrl }), insecure));
    expect(granted.token_type).toBe('bearer');
    expect(granted.scope).toBe('notes:read');
    const described = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, granted.access_token, insecure));
    expect(described).toMatchObject({ active: true, aud: mcpUrl, sub: mcpApp.clientId });
    // A public client cannot use client credentials (RFC 6749 §4.4).
    const pub: oauth.Client = { client_id: agentApp.clientId };
    const refused = await oauth.clientCredentialsGrantRequest(as, pub, oauth.None(), new URLSearchParams({ resource: mcpUrl }), insecure);
    await expect(oauth.processClientCredentialsResponse(as, pub, refused)).rejects.toMatchObject({ error: 'unauthorized_client' });
  });
});

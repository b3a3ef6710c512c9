import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActing } from '../../src/core/acting.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addResourceServer } from '../../src/modules/resource-servers/resource-servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sessionCookie } from '../support/consent-browser.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { csrfTokenIn } from '../support/page-agent.js';
import { freePort } from '../support/ports.js';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const MCP = 'https://mcp.example/';

/**
 * Issue #41, RFC 8693: unmodified openid-client 6 on both sides. The agent gets a token for an MCP
 * server (the device flow with `resource`, approved by the person on /activate, whose consent
 * screen lists what the MCP server may also do); the MCP server's app exchanges it with
 * genericGrantRequest for a token of Gatehouse's API and reads the person's servers with it.
 */
describe('openid-client exchanges a resource server’s token for one of Gatehouse’s API (RFC 8693)', () => {
  let t: TestApp;
  let baseUrl: string;
  let person: Person;
  let mcp: TestClient;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    t.clock.set(Date.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    person = await createPerson(t, { username: 'erin', name: 'Erin' });
    const owner = await createPerson(t, { username: 'mcpowner' });
    mcp = await createClient(t, { owner, confidential: true, name: 'Notes MCP', redirectUris: ['http://127.0.0.1/callback'] });
    await addResourceServer(t.services, cliActing(t.clock), mcp.clientId, { identifier: MCP, scopes: ['notes:read'], scopeDescriptions: ['Read your notes'], delegatedScopes: ['identify', 'guilds'] });
  });
  afterAll(async () => t.close());

  /** The person's browser approves the device's request; returns the consent screen it saw. */
  async function approve(verificationUri: string, cookie: string): Promise<string> {
    const page = await fetch(verificationUri, { headers: { cookie }, redirect: 'manual' });
    const markup = await page.text();
    expect(page.status, markup.slice(0, 300)).toBe(200);
    const start = markup.indexOf('<form method="post" action="/activate">');
    const form = markup.slice(start, markup.indexOf('</form>', start));
    const body = new URLSearchParams();
    for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) body.append(name as string, value as string);
    expect(csrfTokenIn(form)).toBeDefined();
    body.append('decision', 'authorize');
    const answer = await fetch(new URL('/activate', baseUrl), { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: new URL(baseUrl).origin }, body });
    expect(answer.status).toBe(200);
    return markup;
  }

  /** The agent's token for the MCP server, as the person approved it. */
  async function subjectToken(): Promise<string> {
    const agentApp = await createClient(t, { owner: person, confidential: false, redirectUris: ['http://127.0.0.1/callback'] });
    const agent = await client.discovery(new URL(baseUrl), agentApp.clientId, {}, client.None(), { execute: [client.allowInsecureRequests] });
    const started = await client.initiateDeviceAuthorization(agent, { scope: 'notes:read', resource: MCP });
    const consent = await approve(started.verification_uri_complete as string, await sessionCookie(t, person.id, 'exchange test'));
    expect(consent).toContain('Notes MCP can also, on your behalf, on Gatehouse:');
    const tokens = await client.pollDeviceAuthorizationGrant(agent, started);
    expect(tokens.scope).toBe('notes:read');
    return tokens.access_token;
  }

  it('genericGrantRequest with the token-exchange grant gets a Bearer access token of the delegated scopes; it reads the person’s servers', async () => {
    const subject = await subjectToken();
    const server = await client.discovery(new URL(baseUrl), mcp.clientId, {}, client.ClientSecretBasic(mcp.clientSecret as string), { execute: [client.allowInsecureRequests] });
    expect(server.serverMetadata().grant_types_supported).toContain(EXCHANGE);
    const exchanged = await client.genericGrantRequest(server, EXCHANGE, { subject_token: subject, subject_token_type: ACCESS_TOKEN, scope: 'identify guilds' });
    expect(exchanged.token_type).toBe('bearer');
    expect(exchanged.access_token).toMatch(/^ghat_/);
    expect(exchanged.issued_token_type).toBe(ACCESS_TOKEN);
    expect(exchanged.scope).toBe('identify servers');
    expect(exchanged.refresh_token).toBeUndefined();
    expect(exchanged.expiresIn()).toBeGreaterThan(0);
    const me = await client.fetchProtectedResource(server, exchanged.access_token, new URL('/api/v1/users/@me', baseUrl), 'GET');
    expect(await me.json()).toMatchObject({ id: person.id, username: 'erin' });
    const guilds = await client.fetchProtectedResource(server, exchanged.access_token, new URL('/api/v1/users/@me/guilds', baseUrl), 'GET');
    expect(guilds.status).toBe(200);
    expect(Array.isArray(await guilds.json())).toBe(true);
  });

  it('a scope the person did not delegate: the library rejects with invalid_scope', async () => {
    const subject = await subjectToken();
    const server = await client.discovery(new URL(baseUrl), mcp.clientId, {}, client.ClientSecretPost(mcp.clientSecret as string), { execute: [client.allowInsecureRequests] });
    await expect(client.genericGrantRequest(server, EXCHANGE, { subject_token: subject, subject_token_type: ACCESS_TOKEN, scope: 'email' })).rejects.toMatchObject({ error: 'invalid_scope' });
  });
});

import * as client from 'openid-client';
import { registerClient } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findApplication } from '../../src/modules/applications/applications.repository.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { freePort } from '../support/ports.js';

/** Issue #41 §3 with unmodified clients against a listening server: openid-client 6 and the MCP SDK. */
describe('dynamic client registration with unmodified clients (issue #41 §3)', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl, GATEHOUSE_CLIENT_REGISTRATION: 'token' } });
    await t.app.listen({ port, host: '127.0.0.1' });
  });
  afterAll(async () => t.close());

  it('openid-client: dynamicClientRegistration with an initial access token, then the registered secret authenticates at the token endpoint', async () => {
    const minted = await runCommand(t, 'apps registration-token', []);
    const config = await client.dynamicClientRegistration(
      new URL(baseUrl),
      { client_name: 'OIDC agent', redirect_uris: ['https://agent.example/cb'], grant_types: ['authorization_code', 'client_credentials'] },
      undefined,
      { execute: [client.allowInsecureRequests], initialAccessToken: minted.registration_token as string },
    );
    const metadata = config.clientMetadata();
    expect(metadata.client_id).toMatch(/^[0-9]+$/);
    expect(metadata.client_secret).toMatch(/^ghcs_/);
    expect(metadata.registration_access_token).toMatch(/^ghra_/);
    expect((await findApplication(t.services.db, metadata.client_id))?.name).toBe('OIDC agent');
    // The registered secret authenticates the client (openid-client's default is client_secret_basic):
    // the grant then asks for a resource server, which a client without one has not (invalid_target, not invalid_client).
    await expect(client.clientCredentialsGrant(config)).rejects.toMatchObject({ error: 'invalid_target' });
  });

  it('openid-client refuses to register without the initial access token (401 invalid_token)', async () => {
    await expect(client.dynamicClientRegistration(new URL(baseUrl), { redirect_uris: ['https://agent.example/cb'] }, undefined, { execute: [client.allowInsecureRequests] })).rejects.toMatchObject({ status: 401 });
  });

  it("the MCP SDK's registerClient registers a public client with a loopback redirect URI", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const open = await createTestApp({ env: { GATEHOUSE_BASE_URL: url, GATEHOUSE_CLIENT_REGISTRATION: 'open' } });
    await open.app.listen({ port, host: '127.0.0.1' });
    try {
      const metadata = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as Parameters<typeof registerClient>[1]['metadata'];
      // The SDK posts to the metadata's registration_endpoint.
      const info = await registerClient(url, {
        metadata,
        clientMetadata: { client_name: 'MCP agent', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
      });
      expect(info.client_id).toMatch(/^[0-9]+$/);
      expect(info.client_secret).toBeUndefined();
      expect((await findApplication(open.services.db, info.client_id))?.confidential).toBe(false);
    } finally {
      await open.close();
    }
  });
});

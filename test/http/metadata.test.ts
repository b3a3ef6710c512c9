import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: 'https://auth.example.com' } });
  });
  afterAll(async () => t.close());

  it('H1: answers 200 application/json', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('H2, H3, B1, H4: issuer is the base URL exactly; endpoints, scopes, grant types, auth methods, S256 and iss support are advertised', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(res.json()).toEqual({
      issuer: 'https://auth.example.com',
      authorization_endpoint: 'https://auth.example.com/app/oauth2/authorize',
      token_endpoint: 'https://auth.example.com/api/oauth2/token',
      revocation_endpoint: 'https://auth.example.com/api/oauth2/token/revoke',
      introspection_endpoint: 'https://auth.example.com/api/oauth2/token/introspect',
      device_authorization_endpoint: 'https://auth.example.com/api/oauth2/device/authorize',
      jwks_uri: 'https://auth.example.com/.well-known/jwks.json',
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      scopes_supported: ['openid', 'profile', 'identify', 'email', 'servers', 'bot', 'applications.commands', 'webhook.incoming'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: 'https://auth.example.com/api/docs',
    });
  });

  it('H3: no claim is an empty list (RFC 8414 §3.2)', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json() as Record<string, unknown>;
    for (const value of Object.values(body)) if (Array.isArray(value)) expect(value.length).toBeGreaterThan(0);
  });

  it('I3: neither implicit nor password grants are advertised', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json() as Record<string, string[]>;
    expect(body['response_types_supported']).not.toContain('token');
    expect(body['grant_types_supported']).not.toContain('password');
    expect(body['grant_types_supported']).not.toContain('implicit');
  });
});

describe('RFC 8414 with a base URL that has a path', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: 'https://example.com/gatehouse/' } });
  });
  afterAll(async () => t.close());

  it('H1: the well-known segment goes between host and path, and the issuer keeps the path', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server/gatehouse' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ issuer: 'https://example.com/gatehouse', token_endpoint: 'https://example.com/gatehouse/api/oauth2/token' });
    const plain = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(plain.json()).toMatchObject({ issuer: 'https://example.com/gatehouse' });
  });
});

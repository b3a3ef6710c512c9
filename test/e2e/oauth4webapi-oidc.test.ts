import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/core/clock.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { browse, sessionCookie as sessionCookieOf } from '../support/consent-browser.js';
import { expectedAtHash, tamper } from '../support/oidc-browser.js';
import { freePort } from '../support/ports.js';

/**
 * Issue #22 "Done when": oauth4webapi's OpenID Connect functions against a listening server —
 * discovery in `oidc` mode, nonce, PKCE, processAuthorizationCodeResponse with requireIdToken,
 * validateApplicationLevelSignature (the JWS against the JWKS), getValidatedIdTokenClaims, UserInfo;
 * and tampered, wrong-audience and expired ID tokens refused.
 */
describe('oauth4webapi validates Gatehouse ID tokens (OpenID Connect)', () => {
  let t: TestApp;
  let baseUrl: string;
  let person: Person;
  let as: oauth.AuthorizationServer;
  const insecure = { [oauth.allowInsecureRequests]: true } as const;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    t.clock.set(Date.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    person = await createPerson(t, { username: 'piet', name: 'Piet' });
    const issuer = new URL(baseUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }));
  });
  afterAll(async () => t.close());

  async function cookie(): Promise<string> {
    return await sessionCookieOf(t, person.id, 'oauth4webapi oidc');
  }

  /** The code exchange's raw Response, and what the client expects of it. */
  async function exchange(app: TestClient, scope = 'openid identify email') {
    const client: oauth.Client = { client_id: app.clientId };
    const clientAuth = oauth.ClientSecretPost(app.clientSecret as string);
    const verifier = oauth.generateRandomCodeVerifier();
    const nonce = oauth.generateRandomNonce();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    for (const [k, v] of Object.entries({ client_id: app.clientId, redirect_uri: app.redirectUri, response_type: 'code', scope, nonce, state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) {
      url.searchParams.set(k, v);
    }
    const params = oauth.validateAuthResponse(as, client, await browse(baseUrl, await cookie(), url), state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, app.redirectUri, verifier, insecure);
    return { client, response, nonce };
  }

  /** The same response with its id_token replaced. */
  async function withIdToken(response: Response, replace: (jws: string) => string): Promise<Response> {
    const body = (await response.json()) as Record<string, unknown>;
    body['id_token'] = replace(body['id_token'] as string);
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  }

  it('discovery in oidc mode: the OpenID configuration agrees with the RFC 8414 document', async () => {
    expect(as.issuer).toBe(baseUrl);
    const rfc8414 = (await (await fetch(`${baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    for (const [name, value] of Object.entries(rfc8414)) expect(as[name], name).toEqual(value);
    expect(as.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256']);
  });

  it('code flow: signature valid against the JWKS, iss, aud, nonce, exp, at_hash; UserInfo for the same sub', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://o4w.example.com/cb'] });
    const { client, response, nonce } = await exchange(app);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
    await oauth.validateApplicationLevelSignature(as, response, insecure);
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    expect(claims).toMatchObject({ iss: baseUrl, aud: app.clientId, sub: person.id, nonce, preferred_username: 'piet' });
    expect(claims?.exp).toBeGreaterThan(Date.now() / 1000);
    expect(claims?.['at_hash']).toBe(expectedAtHash(tokens.access_token));

    const info = await oauth.processUserInfoResponse(as, client, person.id, await oauth.userInfoRequest(as, client, tokens.access_token, insecure));
    expect(info).toMatchObject({ sub: person.id, preferred_username: 'piet', email: 'piet@example.com' });
  });

  it('a tampered ID token fails validateApplicationLevelSignature', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://o4w.example.com/tampered'] });
    const { client, response, nonce } = await exchange(app);
    const tampered = await withIdToken(response, tamper);
    await oauth.processAuthorizationCodeResponse(as, client, tampered, { expectedNonce: nonce, requireIdToken: true });
    await expect(oauth.validateApplicationLevelSignature(as, tampered, insecure)).rejects.toMatchObject({ code: 'OAUTH_INVALID_RESPONSE', message: expect.stringMatching(/signature/) });
  });

  it('an ID token for another application fails the aud check', async () => {
    const other = await createClient(t, { owner: person, redirectUris: ['https://o4w.example.com/other'] });
    const theirs = (await (await exchange(other, 'openid')).response.json()) as { id_token: string };
    const app = await createClient(t, { owner: person, redirectUris: ['https://o4w.example.com/aud'] });
    const { client, response, nonce } = await exchange(app, 'openid');
    const swapped = await withIdToken(response, () => theirs.id_token);
    await expect(oauth.processAuthorizationCodeResponse(as, client, swapped, { expectedNonce: nonce, requireIdToken: true })).rejects.toMatchObject({ code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' });
  });

  it('an expired ID token fails the exp check', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://o4w.example.com/expired'] });
    t.clock.set(Date.now() - 2 * HOUR);
    try {
      const { client, response, nonce } = await exchange(app, 'openid');
      await expect(oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true })).rejects.toMatchObject({ code: 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' });
    } finally {
      t.clock.set(Date.now());
    }
  });

  it('a wrong nonce fails the nonce check', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://o4w.example.com/nonce'] });
    const { client, response } = await exchange(app, 'openid');
    await expect(oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: 'another-nonce', requireIdToken: true })).rejects.toMatchObject({ code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' });
  });
});

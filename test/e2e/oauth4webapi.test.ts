import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { browse, sessionCookie as sessionCookieOf } from '../support/consent-browser.js';
import { freePort } from '../support/ports.js';

/**
 * An independent standards client (oauth4webapi, RFC-strict) against a listening server: RFC 8414
 * discovery, the real consent form, PKCE, the three client authentication methods, two refreshes,
 * revocation, and the identity endpoint refusing the revoked token.
 */

describe('oauth4webapi completes the flow against a listening server', () => {
  let t: TestApp;
  let baseUrl: string;
  let person: Person;
  let sessionCookie: string;
  let as: oauth.AuthorizationServer;
  const insecure = { [oauth.allowInsecureRequests]: true } as const;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    await t.app.listen({ port, host: '127.0.0.1' });
    person = await createPerson(t, { username: 'erin', name: 'Erin' });
    sessionCookie = await sessionCookieOf(t, person.id, 'oauth4webapi test');

    const issuer = new URL(baseUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  });
  afterAll(async () => t.close());

  /** Authorize with PKCE (and state), consent, validate the redirect (state, iss), exchange the code. */
  async function authorize(app: TestClient, clientAuth: oauth.ClientAuth, scope = 'identify email') {
    const client: oauth.Client = { client_id: app.clientId };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    url.searchParams.set('client_id', app.clientId);
    url.searchParams.set('redirect_uri', app.redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', scope);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    // A second authorization of the same app skips the screen (remembered consent) and redirects at once.
    const callback = await consentOrRedirect(url);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, app.redirectUri, verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    return { client, tokens };
  }

  async function consentOrRedirect(url: URL): Promise<URL> {
    const first = await fetch(url, { headers: { cookie: sessionCookie }, redirect: 'manual' });
    const location = first.headers.get('location');
    if (first.status === 302 && location) return new URL(location);
    await first.body?.cancel();
    return browse(baseUrl, sessionCookie, url);
  }

  async function me(accessToken: string): Promise<Response> {
    return oauth.protectedResourceRequest(accessToken, 'GET', new URL('/api/v1/users/@me', baseUrl), new Headers(), null, insecure);
  }

  it('discovers the server via RFC 8414 with the issuer it was configured with', () => {
    expect(as.issuer).toBe(baseUrl);
    expect(as.token_endpoint).toBe(`${baseUrl}/api/oauth2/token`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('a public client with PKCE: code exchange, two refreshes, revocation, then /users/@me answers 401', async () => {
    const app = await createClient(t, { owner: person, confidential: false, redirectUris: ['http://127.0.0.1/callback'] });
    const clientAuth = oauth.None();
    const { client, tokens } = await authorize(app, clientAuth);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('identify email');

    const meResponse = await me(tokens.access_token);
    expect(meResponse.status).toBe(200);
    expect(await meResponse.json()).toMatchObject({ id: person.id, username: 'erin', email: 'erin@example.com' });

    const first = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token as string, insecure));
    expect(first.refresh_token).not.toBe(tokens.refresh_token);
    const second = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, first.refresh_token as string, insecure));
    expect(second.access_token).not.toBe(first.access_token);
    expect((await me(second.access_token)).status).toBe(200);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, second.refresh_token as string, insecure));
    await expect(me(second.access_token)).rejects.toSatisfy((error: unknown) => {
      if (!(error instanceof oauth.WWWAuthenticateChallengeError)) return false;
      return error.cause[0]?.scheme === 'bearer' && error.cause[0]?.parameters.error === 'invalid_token' && error.response.status === 401;
    });
  });

  it('a confidential client with client_secret_basic', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://server.example.com/oauth/callback'] });
    const clientAuth = oauth.ClientSecretBasic(app.clientSecret as string);
    const { client, tokens } = await authorize(app, clientAuth, 'identify');
    expect((await me(tokens.access_token)).status).toBe(200);
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token as string, insecure));
    const again = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token as string, insecure));
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, again.access_token, insecure));
    await expect(me(again.access_token)).rejects.toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
  });

  it('a confidential client with client_secret_post', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://post.example.com/oauth/callback'] });
    const clientAuth = oauth.ClientSecretPost(app.clientSecret as string);
    const { client, tokens } = await authorize(app, clientAuth, 'identify servers');
    expect(tokens.scope).toBe('identify servers');
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token as string, insecure));
    const again = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token as string, insecure));
    expect((await me(again.access_token)).status).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, again.refresh_token as string, insecure));
    await expect(me(again.access_token)).rejects.toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
  });

  it('a wrong client secret reaches the library as a 401 Basic challenge with an invalid_client body', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://wrong.example.com/cb'] });
    const client: oauth.Client = { client_id: app.clientId };
    const response = await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretBasic('ghcs_wrong'), 'ghrt_whatever', insecure);
    // A 401 with WWW-Authenticate surfaces as a challenge; the RFC 6749 body is still there.
    await expect(oauth.processRefreshTokenResponse(as, client, response)).rejects.toSatisfy(
      (error: unknown) => error instanceof oauth.WWWAuthenticateChallengeError && error.response.status === 401 && error.cause[0]?.scheme === 'basic',
    );
    const again = await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretBasic('ghcs_wrong'), 'ghrt_whatever', insecure);
    expect(await again.json()).toMatchObject({ error: 'invalid_client' });
  });
});

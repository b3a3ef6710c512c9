import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/core/clock.js';
import type { Person } from '../../src/modules/directory/people.js';
import { NEXT_KEY_LEAD_MS, rotateSigningKeys, RETIRED_KEY_PUBLISHED_MS } from '../../src/modules/oidc/oidc-keys.service.js';
import { updateOpenIdClientSettings } from '../../src/modules/oidc/oidc.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { browse, sessionCookie as sessionCookieOf } from '../support/consent-browser.js';
import { expectedAtHash, jwsHeader, tamper } from '../support/oidc-browser.js';
import { freePort } from '../support/ports.js';
import { operatorActing } from '../support/acting.js';
import { markEmailVerified } from '../../src/modules/accounts/email-verification.service.js';

/**
 * Issue #22 "Done when": unmodified openid-client v6 in OIDC mode against a listening server —
 * discovery(), nonce, PKCE, ID-token validation (signature against the JWKS, iss, aud, nonce,
 * exp), UserInfo, refresh, the end-session URL; and the negative cases the library must refuse.
 */
describe('openid-client signs a person in through Gatehouse (OpenID Connect)', () => {
  let t: TestApp;
  let baseUrl: string;
  let person: Person;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    // The library checks exp and iat against its own clock.
    t.clock.set(Date.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    person = await createPerson(t, { username: 'olive', name: 'Olive', avatarUrl: 'https://cdn.example.com/olive.png' });
  });
  afterAll(async () => t.close());

  async function sessionCookie(): Promise<string> {
    return sessionCookieOf(t, person.id, 'openid-client test');
  }

  async function configFor(app: TestClient, extra: Partial<client.ClientMetadata> = {}, fetchImpl?: client.CustomFetch): Promise<client.Configuration> {
    const auth = app.clientSecret ? client.ClientSecretBasic(app.clientSecret) : client.None();
    // enableNonRepudiationChecks: the library verifies ID token signatures against the JWKS
    // (by default it trusts the token endpoint's TLS, Core §3.1.3.7 item 6).
    return client.discovery(new URL(baseUrl), app.clientId, { ...extra }, auth, {
      execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
      ...(fetchImpl ? { [client.customFetch]: fetchImpl } : {}),
    });
  }

  /** Authorization request with nonce, state and PKCE; the browser consents; the library exchanges and validates. */
  async function signIn(config: client.Configuration, app: TestClient, cookie: string, scope = 'openid identify email', extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope,
      nonce,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    });
    const callback = await browse(baseUrl, cookie, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
    return { tokens, nonce };
  }

  it('discovery() reads /.well-known/openid-configuration: issuer exactly the base URL, PKCE, the JWKS and UserInfo endpoints', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/cb'] });
    const config = await configFor(app);
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(baseUrl);
    expect(metadata.jwks_uri).toBe(`${baseUrl}/.well-known/jwks.json`);
    expect(metadata.userinfo_endpoint).toBe(`${baseUrl}/api/oauth2/userinfo`);
    expect(metadata.end_session_endpoint).toBe(`${baseUrl}/app/oauth2/logout`);
    expect(config.serverMetadata().supportsPKCE()).toBe(true);
  });

  it('code flow with nonce and PKCE: a validated RS256 ID token (the default) with the claims the scopes allow, UserInfo, refresh, end session', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/callback'] });
    await updateOpenIdClientSettings(t.services, operatorActing(), app.app.id, { postLogoutRedirectUris: ['https://rp.example.com/signed-out'] });
    const config = await configFor(app);
    const cookie = await sessionCookie();
    const { tokens, nonce } = await signIn(config, app, cookie);

    const claims = tokens.claims();
    if (!claims) throw new Error('no ID token');
    expect(claims).toMatchObject({
      iss: baseUrl,
      sub: person.id,
      aud: app.clientId,
      nonce,
      name: 'Olive',
      preferred_username: 'olive',
      picture: 'https://cdn.example.com/olive.png',
      email: 'olive@example.com',
      email_verified: false,
    });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(typeof claims.auth_time).toBe('number');
    expect(claims['at_hash']).toBe(expectedAtHash(tokens.access_token));
    const header = jwsHeader(tokens.id_token as string);
    expect(header['alg']).toBe('RS256');
    const jwks = (await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toContain(header['kid']);

    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: person.id, name: 'Olive', preferred_username: 'olive', email: 'olive@example.com', email_verified: false });

    // Core §12.2: a refresh returns a new ID token with the same sub and auth_time; the library validates it against the first.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    const again = refreshed.claims();
    expect(again?.sub).toBe(claims.sub);
    expect(again?.auth_time).toBe(claims.auth_time);
    expect(again?.['at_hash']).toBe(expectedAtHash(refreshed.access_token));

    // RP-Initiated Logout: the hint names the signed-in person, so the session ends and the browser goes back with state.
    const end = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token as string, post_logout_redirect_uri: 'https://rp.example.com/signed-out', state: 'bye-1' });
    const logout = await fetch(end, { headers: { cookie }, redirect: 'manual' });
    expect(logout.status).toBe(303);
    expect(logout.headers.get('location')).toBe('https://rp.example.com/signed-out?state=bye-1');
    // The session is over: the next authorization asks for a sign-in.
    const after = await fetch(client.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, scope: 'openid', nonce: 'n', state: 's' }), { headers: { cookie }, redirect: 'manual' });
    expect(after.headers.get('location')).toMatch(/^\/login\?next=/);
  });

  it('issue #36 §6: a relying party holding the registration default id_token_signed_response_alg RS256 signs in with a public client that chose nothing', async () => {
    const app = await createClient(t, { owner: person, confidential: false, redirectUris: ['http://127.0.0.1/callback'] });
    // Dynamic Client Registration §2's default, which many libraries apply unless told otherwise.
    const config = await configFor(app, { id_token_signed_response_alg: 'RS256' });
    const { tokens } = await signIn(config, app, await sessionCookie(), 'openid');
    expect(jwsHeader(tokens.id_token as string)['alg']).toBe('RS256');
    // Only openid: no profile claims.
    expect(tokens.claims()).not.toHaveProperty('email');
    expect(tokens.claims()).not.toHaveProperty('name');
  });

  it('an app that chose ES256 gets ES256 ID tokens, validated by a library told to expect ES256', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/es256'] });
    await updateOpenIdClientSettings(t.services, operatorActing(), app.app.id, { idTokenAlg: 'ES256' });
    const { tokens } = await signIn(await configFor(app, { id_token_signed_response_alg: 'ES256' }), app, await sessionCookie(), 'openid');
    expect(jwsHeader(tokens.id_token as string)['alg']).toBe('ES256');
  });

  /** A customFetch that swaps the token response's id_token, as an attacker in the middle would. */
  function swapIdToken(replace: (idToken: string) => string): client.CustomFetch {
    return async (url, options) => {
      const response = await fetch(url, options as RequestInit);
      if (!url.endsWith('/api/oauth2/token')) return response;
      const body = (await response.json()) as Record<string, unknown>;
      if (typeof body['id_token'] === 'string') body['id_token'] = replace(body['id_token']);
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
  }

  /** The library's error: its code, and the messages and claim names down its cause chain. */
  async function refusal(promise: Promise<unknown>): Promise<{ code: unknown; trail: string }> {
    try {
      await promise;
    } catch (error) {
      const trail: string[] = [];
      for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
        const item = e as { message?: unknown; claim?: unknown };
        if (typeof item.message === 'string') trail.push(item.message);
        if (typeof item.claim === 'string') trail.push(`claim=${item.claim}`);
      }
      return { code: (error as { code?: unknown }).code, trail: trail.join(' | ') };
    }
    throw new Error('the library accepted the ID token');
  }

  it('a tampered ID token fails the library’s signature check', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/tampered'] });
    const config = await configFor(app, {}, swapIdToken(tamper));
    const error = await refusal(signIn(config, app, await sessionCookie()));
    expect(error.code).toBe('OAUTH_INVALID_RESPONSE');
    expect(error.trail).toMatch(/signature/i);
  });

  it('an ID token issued to another application fails the library’s audience check', async () => {
    const other = await createClient(t, { owner: person, redirectUris: ['https://other.example.com/cb'] });
    const otherConfig = await configFor(other);
    const { tokens: othersTokens } = await signIn(otherConfig, other, await sessionCookie(), 'openid');
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/aud'] });
    const config = await configFor(app, {}, swapIdToken(() => othersTokens.id_token as string));
    const error = await refusal(signIn(config, app, await sessionCookie(), 'openid'));
    expect(error.code).toBe('OAUTH_JWT_CLAIM_COMPARISON_FAILED');
    expect(error.trail).toContain('claim=aud');
  });

  it('an expired ID token fails the library’s exp check', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/expired'] });
    const config = await configFor(app);
    const cookie = await sessionCookie();
    // The server's clock two hours behind: everything it issues expired an hour ago for the library.
    t.clock.set(Date.now() - 2 * HOUR);
    try {
      const error = await refusal(signIn(config, app, cookie, 'openid'));
      expect(error.code).toBe('OAUTH_JWT_TIMESTAMP_CHECK_FAILED');
      expect(error.trail).toContain('claim=exp');
    } finally {
      t.clock.set(Date.now());
    }
  });

  it('prompt=none without a session: the library sees login_required on the redirect', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/none'] });
    const config = await configFor(app);
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, scope: 'openid', prompt: 'none', state, nonce: 'n-1', code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
    const callback = await browse(baseUrl, undefined, url);
    expect(callback.origin + callback.pathname).toBe(app.redirectUri);
    await expect(client.authorizationCodeGrant(config, callback, { expectedState: state, expectedNonce: 'n-1' })).rejects.toMatchObject({ error: 'login_required', name: 'AuthorizationResponseError' });
  });

  it('max_age=0 sends a signed-in person to sign in again', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/max-age'] });
    const config = await configFor(app);
    const url = client.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, scope: 'openid', max_age: '0', nonce: 'n', state: 's' });
    const cookie = await sessionCookie();
    t.clock.advance(2000);
    const landing = await browse(baseUrl, cookie, url);
    expect(landing.pathname).toBe('/login');
    t.clock.set(Date.now());
  });

  it('key rotation: the library keeps the JWKS it fetched and signs in right after `keys rotate`; once the new key signs, a fresh JWKS validates it; a token signed before validates until it expires', async () => {
    const app = await createClient(t, { owner: person, redirectUris: ['https://rp.example.com/rotate'] });
    const config = await configFor(app);
    const before = (await signIn(config, app, await sessionCookie(), 'openid')).tokens.id_token as string;
    const rotated = await rotateSigningKeys(t.services, operatorActing());
    const rs = rotated.find((r) => r.alg === 'RS256');
    expect(rs?.retired).toContain(jwsHeader(before)['kid']);

    // Issue #36 §6: the same Configuration holds the key set it fetched before the rotation
    // (oauth4webapi refetches on an unknown kid only after 60 s, and keeps a set for 300 s).
    const soon = (await signIn(config, app, await sessionCookie(), 'openid')).tokens.id_token as string;
    expect(jwsHeader(soon)['kid']).toBe(jwsHeader(before)['kid']);

    t.clock.advance(NEXT_KEY_LEAD_MS);
    const after = (await signIn(await configFor(app), app, await sessionCookie(), 'openid')).tokens.id_token as string;
    expect(jwsHeader(after)['kid']).toBe(rs?.kid);
    expect(jwsHeader(after)['kid']).not.toBe(jwsHeader(before)['kid']);

    // A verifier that fetches the JWKS now (after the rotation) accepts both.
    const keys = createRemoteJWKSet(new URL(`${baseUrl}/.well-known/jwks.json`));
    for (const token of [before, after]) {
      const { payload } = await jwtVerify(token, keys, { issuer: baseUrl, audience: app.clientId });
      expect(payload.sub).toBe(person.id);
    }
    // Once every token the old key signed has expired, it is no longer published.
    t.clock.advance(RETIRED_KEY_PUBLISHED_MS + 61_000);
    const later = (await (await fetch(`${baseUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(later.keys.map((k) => k.kid)).not.toContain(jwsHeader(before)['kid']);
    expect(later.keys.map((k) => k.kid)).toContain(jwsHeader(after)['kid']);
    t.clock.set(Date.now());
  });

  it('issue #38 §2: once the address is verified (gatehouse people verify-email), the library reads email_verified: true in the ID token and UserInfo', async () => {
    const vic = await createPerson(t, { username: 'vic', name: 'Vic' });
    await markEmailVerified(t.services, operatorActing(), 'vic');
    const app = await createClient(t, { owner: vic, redirectUris: ['https://rp.example.com/verified'] });
    const config = await configFor(app);
    const { tokens } = await signIn(config, app, await sessionCookieOf(t, vic.id, 'openid-client test'));
    const claims = tokens.claims();
    expect(claims).toMatchObject({ sub: vic.id, email: vic.email, email_verified: true });
    const info = await client.fetchUserInfo(config, tokens.access_token, vic.id);
    expect(info).toMatchObject({ email: vic.email, email_verified: true });
  });
});

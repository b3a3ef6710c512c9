import * as client from 'openid-client';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '../../src/core/clock.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { confirmTotp, startTotpEnrolment } from '../../src/modules/mfa/mfa.service.js';
import { ANONYMOUS, actingOf, personActingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { browse } from '../support/consent-browser.js';
import { createClient, type TestClient } from '../support/oauth-factory.js';
import { PageAgent } from '../support/page-agent.js';
import { freePort } from '../support/ports.js';

const PASSWORD = 'correct horse battery';

/**
 * Issue #38 §4 "Claims and fields": openid-client 6 reads amr (RFC 8176) and acr from the ID token
 * of a sign-in made with a password and a TOTP code; prompt=login asks for both again.
 */
describe('second factors in the ID token', () => {
  let t: TestApp;
  let baseUrl: string;
  let owner: Person;
  let app: TestClient;
  let config: client.Configuration;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: baseUrl } });
    // The library checks exp and iat against its own clock.
    t.clock.set(Date.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    owner = await registerPerson(t.services, actingOf(ANONYMOUS), { username: 'rp.owner', password: PASSWORD });
    app = await createClient(t, { owner, redirectUris: ['https://rp.example.com/cb'] });
    config = await client.discovery(new URL(baseUrl), app.clientId, {}, client.ClientSecretBasic(app.clientSecret as string), { execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks] });
  });
  afterAll(async () => t.close());

  async function enrol(username: string): Promise<{ person: Person; secret: string }> {
    const person = await registerPerson(t.services, actingOf(ANONYMOUS), { username, password: PASSWORD });
    const { secret } = await startTotpEnrolment(t.services, personActingOf(person.id));
    await confirmTotp(t.services, personActingOf(person.id), codeAt(secret));
    t.clock.advance(30 * SECOND);
    return { person, secret };
  }

  function codeAt(secret: string): string {
    return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: t.clock.now() });
  }

  /** Signs in through the pages (password, then the code when asked); the session cookie. */
  async function signInThroughPages(username: string, secret?: string): Promise<string> {
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/login', '/login', { username, password: PASSWORD });
    expect(res.statusCode).toBe(303);
    if (secret !== undefined) {
      expect(res.headers.location).toBe('/login/second-factor');
      const done = await agent.submit('/login/second-factor', '/login/second-factor', { code: codeAt(secret) });
      expect(done.statusCode, done.body).toBe(303);
    }
    return `gh_session=${agent.cookies.get('gh_session') as string}`;
  }

  async function authorize(cookie: string, extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope: 'openid identify',
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    });
    const callback = await browse(baseUrl, cookie, url);
    return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
  }

  it('a password and TOTP sign-in gives amr ["pwd","otp","mfa"], and acr when acr_values asked for two factors', async () => {
    const { secret } = await enrol('two.factor.tess');
    const cookie = await signInThroughPages('two.factor.tess', secret);
    const tokens = await authorize(cookie, { acr_values: 'urn:gatehouse:mfa' });
    expect(tokens.claims()?.['amr']).toEqual(['pwd', 'otp', 'mfa']);
    expect(tokens.claims()?.['acr']).toBe('urn:gatehouse:mfa');
    // Core §12.2: a refreshed ID token repeats how the person signed in.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.claims()?.['amr']).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('a password-only sign-in gives amr ["pwd"] and no acr, even when acr_values asked for two factors', async () => {
    await registerPerson(t.services, actingOf(ANONYMOUS), { username: 'password.only', password: PASSWORD });
    const cookie = await signInThroughPages('password.only');
    const tokens = await authorize(cookie, { acr_values: 'http://schemas.openid.net/pape/policies/2007/06/multi-factor' });
    expect(tokens.claims()?.['amr']).toEqual(['pwd']);
    expect(tokens.claims()?.['acr']).toBeUndefined();
  });

  it('discovery lists amr and acr among the claims, and the acr values supported', async () => {
    const metadata = config.serverMetadata();
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['amr', 'acr']));
    expect(metadata.acr_values_supported).toEqual(['urn:gatehouse:mfa', 'http://schemas.openid.net/pape/policies/2007/06/multi-factor']);
  });

  it('prompt=login asks for the password and the second factor again', async () => {
    const { secret } = await enrol('prompt.login.pat');
    const agent = new PageAgent(t.app);
    const first = await agent.submit('/login', '/login', { username: 'prompt.login.pat', password: PASSWORD });
    expect(first.headers.location).toBe('/login/second-factor');
    expect((await agent.submit('/login/second-factor', '/login/second-factor', { code: codeAt(secret) })).statusCode).toBe(303);
    t.clock.advance(30 * SECOND);
    const url = client.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, scope: 'openid identify', nonce: 'n-1', prompt: 'login', code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
    const asked = await agent.get(`${url.pathname}${url.search}`);
    expect(asked.statusCode).toBe(303);
    const loginUrl = String(asked.headers.location);
    expect(loginUrl).toMatch(/^\/login\?next=/);
    const next = new URL(loginUrl, baseUrl).searchParams.get('next') as string;
    const password = await agent.submit(loginUrl, '/login', { username: 'prompt.login.pat', password: PASSWORD, next });
    expect(password.statusCode).toBe(303);
    expect(String(password.headers.location)).toBe(`/login/second-factor?next=${encodeURIComponent(next)}`);
    const code = await agent.submit(String(password.headers.location), '/login/second-factor', { code: codeAt(secret), next });
    expect(code.statusCode).toBe(303);
    expect(code.headers.location).toBe(next);
  });

  it('max_age older than the sign-in asks for the password and the second factor again', async () => {
    const { secret } = await enrol('max.age.max');
    const agent = new PageAgent(t.app);
    await agent.submit('/login', '/login', { username: 'max.age.max', password: PASSWORD });
    expect((await agent.submit('/login/second-factor', '/login/second-factor', { code: codeAt(secret) })).statusCode).toBe(303);
    t.clock.advance(120 * SECOND);
    const url = client.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, scope: 'openid identify', nonce: 'n-2', max_age: '60', code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
    const asked = await agent.get(`${url.pathname}${url.search}`);
    expect(asked.statusCode).toBe(303);
    const loginUrl = String(asked.headers.location);
    const next = new URL(loginUrl, baseUrl).searchParams.get('next') as string;
    const password = await agent.submit(loginUrl, '/login', { username: 'max.age.max', password: PASSWORD, next });
    expect(String(password.headers.location)).toBe(`/login/second-factor?next=${encodeURIComponent(next)}`);
  });
});

import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE, SECOND } from '../../src/core/clock.js';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Person } from '../../src/modules/directory/people.js';
import { updateOpenIdClientSettings } from '../../src/modules/oidc/oidc.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PageAgent } from '../support/page-agent.js';
import { postForm } from '../support/oauth-factory.js';
import { answerConsent, authorizePath, consentFields, createApp, freshPkce, ISSUER, location, requestFor, signedIn } from './authorize.fixtures.js';
import { operatorActing } from '../support/acting.js';

/** Issue #22: OpenID Connect over the authorization code flow, through app.inject(). */
describe('OpenID Connect (issue #22)', () => {
  let t: TestApp;
  let owner: Person;
  let app: Application;

  beforeAll(async () => {
    t = await createTestApp();
    ({ person: owner } = await signedIn(t, 'oidc_owner'));
    ({ app } = await createApp(t, owner, { name: 'Relying Party', redirectUris: ['https://rp.example/cb'] }));
  });
  afterAll(async () => t.close());

  /** An openid authorization request with a fresh PKCE pair; returns the path and the verifier. */
  function openIdRequest(overrides: Record<string, string | undefined> = {}) {
    const pkce = freshPkce();
    const path = authorizePath(requestFor(app, { scope: 'openid identify email', nonce: 'n-0S6_WzA2Mj', code_challenge: pkce.challenge, ...overrides }));
    return { path, verifier: pkce.verifier };
  }

  async function exchange(code: string, verifier: string): Promise<Record<string, unknown>> {
    const res = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: 'https://rp.example/cb', client_id: app.id, code_verifier: verifier });
    expect(res.statusCode).toBe(200);
    return res.json() as Record<string, unknown>;
  }

  /** Consent (when the screen shows) and exchange: the token response. */
  async function signIn(agent: PageAgent, overrides: Record<string, string | undefined> = {}): Promise<Record<string, unknown>> {
    const { path, verifier } = openIdRequest(overrides);
    const first = await agent.get(path);
    const res = first.statusCode === 200 ? await answerConsent(agent, path, 'authorize') : first;
    const code = location(res).searchParams.get('code');
    if (!code) throw new Error(`no code: ${res.headers['location']}`);
    return exchange(code, verifier);
  }

  function redirectError(res: LightMyRequestResponse): { error: string | null; state: string | null; iss: string | null } {
    const to = location(res);
    expect(to.origin + to.pathname).toBe('https://rp.example/cb');
    return { error: to.searchParams.get('error'), state: to.searchParams.get('state'), iss: to.searchParams.get('iss') };
  }

  describe('discovery and keys', () => {
    it('GET /.well-known/openid-configuration lists every supported value and agrees with the RFC 8414 document', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
      expect(res.statusCode).toBe(200);
      const doc = res.json() as Record<string, unknown>;
      expect(doc).toMatchObject({
        issuer: ISSUER,
        jwks_uri: `${ISSUER}/.well-known/jwks.json`,
        userinfo_endpoint: `${ISSUER}/api/oauth2/userinfo`,
        end_session_endpoint: `${ISSUER}/app/oauth2/logout`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        code_challenge_methods_supported: ['S256'],
        prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
        claims_parameter_supported: false,
        request_parameter_supported: false,
        request_uri_parameter_supported: false,
      });
      expect(doc['scopes_supported']).toContain('openid');
      expect(doc['claims_supported']).toEqual(expect.arrayContaining(['sub', 'iss', 'auth_time', 'nonce', 'at_hash', 'email', 'email_verified', 'name', 'preferred_username', 'picture']));
      const rfc8414 = (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json() as Record<string, unknown>;
      for (const [name, value] of Object.entries(rfc8414)) expect(doc[name], name).toEqual(value);
    });

    it('GET /.well-known/jwks.json: one ES256 and one RS256 public key, each with kid, alg and use, no private part', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      expect(res.statusCode).toBe(200);
      const { keys } = res.json() as { keys: Record<string, unknown>[] };
      expect(keys.map((k) => k['alg']).sort()).toEqual(['ES256', 'RS256']);
      for (const key of keys) {
        expect(key).toMatchObject({ use: 'sig', kid: expect.any(String) });
        for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
      }
    });
  });

  describe('ID token in the token response', () => {
    it('the code exchange of an openid request carries an ID token signed RS256 for an app that chose nothing (Core §3.1.3.7): iss, sub, aud, exp, iat, auth_time, nonce, at_hash and the claims of identify and email', async () => {
      const { agent, person } = await signedIn(t);
      const signedInAt = t.clock.now();
      t.clock.advance(5 * SECOND);
      const tokens = await signIn(agent);
      expect(tokens['scope']).toBe('openid identify email');
      const claims = decodeJwt(tokens['id_token'] as string);
      expect(claims).toMatchObject({
        iss: ISSUER,
        sub: person.id,
        aud: app.id,
        iat: Math.floor(t.clock.now() / 1000),
        exp: Math.floor(t.clock.now() / 1000) + 3600,
        auth_time: Math.floor(signedInAt / 1000),
        nonce: 'n-0S6_WzA2Mj',
        name: person.name,
        preferred_username: person.username,
        email: person.email,
        email_verified: false,
      });
      expect(claims['at_hash']).toEqual(expect.any(String));
      expect(decodeProtectedHeader(tokens['id_token'] as string)).toMatchObject({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    });

    it('without openid the token response is exactly as before: no id_token', async () => {
      const { agent } = await signedIn(t);
      const tokens = await signIn(agent, { scope: 'identify', nonce: undefined });
      expect(Object.keys(tokens).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    });

    it('a refresh of an openid grant returns a new ID token with the same sub and auth_time and no nonce; narrowed without openid, none', async () => {
      const { agent } = await signedIn(t);
      const first = await signIn(agent);
      const original = decodeJwt(first['id_token'] as string);
      t.clock.advance(10 * MINUTE);
      const res = await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: first['refresh_token'] as string, client_id: app.id });
      expect(res.statusCode).toBe(200);
      const refreshed = decodeJwt((res.json() as { id_token: string }).id_token);
      expect(refreshed.sub).toBe(original.sub);
      expect(refreshed['auth_time']).toBe(original['auth_time']);
      expect(refreshed.iat).toBe((original.iat as number) + 600);
      expect(refreshed).not.toHaveProperty('nonce');
      const narrowed = await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: (res.json() as { refresh_token: string }).refresh_token, client_id: app.id, scope: 'identify' });
      expect(narrowed.statusCode).toBe(200);
      expect(narrowed.json()).not.toHaveProperty('id_token');
    });

    it('an app that chose ES256 gets ES256 ID tokens', async () => {
      const { app: rsApp } = await createApp(t, owner, { name: 'ES App', redirectUris: ['https://rs.example/cb'] });
      await updateOpenIdClientSettings(t.services, operatorActing(), rsApp.id, { idTokenAlg: 'ES256' });
      const { agent } = await signedIn(t);
      const pkce = freshPkce();
      const path = authorizePath(requestFor(rsApp, { scope: 'openid', code_challenge: pkce.challenge }));
      const code = location(await answerConsent(agent, path, 'authorize')).searchParams.get('code') as string;
      const res = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: 'https://rs.example/cb', client_id: rsApp.id, code_verifier: pkce.verifier });
      expect(decodeProtectedHeader((res.json() as { id_token: string }).id_token).alg).toBe('ES256');
    });

    it('the consent screen names the openid scope and carries the nonce through its form', async () => {
      const { agent } = await signedIn(t);
      const { path } = openIdRequest({ nonce: 'through-the-form' });
      const page = await agent.get(path);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Sign you in with this account and know your account id');
      expect(consentFields(page.body)['nonce']).toBe('through-the-form');
    });
  });

  it('a user install asked with openid keeps its nonce through the install consent form', async () => {
    const { agent } = await signedIn(t);
    const tokens = await signIn(agent, { scope: 'openid applications.commands', nonce: 'install-nonce' });
    expect(decodeJwt(tokens['id_token'] as string)['nonce']).toBe('install-nonce');
  });

  describe('request parameters (Core §3.1.2.1)', () => {
    it('prompt=none without a session redirects login_required with state and iss', async () => {
      const res = await new PageAgent(t.app).get(openIdRequest({ prompt: 'none' }).path);
      expect(res.statusCode).toBe(302);
      expect(redirectError(res)).toEqual({ error: 'login_required', state: 'xyz-state', iss: ISSUER });
    });

    it('issue #36 §4: prompt=none without a session and a loopback redirect_uri on another port than registered is a page of ours, not a redirect', async () => {
      const { app: native } = await createApp(t, owner, { name: 'Native RP', confidential: false, redirectUris: ['http://127.0.0.1/cb'] });
      const path = authorizePath(requestFor(native, { scope: 'openid', prompt: 'none', redirect_uri: 'http://127.0.0.1:53682/cb', code_challenge: freshPkce().challenge }));
      const res = await new PageAgent(t.app).get(path);
      expect(res.statusCode).toBe(400);
      expect(res.headers['location']).toBeUndefined();
      expect(res.body).toContain('you are not signed in');
      // The exactly registered URI still gets login_required, as Core §3.1.2.6 requires.
      const exact = await new PageAgent(t.app).get(authorizePath(requestFor(native, { scope: 'openid', prompt: 'none', redirect_uri: 'http://127.0.0.1/cb', code_challenge: freshPkce().challenge })));
      expect(location(exact).origin + location(exact).pathname).toBe('http://127.0.0.1/cb');
      expect(location(exact).searchParams.get('error')).toBe('login_required');
    });

    it('OAUTH-CHECKLIST A19 holds for openid requests: a signed-out visitor with a broken request is sent to sign in (with login_hint), not redirected', async () => {
      const res = await new PageAgent(t.app).get(openIdRequest({ request: 'x', login_hint: 'someone' }).path);
      expect(res.statusCode).toBe(303);
      expect(res.headers['location']).toMatch(/^\/login\?next=.*&login_hint=someone$/);
    });

    it('prompt=none with a session but no consent yet redirects consent_required; with consent it issues a code at once', async () => {
      const { agent } = await signedIn(t);
      expect(redirectError(await agent.get(openIdRequest({ prompt: 'none' }).path)).error).toBe('consent_required');
      await signIn(agent);
      const res = await agent.get(openIdRequest({ prompt: 'none' }).path);
      expect(location(res).searchParams.get('code')).toMatch(/^ghac_/);
    });

    it('prompt=none with an id_token_hint for someone else redirects login_required; a forged hint is invalid_request', async () => {
      const { agent: bob } = await signedIn(t);
      const bobsToken = (await signIn(bob))['id_token'] as string;
      const { agent: carol } = await signedIn(t);
      await signIn(carol);
      expect(redirectError(await carol.get(openIdRequest({ prompt: 'none', id_token_hint: bobsToken }).path)).error).toBe('login_required');
      const forged = `${bobsToken.slice(0, -4)}AAAA`;
      expect(redirectError(await carol.get(openIdRequest({ prompt: 'none', id_token_hint: forged }).path)).error).toBe('invalid_request');
      const res = await bob.get(openIdRequest({ prompt: 'none', id_token_hint: bobsToken }).path);
      expect(location(res).searchParams.get('code')).toMatch(/^ghac_/);
    });

    it('prompt=none with an install scope is interaction_required', async () => {
      const { agent } = await signedIn(t);
      expect(redirectError(await agent.get(openIdRequest({ prompt: 'none', scope: 'openid applications.commands' }).path)).error).toBe('interaction_required');
    });

    it('max_age=0 forces a fresh sign-in; after signing in on the form the code comes, and auth_time is that sign-in', async () => {
      const agent = new PageAgent(t.app);
      const username = `maxage${Date.now().toString(36)}`;
      await agent.submit('/register', '/register', { username, name: '', email: '', password: 'correct horse battery' });
      t.clock.advance(MINUTE);
      const { path, verifier } = openIdRequest({ max_age: '0', login_hint: username });
      const forced = await agent.get(path);
      expect(forced.statusCode).toBe(303);
      const login = new URL(forced.headers['location'] as string, ISSUER);
      expect(login.pathname).toBe('/login');
      expect(login.searchParams.get('login_hint')).toBe(username);
      // login_hint prefills the username on the sign-in form.
      const form = await agent.get(`${login.pathname}${login.search}`);
      expect(form.body).toMatch(new RegExp(`name="username"[^>]*value="${username}"|value="${username}"[^>]*name="username"`));
      t.clock.advance(SECOND);
      const signInAt = t.clock.now();
      const back = await agent.postRaw(`/login`, { username, password: 'correct horse battery', next: login.searchParams.get('next') as string, _csrf: /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] as string });
      expect(back.statusCode).toBe(303);
      const consent = await answerConsent(agent, back.headers['location'] as string, 'authorize');
      const tokens = await exchange(location(consent).searchParams.get('code') as string, verifier);
      expect(decodeJwt(tokens['id_token'] as string)['auth_time']).toBe(Math.floor(signInAt / 1000));
    });

    it('prompt=login sends a signed-in person to sign in again; without openid prompt=login changes nothing', async () => {
      const { agent } = await signedIn(t);
      const res = await agent.get(openIdRequest({ prompt: 'login' }).path);
      expect(res.statusCode).toBe(303);
      expect(res.headers['location']).toMatch(/^\/login\?next=.*signed_in_after/);
      const plain = await agent.get(authorizePath(requestFor(app, { scope: 'identify', prompt: 'login' })));
      expect(plain.statusCode).toBe(200);
    });

    it('without a nonce, in another scope order, and with display, ui_locales, claims_locales, acr_values and unknown parameters, the request succeeds', async () => {
      const { agent } = await signedIn(t);
      const tokens = await signIn(agent, { scope: 'email openid', nonce: undefined, display: 'popup', ui_locales: 'fr-CA fr', claims_locales: 'de', acr_values: 'urn:mace:incommon:iap:silver', unknown_extension: 'x' });
      const claims = decodeJwt(tokens['id_token'] as string);
      expect(claims).not.toHaveProperty('nonce');
      expect(claims['email']).toEqual(expect.any(String));
    });

    it('request and request_uri are refused with request_not_supported and request_uri_not_supported; claims, registration and response_mode=form_post too', async () => {
      const { agent } = await signedIn(t);
      expect(redirectError(await agent.get(openIdRequest({ request: 'eyJhbGciOiJub25lIn0.e30.' }).path)).error).toBe('request_not_supported');
      expect(redirectError(await agent.get(openIdRequest({ request_uri: 'https://rp.example/req' }).path)).error).toBe('request_uri_not_supported');
      expect(redirectError(await agent.get(openIdRequest({ registration: '{}' }).path)).error).toBe('registration_not_supported');
      expect(redirectError(await agent.get(openIdRequest({ claims: '{"userinfo":{}}' }).path)).error).toBe('invalid_request');
      expect(redirectError(await agent.get(openIdRequest({ response_mode: 'form_post' }).path)).error).toBe('invalid_request');
      expect(redirectError(await agent.get(openIdRequest({ max_age: 'soon' }).path)).error).toBe('invalid_request');
      const ok = await agent.get(openIdRequest({ response_mode: 'query' }).path);
      expect(ok.statusCode).toBe(200);
    });
  });

  describe('UserInfo (Core §5.3)', () => {
    it('GET and POST with a bearer token of scope openid answer sub and the claims the scopes allow', async () => {
      const { agent, person } = await signedIn(t);
      const tokens = await signIn(agent, { scope: 'openid email' });
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.app.inject({ method, url: '/api/oauth2/userinfo', headers: { authorization: `Bearer ${tokens['access_token'] as string}` } });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ sub: person.id, email: person.email, email_verified: false });
      }
    });

    it('POST with the token as the form field access_token (RFC 6750 §2.2); with the header as well it is refused', async () => {
      const { agent, person } = await signedIn(t);
      const tokens = await signIn(agent, { scope: 'openid profile' });
      const res = await postForm(t, '/api/oauth2/userinfo', { access_token: tokens['access_token'] as string });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ sub: person.id, name: person.name, preferred_username: person.username });
      const both = await postForm(t, '/api/oauth2/userinfo', { access_token: tokens['access_token'] as string }, { headers: { authorization: `Bearer ${tokens['access_token'] as string}` } });
      expect(both.statusCode).toBe(400);
    });

    it('RFC 6750 §2.2: access_token in a JSON body is refused with 400 invalid_request, naming the form encoding', async () => {
      const { agent } = await signedIn(t);
      const tokens = await signIn(agent, { scope: 'openid' });
      const res = await t.app.inject({ method: 'POST', url: '/api/oauth2/userinfo', headers: { 'content-type': 'application/json' }, payload: { access_token: tokens['access_token'] } });
      expect(res.statusCode).toBe(400);
      expect(res.headers['www-authenticate']).toContain('error="invalid_request"');
      expect(res.headers['www-authenticate']).toContain('application/x-www-form-urlencoded');
    });

    it('no token → 401 with WWW-Authenticate Bearer error="invalid_token"; a token without openid → 403 insufficient_scope', async () => {
      const none = await t.app.inject({ method: 'GET', url: '/api/oauth2/userinfo' });
      expect(none.statusCode).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
      const { agent } = await signedIn(t);
      const tokens = await signIn(agent, { scope: 'identify', nonce: undefined });
      const res = await t.app.inject({ method: 'GET', url: '/api/oauth2/userinfo', headers: { authorization: `Bearer ${tokens['access_token'] as string}` } });
      expect(res.statusCode).toBe(403);
      expect(res.headers['www-authenticate']).toContain('error="insufficient_scope", scope="openid"');
    });
  });

  describe('RP-Initiated Logout 1.0', () => {
    it('with an id_token_hint for the signed-in person: signed out at once, back to the registered URI with state', async () => {
      await updateOpenIdClientSettings(t.services, operatorActing(), app.id, { postLogoutRedirectUris: ['https://rp.example/bye'] });
      const { agent } = await signedIn(t);
      const idToken = (await signIn(agent))['id_token'] as string;
      const res = await agent.get(`/app/oauth2/logout?id_token_hint=${idToken}&post_logout_redirect_uri=${encodeURIComponent('https://rp.example/bye')}&state=s1`);
      expect(res.statusCode).toBe(303);
      expect(res.headers['location']).toBe('https://rp.example/bye?state=s1');
      expect((await agent.get('/settings/profile')).statusCode).toBe(303);
    });

    it('without a hint the person is asked first; confirming signs out and redirects', async () => {
      const { agent } = await signedIn(t);
      const url = `/app/oauth2/logout?client_id=${app.id}&post_logout_redirect_uri=${encodeURIComponent('https://rp.example/bye')}&state=s2`;
      const page = await agent.get(url);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Relying Party asks to sign you out');
      const res = await agent.submit(url, '/app/oauth2/logout', { client_id: app.id, post_logout_redirect_uri: 'https://rp.example/bye', state: 's2' });
      expect(res.statusCode).toBe(303);
      expect(res.headers['location']).toBe('https://rp.example/bye?state=s2');
      expect((await agent.get('/settings/profile')).statusCode).toBe(303);
    });

    it('issue #36 §6: only post_logout_redirect_uri (no hint, no client_id): asked first, signed out, and left on our signed-out page', async () => {
      const { agent } = await signedIn(t);
      const url = `/app/oauth2/logout?post_logout_redirect_uri=${encodeURIComponent('https://rp.example/bye')}&state=s3`;
      const page = await agent.get(url);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Sign out of');
      // The URI cannot be tied to any app, so the form does not carry it.
      expect(page.body).not.toContain('rp.example');
      const res = await agent.submit(url, '/app/oauth2/logout', {});
      expect(res.statusCode).toBe(200);
      expect(res.headers['location']).toBeUndefined();
      expect(res.body).toContain('You are signed out');
      expect((await agent.get('/settings/profile')).statusCode).toBe(303);
      // Nobody signed in: the same page at once.
      const visitor = await new PageAgent(t.app).get(url);
      expect(visitor.statusCode).toBe(200);
      expect(visitor.headers['location']).toBeUndefined();
      expect(visitor.body).toContain('You are signed out');
    });

    it('issue #36 §4: a signed-out visitor is not redirected to the app: our signed-out page links to the registered URI with state', async () => {
      await updateOpenIdClientSettings(t.services, operatorActing(), app.id, { postLogoutRedirectUris: ['https://rp.example/bye'] });
      const { agent } = await signedIn(t);
      const idToken = (await signIn(agent))['id_token'] as string;
      for (const query of [`id_token_hint=${idToken}`, `client_id=${app.id}`]) {
        const res = await new PageAgent(t.app).get(`/app/oauth2/logout?${query}&post_logout_redirect_uri=${encodeURIComponent('https://rp.example/bye')}&state=s4`);
        expect(res.statusCode).toBe(200);
        expect(res.headers['location']).toBeUndefined();
        expect(res.body).toContain('You are signed out');
        expect(res.body).toContain('<a class="button" id="return-to-app" href="https://rp.example/bye?state=s4">Return to Relying Party</a>');
      }
    });

    it('a loopback post_logout_redirect_uri matches exactly: another port than registered is a page, never a redirect', async () => {
      const { app: native } = await createApp(t, owner, { name: 'Native Logout', confidential: false, redirectUris: ['http://127.0.0.1/cb'] });
      await updateOpenIdClientSettings(t.services, operatorActing(), native.id, { postLogoutRedirectUris: ['http://127.0.0.1/bye'] });
      const { agent } = await signedIn(t);
      const url = (uri: string) => `/app/oauth2/logout?client_id=${native.id}&post_logout_redirect_uri=${encodeURIComponent(uri)}`;
      const other = await agent.submit(url('http://127.0.0.1/bye'), '/app/oauth2/logout', { client_id: native.id, post_logout_redirect_uri: 'http://127.0.0.1:8765/bye' });
      expect(other.statusCode).toBe(400);
      expect(other.headers['location']).toBeUndefined();
      expect((await agent.get('/settings/profile')).statusCode).toBe(200);
      const exact = await agent.submit(url('http://127.0.0.1/bye'), '/app/oauth2/logout', { client_id: native.id, post_logout_redirect_uri: 'http://127.0.0.1/bye' });
      expect(exact.headers['location']).toBe('http://127.0.0.1/bye');
    });

    it('an unregistered post_logout_redirect_uri or a forged hint is a page, never a redirect', async () => {
      const { agent } = await signedIn(t);
      const idToken = (await signIn(agent))['id_token'] as string;
      const unregistered = await agent.get(`/app/oauth2/logout?id_token_hint=${idToken}&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`);
      expect(unregistered.statusCode).toBe(400);
      expect(unregistered.headers['location']).toBeUndefined();
      const forged = await agent.get(`/app/oauth2/logout?id_token_hint=${idToken.slice(0, -4)}AAAA&post_logout_redirect_uri=${encodeURIComponent('https://rp.example/bye')}`);
      expect(forged.statusCode).toBe(400);
      // Still signed in: nothing happened.
      expect((await agent.get('/settings/profile')).statusCode).toBe(200);
    });
  });

  describe('developer portal', () => {
    it("the app page shows the issuer and the discovery URL; the OpenID form saves the algorithm and post-logout URIs, refusing bad ones", async () => {
      const agent = new PageAgent(t.app);
      await agent.submit('/register', '/register', { username: `dev${Date.now().toString(36)}`, name: '', email: '', password: 'correct horse battery' });
      const create = await agent.submit('/developers/applications', '/developers/applications', { name: 'Portal RP', clientType: 'public' });
      const appPath = (create.headers['location'] as string).split('?')[0] as string;
      const page = await agent.get(appPath);
      expect(page.body).toContain(`<code id="oidc-issuer">${ISSUER}</code>`);
      expect(page.body).toContain(`<code id="oidc-discovery">${ISSUER}/.well-known/openid-configuration</code>`);
      const saved = await agent.submit(appPath, `${appPath}/openid`, { idTokenAlg: 'ES256', postLogoutRedirectUris: 'https://portal.example/bye\nhttps://portal.example/bye2' });
      expect(saved.statusCode).toBe(303);
      const after = await agent.get(appPath);
      expect(page.body).toContain('<option value="RS256" selected>RS256 (default)</option>');
      expect(after.body).toContain('<option value="ES256" selected>');
      expect(after.body).toContain('https://portal.example/bye\nhttps://portal.example/bye2</textarea>');
      const bad = await agent.submit(appPath, `${appPath}/openid`, { idTokenAlg: 'HS256', postLogoutRedirectUris: '' });
      expect(bad.statusCode).toBe(400);
      const badUri = await agent.submit(appPath, `${appPath}/openid`, { idTokenAlg: 'ES256', postLogoutRedirectUris: 'javascript:alert(1)' });
      expect(badUri.statusCode).toBe(400);
    });
  });
});

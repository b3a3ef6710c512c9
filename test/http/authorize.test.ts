import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PageAgent } from '../support/page-agent.js';
import { authorizePath, CHALLENGE, consentFields, createApp, freshPkce, ISSUER, location, requestFor, signedIn } from './authorize.fixtures.js';

/** GET /app/oauth2/authorize: validation, errors and their delivery (OAUTH-CHECKLIST A, B, H4). */
describe('GET /app/oauth2/authorize', () => {
  let t: TestApp;
  let agent: PageAgent;
  let owner: Person;
  let app: Application;
  let confidential: Application;
  let other: Application;

  beforeAll(async () => {
    t = await createTestApp();
    ({ agent, person: owner } = await signedIn(t, 'alice'));
    ({ app } = await createApp(t, owner, {
      redirectUris: ['https://good.example.com/cb', 'https://good.example.com/dir/', 'https://good.example.com/q?tenant=1', 'https://good.example.com/a/b'],
    }));
    ({ app: confidential } = await createApp(t, owner, { name: 'Server App', confidential: true, redirectUris: ['https://server.example/cb?tenant=7'] }));
    ({ app: other } = await createApp(t, owner, { name: 'Other App', redirectUris: ['https://other.example/cb'] }));
  });
  afterAll(async () => t.close());

  function expectErrorPage(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.headers['location']).toBeUndefined();
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.body).toContain('This authorization link is not valid');
  }

  async function codeCount(): Promise<number> {
    const row = await t.services.db.selectFrom('oauth_codes').select((eb) => eb.fn.countAll<string | number | bigint>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** An error redirect to the validated redirect URI, with error, description, state and iss. */
  function expectErrorRedirect(res: Parameters<typeof location>[0], error: string, redirectUri = 'https://good.example.com/cb', state: string | null = 'xyz-state'): URL {
    const to = location(res);
    expect(res.statusCode).toBe(302);
    expect(`${to.origin}${to.pathname}`).toBe(redirectUri.split('?')[0]);
    expect(to.searchParams.get('error')).toBe(error);
    expect(to.searchParams.get('error_description')).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
    expect(to.searchParams.get('state')).toBe(state);
    expect(to.searchParams.getAll('iss')).toEqual([ISSUER]);
    expect(to.searchParams.has('code')).toBe(false);
    return to;
  }

  it('A1: GET shows the consent screen for a valid request', async () => {
    const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb' })));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Acme Reader wants to access your');
  });

  describe('A3: an unknown client gets an error page, never a redirect', () => {
    it('A3: a missing client_id gets the error page', async () => {
      expectErrorPage(await agent.get(authorizePath(requestFor(app, { client_id: undefined }))));
    });
    it('A3: an unknown client_id gets the error page, even with a redirect_uri valid for another client', async () => {
      expectErrorPage(await agent.get(authorizePath(requestFor(other, { client_id: '123456789012345678' }))));
    });
    it('A3: a malformed client_id gets the error page', async () => {
      for (const id of ['abc', '-1', '1.5', '99999999999999999999999', ' 1']) expectErrorPage(await agent.get(authorizePath(requestFor(app, { client_id: id }))));
    });
    it('A3: a repeated client_id gets the error page', async () => {
      expectErrorPage(await agent.get(authorizePath(requestFor(app, { client_id: [app.id, other.id] }))));
    });
    it("A3: one client with another client's redirect_uri gets the error page", async () => {
      expectErrorPage(await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://other.example/cb' }))));
    });
    it('A3: a signed-out person with an unknown client sees the error page, not the sign-in page', async () => {
      expectErrorPage(await new PageAgent(t.app).get(authorizePath(requestFor(app, { client_id: '123456789012345678' }))));
    });
  });

  describe('A4: a redirect_uri that is not byte-for-byte a registered one gets the error page, never a redirect', () => {
    const variants: [string, string][] = [
      ['with a trailing slash added', 'https://good.example.com/cb/'],
      ['with the trailing slash removed', 'https://good.example.com/dir'],
      ['with the host in another case', 'https://GOOD.example.com/cb'],
      ['with the default port added', 'https://good.example.com:443/cb'],
      ['with a port added', 'https://good.example.com:8443/cb'],
      ['with an extra query ?x=1', 'https://good.example.com/cb?x=1'],
      ['with a changed query value', 'https://good.example.com/q?tenant=2'],
      ['with a fragment', 'https://good.example.com/cb#frag'],
      ['with http instead of https', 'http://good.example.com/cb'],
      ['with %2F instead of /', 'https://good.example.com/a%2Fb'],
      ['with a ..;/ segment', 'https://good.example.com/cb/..;/evil'],
      ['with userinfo (https://good@evil)', 'https://good.example.com@evil.example/cb'],
      ['with a double @', 'https://good.example.com@evil.example@good.example.com/cb'],
      ['that is a prefix of an attacker host', 'https://good.example.com.evil/cb'],
      ['that is not a URI at all', 'not a uri'],
    ];
    for (const [what, uri] of variants) {
      it(`A4: a redirect_uri ${what} gets the error page, never a redirect`, async () => {
        expectErrorPage(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri }))));
        // Also before sign-in: the error page comes first (SPEC §2.1, RFC 6749 §4.1.2.1).
        expectErrorPage(await new PageAgent(t.app).get(authorizePath(requestFor(app, { redirect_uri: uri }))));
      });
    }
    it('A4: a repeated redirect_uri gets the error page', async () => {
      expectErrorPage(await agent.get(authorizePath(requestFor(app, { redirect_uri: ['https://good.example.com/cb', 'https://good.example.com/cb'] }))));
    });
    it('A4: the exact registered URIs, with and without query or trailing slash, are accepted', async () => {
      for (const uri of app.redirectUris) expect((await agent.get(authorizePath(requestFor(app, { redirect_uri: uri })))).statusCode).toBe(200);
    });
  });

  describe('A5: loopback redirect URIs may use any port; nothing else may differ', () => {
    let loopback: Application;
    beforeAll(async () => {
      ({ app: loopback } = await createApp(t, owner, { name: 'Native App', redirectUris: ['http://127.0.0.1/cb', 'http://[::1]/cb'] }));
    });
    it('A5: http://127.0.0.1 and http://[::1] with a port the app chose are accepted, and errors go to that port', async () => {
      for (const uri of ['http://127.0.0.1:53124/cb', 'http://[::1]:8080/cb', 'http://127.0.0.1/cb']) {
        const res = await agent.get(authorizePath(requestFor(loopback, { redirect_uri: uri, scope: 'nope' })));
        const to = expectErrorRedirect(res, 'invalid_scope', uri);
        expect(to.href.startsWith(uri)).toBe(true);
      }
    });
    it('A5: a loopback URI with another path, or localhost instead of the address, gets the error page', async () => {
      for (const uri of ['http://127.0.0.1:53124/cb2', 'http://localhost:53124/cb', 'https://127.0.0.1:53124/cb', 'http://127.0.0.1:53124/cb?x=1']) {
        expectErrorPage(await agent.get(authorizePath(requestFor(loopback, { redirect_uri: uri }))));
      }
    });
  });

  describe('A7: redirect_uri may be omitted only when exactly one URI is registered', () => {
    it('A7: with one registered URI, the request without redirect_uri is served and errors go to that URI', async () => {
      const res = await agent.get(authorizePath(requestFor(other, { redirect_uri: undefined, response_type: 'token' })));
      expectErrorRedirect(res, 'unsupported_response_type', 'https://other.example/cb');
      const page = await agent.get(authorizePath(requestFor(other, { redirect_uri: undefined })));
      expect(page.statusCode).toBe(200);
    });
    it('A7: with several registered URIs, the request without redirect_uri gets the error page', async () => {
      expectErrorPage(await agent.get(authorizePath(requestFor(app, { redirect_uri: undefined }))));
    });
  });

  describe('A2: parameters', () => {
    it('A2: unknown parameters are ignored', async () => {
      const res = await agent.get(authorizePath({ ...requestFor(app, { redirect_uri: 'https://good.example.com/cb' }), foo: 'bar', nonce: 'n', response_mode: 'query' }));
      expect(res.statusCode).toBe(200);
    });
    it('A2: a repeated scope is invalid_request', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', scope: ['identify', 'email'] }))), 'invalid_request');
    });
    it('A2: every repeated OAuth parameter is invalid_request', async () => {
      for (const name of ['response_type', 'code_challenge', 'code_challenge_method', 'prompt']) {
        const params = requestFor(app, { redirect_uri: 'https://good.example.com/cb' });
        const value = (params[name] as string | undefined) ?? 'consent';
        const res = await agent.get(authorizePath({ ...params, [name]: [value, value] }));
        const to = expectErrorRedirect(res, 'invalid_request');
        expect(to.searchParams.get('error_description')).toContain(name);
      }
    });
    it('A2: a repeated state is invalid_request, and no state is echoed since none was sent once', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', state: ['a', 'b'] })));
      expectErrorRedirect(res, 'invalid_request', 'https://good.example.com/cb', null);
    });
    it('A2: an empty value counts as absent (empty response_type is invalid_request, empty state is not echoed)', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', response_type: '', state: '' })));
      const to = expectErrorRedirect(res, 'invalid_request', 'https://good.example.com/cb', null);
      expect(to.search).not.toContain('state');
    });
  });

  describe('A8, A10, I3: every other error redirects with error, error_description, state and iss', () => {
    const uri = 'https://good.example.com/cb';
    it('A10: a missing response_type is invalid_request', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, response_type: undefined }))), 'invalid_request');
    });
    it('A10: an unknown response_type is unsupported_response_type', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, response_type: 'code id_token' }))), 'unsupported_response_type');
    });
    it('I3: response_type=token (implicit) is unsupported_response_type', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, response_type: 'token' }))), 'unsupported_response_type');
    });
    it('a missing or empty scope is invalid_scope', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, scope: undefined }))), 'invalid_scope');
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, scope: '' }))), 'invalid_scope');
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, scope: ' ' }))), 'invalid_scope');
    });
    it('an unknown scope is invalid_scope, and so is bot for an app without a bot', async () => {
      const to = expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, scope: 'identify "guilds"' }))), 'invalid_scope');
      expect(to.searchParams.get('error_description')).toContain('guilds');
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, scope: 'bot' }))), 'invalid_scope');
    });
    it('an error redirect creates no code', async () => {
      const before = await codeCount();
      await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, scope: 'nope' })));
      expect(await codeCount()).toBe(before);
    });
  });

  describe('PKCE at the authorization endpoint', () => {
    const uri = 'https://good.example.com/cb';
    it('B2: an app without a secret and without code_challenge gets invalid_request ("code challenge required")', async () => {
      const to = expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, code_challenge: undefined, code_challenge_method: undefined }))), 'invalid_request');
      expect(to.searchParams.get('error_description')).toContain('code challenge required');
    });
    it('B2: a confidential app may omit PKCE', async () => {
      const res = await agent.get(authorizePath(requestFor(confidential, { code_challenge: undefined, code_challenge_method: undefined })));
      expect(res.statusCode).toBe(200);
    });
    it('B3: code_challenge_method=plain gets invalid_request ("transform algorithm not supported")', async () => {
      const to = expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, code_challenge_method: 'plain' }))), 'invalid_request');
      expect(to.searchParams.get('error_description')).toContain('transform algorithm not supported');
    });
    it('B3: an unknown code_challenge_method gets invalid_request', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, code_challenge_method: 'S512' }))), 'invalid_request');
    });
    it('B4: code_challenge without code_challenge_method gets invalid_request (no silent plain)', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, code_challenge_method: undefined }))), 'invalid_request');
      expectErrorRedirect(await agent.get(authorizePath(requestFor(confidential, { code_challenge_method: undefined }))), 'invalid_request', 'https://server.example/cb?tenant=7');
    });
    it('B4: code_challenge_method without code_challenge gets invalid_request, for a confidential app too', async () => {
      expectErrorRedirect(await agent.get(authorizePath(requestFor(confidential, { code_challenge: undefined }))), 'invalid_request', 'https://server.example/cb?tenant=7');
    });
    it('B5: a challenge shorter than 43, longer than 128 or outside [A-Za-z0-9-._~] gets invalid_request', async () => {
      for (const challenge of [CHALLENGE.slice(0, 42), 'a'.repeat(129), `${CHALLENGE.slice(0, 42)}+`, `${CHALLENGE}=`]) {
        expectErrorRedirect(await agent.get(authorizePath(requestFor(app, { redirect_uri: uri, code_challenge: challenge }))), 'invalid_request');
      }
    });
  });

  it('A13: errors keep the query of a registered redirect URI and append their parameters', async () => {
    const res = await agent.get(authorizePath(requestFor(confidential, { scope: 'nope' })));
    const to = expectErrorRedirect(res, 'invalid_scope', 'https://server.example/cb?tenant=7');
    expect(to.searchParams.get('tenant')).toBe('7');
    expect(res.headers['location']).toMatch(/^https:\/\/server\.example\/cb\?tenant=7&error=invalid_scope&/);
  });

  describe('A11: state comes back byte for byte, and not at all when absent', () => {
    const states: [string, string][] = [
      ['a plus sign', 'a+b+c'],
      ['a percent sign', '100%25 %zz'],
      ['spaces', 'with some spaces'],
      ['unicode', 'zoë — 日本 😀'],
      ['500 characters', 'S'.repeat(250) + '-_.~!*()'.repeat(31) + 'tail'.slice(0, 2)],
      ['reserved characters', 'a&b=c?d#e/f'],
    ];
    for (const [what, state] of states) {
      it(`A11: a state with ${what} is echoed unchanged`, async () => {
        const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', scope: 'nope', state })));
        const to = expectErrorRedirect(res, 'invalid_scope', 'https://good.example.com/cb', state);
        // Decoded with decodeURIComponent as well as with URLSearchParams: both give the original.
        const rawValue = /[?&]state=([^&]*)/.exec(res.headers['location'] as string)?.[1] ?? '';
        expect(decodeURIComponent(rawValue)).toBe(state);
        expect(to.searchParams.get('state')).toBe(state);
      });
    }
    it('A11: without state, the redirect carries none', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', scope: 'nope', state: undefined })));
      const to = expectErrorRedirect(res, 'invalid_scope', 'https://good.example.com/cb', null);
      expect(res.headers['location']).not.toContain('state');
      expect(to.searchParams.has('state')).toBe(false);
    });
  });

  describe('A19: a signed-out person signs in first, and comes back to the same request', () => {
    it('A19: a valid request sends a signed-out person to sign-in with next = this exact URL', async () => {
      const path = authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', state: 'a b+c' }));
      const res = await new PageAgent(t.app).get(path);
      expect(res.statusCode).toBe(303);
      const to = location(res);
      expect(to.pathname).toBe('/login');
      expect(to.searchParams.get('next')).toBe(path);
    });
    it('A19: an invalid request from a signed-out person also goes to sign-in, never straight to the redirect URI', async () => {
      const path = authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', scope: 'nope' }));
      const res = await new PageAgent(t.app).get(path);
      expect(location(res).pathname).toBe('/login');
      expect(res.headers['location']).toMatch(/^\/login\?next=/);
      expect(location(res).searchParams.get('next')).toBe(path);
    });
    it('A19: prompt=none from a signed-out person goes to sign-in too (no redirect before authentication)', async () => {
      const res = await new PageAgent(t.app).get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', prompt: 'none' })));
      expect(location(res).pathname).toBe('/login');
    });
  });

  describe('A15–A17: the consent screen cannot be framed, leaks no referrer and loads nothing from elsewhere', () => {
    it('A15, A17: CSP frame-ancestors none, X-Frame-Options DENY, Referrer-Policy no-referrer, images only from this origin', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb' })));
      expect(res.statusCode).toBe(200);
      const csp = res.headers['content-security-policy'] as string;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/img-src 'self' data:(;|$)/);
      expect(csp).not.toContain('https:');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-store');
    });
    it('A16: no CORS headers, even for a cross-origin request', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb' })), { origin: 'https://evil.example' });
      for (const name of Object.keys(res.headers)) expect(name.startsWith('access-control-')).toBe(false);
      const redirect = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', scope: 'x' })), { origin: 'https://evil.example' });
      for (const name of Object.keys(redirect.headers)) expect(name.startsWith('access-control-')).toBe(false);
    });
    it('A17: the page references nothing outside this origin (no external script, style, image or font)', async () => {
      const { app: withIcon } = await createApp(t, owner, { name: 'Icon App', iconUrl: 'https://cdn.icon-host.example/icon.png', redirectUris: ['https://icon.example/cb'] });
      const res = await agent.get(authorizePath(requestFor(withIcon)));
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('icon-host.example');
      // Same-origin paths, or fragments of this page (the skip link).
      for (const m of res.body.matchAll(/\b(?:src|href)="([^"]*)"/g)) expect(m[1]).toMatch(/^(?:\/(?!\/)|#)/);
      expect(res.body).toMatch(/class="avatar app-tile large"[^>]*>I</);
    });
    it('A15: the error page cannot be framed either', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { client_id: undefined })));
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
    });
  });

  it('B6: the challenge is never echoed in a redirect', async () => {
    const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: 'https://good.example.com/cb', scope: 'nope' })));
    expect(res.headers['location']).not.toContain(CHALLENGE);
  });
});

describe('B10: a client reusing a PKCE challenge', () => {
  it('gets invalid_request for the second authorization with the same code_challenge, and no second code', async () => {
    const t = await createTestApp();
    try {
      const { agent, person } = await signedIn(t);
      const { app } = await createApp(t, person, { redirectUris: ['https://good.example.com/cb'], confidential: false });
      const challenge = freshPkce().challenge;
      const first = await agent.get(authorizePath(requestFor(app, { code_challenge: challenge })));
      expect(first.statusCode).toBe(200);
      const approved = await agent.postRaw('/app/oauth2/authorize', { ...consentFields(first.body), decision: 'authorize' });
      expect(location(approved).searchParams.get('code')).toBeTruthy();
      // Consent is remembered now, so the same request would go straight to a code: unless the challenge is reused.
      const to = location(await agent.get(authorizePath(requestFor(app, { code_challenge: challenge }))));
      expect(`${to.origin}${to.pathname}`).toBe('https://good.example.com/cb');
      expect(to.searchParams.get('error')).toBe('invalid_request');
      expect(to.searchParams.get('error_description')).toContain('code_challenge was already used');
      expect(to.searchParams.get('state')).toBe('xyz-state');
      expect(to.searchParams.get('code')).toBeNull();
      const codes = await t.services.db.selectFrom('oauth_codes').select('code_hash').where('code_challenge', '=', challenge).execute();
      expect(codes).toHaveLength(1);
      // A fresh challenge works again.
      expect(location(await agent.get(authorizePath(requestFor(app)))).searchParams.get('code')).toBeTruthy();
    } finally {
      await t.close();
    }
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/core/clock.js';
import { hashSecret } from '../../src/core/secrets.js';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Person } from '../../src/modules/directory/people.js';
import { csrfToken } from '../../src/web/csrf.js';
import { cookieNames } from '../../src/web/pages.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';
import { answerConsent, authorizePath, CHALLENGE, consentFields, createApp, ISSUER, location, requestFor, signedIn } from './authorize.fixtures.js';

/** The consent screen and its answer (OAUTH-CHECKLIST A9, A12, A14, A18, C1, C8, B6, H4; SPEC §3, §8). */
describe('consent screen', () => {
  let t: TestApp;
  let owner: Person;
  let app: Application;
  let confidential: Application;
  let agent: PageAgent;
  let person: Person;

  beforeAll(async () => {
    t = await createTestApp();
    ({ person: owner } = await signedIn(t, 'alice'));
    ({ app } = await createApp(t, owner));
    ({ app: confidential } = await createApp(t, owner, { name: 'Server App', confidential: true, redirectUris: ['https://server.example/cb?tenant=7'] }));
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ({ agent, person } = await signedIn(t));
  });

  async function rows(table: 'oauth_codes' | 'oauth_grants' | 'oauth_consents', userId = person.id) {
    return t.services.db.selectFrom(table).selectAll().where('user_id', '=', userId).execute();
  }

  /** The code redirect, checked for shape: 303 after the form, code + state + iss, nothing else. */
  function expectCodeRedirect(res: Parameters<typeof location>[0], redirectUri: string, state: string | null, status = 303): string {
    expect(res.statusCode).toBe(status);
    const to = location(res);
    expect(res.headers['location']?.startsWith(redirectUri)).toBe(true);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(to.searchParams.get('state')).toBe(state);
    expect(to.searchParams.getAll('iss')).toEqual([ISSUER]);
    expect(to.searchParams.has('error')).toBe(false);
    const code = to.searchParams.get('code');
    expect(code).toMatch(/^ghac_[A-Za-z0-9_-]{43}$/);
    return code as string;
  }

  describe('A18: what the screen shows', () => {
    it('A18: the app name, its owner, its description, who is signed in with a switch-account link, each scope in plain words, and Authorize / Cancel', async () => {
      const path = authorizePath(requestFor(app, { scope: 'email identify servers' }));
      const res = await agent.get(path);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<h1>Acme Reader wants to access your Gatehouse account</h1>');
      expect(res.body).toContain('Made by <strong>@alice</strong>');
      expect(res.body).toContain('Reads your profile to personalise Acme.');
      expect(res.body).toContain(`Signed in as <strong>${person.name}</strong> (@${person.username})`);
      expect(res.body).toContain(`<a href="/login?next=${encodeURIComponent(path).replace(/&/g, '&amp;')}">Not you? Switch account</a>`);
      const lines = [...res.body.matchAll(/<li><span class="scope-mark" aria-hidden="true">✓<\/span> ([^<]+?)(?: <span class="muted">([^<]*)<\/span>)?<\/li>/g)];
      expect(lines.map((m) => m[1])).toEqual(['Know your name, username and avatar', 'Know your e-mail address', 'See the list of servers you are in and your permissions there']);
      // Issue #38 §2: the email line names the address and says whether it is verified.
      expect(lines[1]?.[2]).toBe(person.email ? `(${person.email}, not verified)` : '(you have none)');
      expect(res.body).toContain('until you remove its access in <a href="/settings/authorized-apps">Settings → Authorized apps</a>');
      expect(res.body).toContain('you will be sent to <strong class="mono">https://app.example</strong>');
      expect(res.body).toMatch(/<button type="submit" name="decision" value="cancel" class="secondary">Cancel<\/button>/);
      expect(res.body).toMatch(/<button type="submit" name="decision" value="authorize">Authorize<\/button>/);
    });

    it('the form re-sends the request in hidden fields with a CSRF token, and only the parameters that were sent', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { redirect_uri: undefined, foo: 'ignored', code_challenge: CHALLENGE })));
      const fields = consentFields(res.body);
      expect(fields).toEqual({
        _csrf: csrfTokenIn(res.body),
        response_type: 'code',
        client_id: app.id,
        scope: 'identify email',
        state: 'xyz-state',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
      });
    });

    it('names and descriptions are escaped', async () => {
      const { app: sneaky } = await createApp(t, owner, { name: 'Sneaky <b>App</b>', description: '<script>alert(1)</script>', redirectUris: ['https://sneaky.example/cb'] });
      const res = await agent.get(authorizePath(requestFor(sneaky)));
      expect(res.body).not.toContain('<script>alert(1)</script>');
      expect(res.body).toContain('Sneaky &lt;b&gt;App&lt;/b&gt;');
    });
  });

  describe('A9: Cancel', () => {
    it('A9: Cancel redirects (303) with error=access_denied, the same state and iss; nothing is stored', async () => {
      const res = await answerConsent(agent, authorizePath(requestFor(app)), 'cancel');
      expect(res.statusCode).toBe(303);
      const to = location(res);
      expect(`${to.origin}${to.pathname}`).toBe('https://app.example/callback');
      expect(to.searchParams.get('error')).toBe('access_denied');
      expect(to.searchParams.get('state')).toBe('xyz-state');
      expect(to.searchParams.getAll('iss')).toEqual([ISSUER]);
      expect(to.searchParams.has('code')).toBe(false);
      expect(await rows('oauth_codes')).toEqual([]);
      expect(await rows('oauth_grants')).toEqual([]);
      expect(await rows('oauth_consents')).toEqual([]);
    });

    it('A9: Cancel without state carries no state', async () => {
      const res = await answerConsent(agent, authorizePath(requestFor(app, { state: undefined })), 'cancel');
      expect(location(res).searchParams.has('state')).toBe(false);
      expect(location(res).searchParams.get('error')).toBe('access_denied');
    });
  });

  describe('Authorize issues a code', () => {
    it('A12, H4: Authorize answers 303 (never 307) to the redirect URI with code, state and iss', async () => {
      const res = await answerConsent(agent, authorizePath(requestFor(app)), 'authorize');
      expectCodeRedirect(res, 'https://app.example/callback?code=', 'xyz-state');
    });

    it('C1, C8, B6: the code has 256 random bits, is stored only as its hash, bound to app, redirect URI, scopes, challenge and person, and expires 10 minutes later', async () => {
      const issuedAt = t.clock.now();
      const code = expectCodeRedirect(await answerConsent(agent, authorizePath(requestFor(app, { scope: 'email identify', code_challenge: CHALLENGE })), 'authorize'), 'https://app.example/callback?', 'xyz-state');
      const [row, ...more] = await rows('oauth_codes');
      expect(more).toEqual([]);
      expect(row?.code_hash).toBe(hashSecret(code));
      expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(code.slice(5));
      expect(String(row?.application_id)).toBe(app.id);
      expect(String(row?.user_id)).toBe(person.id);
      expect(row?.redirect_uri).toBe('https://app.example/callback');
      expect(Number(row?.redirect_uri_sent)).toBe(1);
      expect(row?.scopes).toBe('identify email');
      expect(row?.code_challenge).toBe(CHALLENGE);
      expect(Number(row?.expires_at)).toBe(issuedAt + 10 * MINUTE);
      expect(row?.used_at).toBeNull();
      const [grant] = await rows('oauth_grants');
      expect(String(grant?.id)).toBe(String(row?.grant_id));
      expect(grant?.scopes).toBe('identify email');
      expect(grant?.revoked_at).toBeNull();
    });

    it('two authorizations give two different codes', async () => {
      const a = expectCodeRedirect(await answerConsent(agent, authorizePath(requestFor(app, { prompt: 'consent' })), 'authorize'), 'https://app.example/callback?', 'xyz-state');
      const b = expectCodeRedirect(await answerConsent(agent, authorizePath(requestFor(app, { prompt: 'consent' })), 'authorize'), 'https://app.example/callback?', 'xyz-state');
      expect(a).not.toBe(b);
    });

    it('A7: a request without redirect_uri (one registered URI) stores redirect_uri_sent = 0 for the token endpoint', async () => {
      const { app: single } = await createApp(t, owner, { name: 'Single', redirectUris: ['https://single.example/cb'] });
      expectCodeRedirect(await answerConsent(agent, authorizePath(requestFor(single, { redirect_uri: undefined })), 'authorize'), 'https://single.example/cb?', 'xyz-state');
      const [row] = await rows('oauth_codes');
      expect(row?.redirect_uri).toBe('https://single.example/cb');
      expect(Number(row?.redirect_uri_sent)).toBe(0);
    });

    it('A5: a loopback code is bound to the URI with the port that was used', async () => {
      const { app: native } = await createApp(t, owner, { name: 'Native', redirectUris: ['http://127.0.0.1/cb'] });
      expectCodeRedirect(await answerConsent(agent, authorizePath(requestFor(native, { redirect_uri: 'http://127.0.0.1:49152/cb' })), 'authorize'), 'http://127.0.0.1:49152/cb?code=', 'xyz-state');
      const [row] = await rows('oauth_codes');
      expect(row?.redirect_uri).toBe('http://127.0.0.1:49152/cb');
    });

    it('A13: a registered query is kept and code, state and iss appended; a confidential app without PKCE gets a code without challenge', async () => {
      const res = await answerConsent(agent, authorizePath(requestFor(confidential, { code_challenge: undefined, code_challenge_method: undefined })), 'authorize');
      expectCodeRedirect(res, 'https://server.example/cb?tenant=7&code=', 'xyz-state');
      expect(location(res).searchParams.get('tenant')).toBe('7');
      const [row] = await rows('oauth_codes');
      expect(row?.code_challenge).toBeNull();
    });

    it('A11: a state with quotes, markup, unicode and + survives the consent form unchanged', async () => {
      const state = `"quoted" <b>&amp; 'zoë' 😀 a+b %41`;
      expectCodeRedirect(await answerConsent(agent, authorizePath(requestFor(app, { state })), 'authorize'), 'https://app.example/callback?', state);
    });

    it('A11: without state, the code redirect carries none', async () => {
      const res = await answerConsent(agent, authorizePath(requestFor(app, { state: undefined })), 'authorize');
      expectCodeRedirect(res, 'https://app.example/callback?', null);
      expect(res.headers['location']).not.toContain('state');
    });
  });

  describe('A14: the form is CSRF-protected and everything is validated again on POST', () => {
    async function formOf(path = authorizePath(requestFor(app))) {
      return consentFields((await agent.get(path)).body);
    }

    it('A14: a POST without a CSRF token answers 403 and issues no code', async () => {
      const { _csrf: _dropped, ...fields } = await formOf();
      const res = await agent.postRaw('/app/oauth2/authorize', { ...fields, decision: 'authorize' });
      expect(res.statusCode).toBe(403);
      expect(res.headers['location']).toBeUndefined();
      expect(await rows('oauth_codes')).toEqual([]);
    });

    it("A14: a POST with a wrong token, or another session's token, answers 403 and issues no code", async () => {
      const fields = await formOf();
      expect((await agent.postRaw('/app/oauth2/authorize', { ...fields, _csrf: 'x'.repeat(43), decision: 'authorize' })).statusCode).toBe(403);
      const { agent: mallory } = await signedIn(t);
      const theirs = consentFields((await mallory.get(authorizePath(requestFor(app)))).body);
      expect((await agent.postRaw('/app/oauth2/authorize', { ...fields, _csrf: theirs['_csrf'] as string, decision: 'authorize' })).statusCode).toBe(403);
      expect(await rows('oauth_codes')).toEqual([]);
    });

    it('A14: a POST from another origin answers 403 and issues no code', async () => {
      const fields = await formOf();
      const res = await agent.postRaw('/app/oauth2/authorize', { ...fields, decision: 'authorize' }, { origin: 'https://evil.example' });
      expect(res.statusCode).toBe(403);
      expect(await rows('oauth_codes')).toEqual([]);
    });

    it('a tampered redirect_uri in the hidden fields gets the error page, never a redirect', async () => {
      const fields = await formOf();
      const res = await agent.postRaw('/app/oauth2/authorize', { ...fields, redirect_uri: 'https://evil.example/cb', decision: 'authorize' });
      expect(res.statusCode).toBe(400);
      expect(res.headers['location']).toBeUndefined();
      expect(await rows('oauth_codes')).toEqual([]);
    });

    it('a tampered client_id gets the error page', async () => {
      const fields = await formOf();
      const res = await agent.postRaw('/app/oauth2/authorize', { ...fields, client_id: confidential.id, decision: 'authorize' });
      expect(res.statusCode).toBe(400);
      expect(res.headers['location']).toBeUndefined();
    });

    it('a tampered scope, or a removed challenge, is redirected as an error and issues no code', async () => {
      const fields = await formOf();
      const scope = await agent.postRaw('/app/oauth2/authorize', { ...fields, scope: 'identify bot', decision: 'authorize' });
      expect(scope.statusCode).toBe(303);
      expect(location(scope).searchParams.get('error')).toBe('invalid_scope');
      const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = fields;
      const pkce = await agent.postRaw('/app/oauth2/authorize', { ...noPkce, decision: 'authorize' });
      expect(location(pkce).searchParams.get('error')).toBe('invalid_request');
      expect(location(pkce).searchParams.getAll('iss')).toEqual([ISSUER]);
      expect(await rows('oauth_codes')).toEqual([]);
    });

    it('a repeated parameter in the form is invalid_request', async () => {
      const fields = await formOf();
      const res = await agent.postRaw('/app/oauth2/authorize', { ...fields, scope: ['identify', 'email'], decision: 'authorize' });
      expect(location(res).searchParams.get('error')).toBe('invalid_request');
    });

    it('a POST without a decision gets an error page and issues no code', async () => {
      const fields = await formOf();
      const res = await agent.postRaw('/app/oauth2/authorize', { ...fields, decision: 'yes please' });
      expect(res.statusCode).toBe(400);
      expect(await rows('oauth_codes')).toEqual([]);
    });

    it('A19: a POST after the session ended goes to sign-in and comes back to the request', async () => {
      const anonymous = new PageAgent(t.app);
      // A browser without a session still has the anonymous CSRF cookie of the pages context.
      const anon = 'anonymous-csrf-key-0123456789';
      anonymous.cookies.set(cookieNames(false).anon, anon);
      const fields = { ...(await formOf()), _csrf: csrfToken(anon) };
      const res = await anonymous.postRaw('/app/oauth2/authorize', { ...fields, decision: 'authorize' });
      expect(res.statusCode).toBe(303);
      const to = location(res);
      expect(to.pathname).toBe('/login');
      const next = new URL(to.searchParams.get('next') as string, 'http://localhost:8080');
      expect(next.pathname).toBe('/app/oauth2/authorize');
      expect(next.searchParams.get('client_id')).toBe(app.id);
      expect(next.searchParams.get('state')).toBe('xyz-state');
    });
  });

  describe('remembered consent and prompt', () => {
    it('consent is remembered: the same request again (with its own PKCE challenge, B10) skips the screen and redirects (302) with a new code', async () => {
      expectCodeRedirect(await answerConsent(agent, authorizePath(requestFor(app)), 'authorize'), 'https://app.example/callback?', 'xyz-state');
      const again = await agent.get(authorizePath(requestFor(app)));
      expectCodeRedirect(again, 'https://app.example/callback?', 'xyz-state', 302);
      expect(await rows('oauth_codes')).toHaveLength(2);
      expect(await rows('oauth_grants')).toHaveLength(2);
    });

    it('asking for fewer scopes than remembered skips the screen; asking for more shows it, listing every requested scope', async () => {
      await answerConsent(agent, authorizePath(requestFor(app, { scope: 'identify email' })), 'authorize');
      expectCodeRedirect(await agent.get(authorizePath(requestFor(app, { scope: 'email' }))), 'https://app.example/callback?', 'xyz-state', 302);
      const more = await agent.get(authorizePath(requestFor(app, { scope: 'identify servers' })));
      expect(more.statusCode).toBe(200);
      expect(more.body).toContain('See the list of servers you are in');
      expect(more.body).toContain('Know your name, username and avatar');
    });

    it('the remembered consent is the union of what was granted', async () => {
      await answerConsent(agent, authorizePath(requestFor(app, { scope: 'identify' })), 'authorize');
      await answerConsent(agent, authorizePath(requestFor(app, { scope: 'servers' })), 'authorize');
      const [consent] = await rows('oauth_consents');
      expect(consent?.scopes).toBe('identify servers');
      expectCodeRedirect(await agent.get(authorizePath(requestFor(app, { scope: 'servers identify' }))), 'https://app.example/callback?', 'xyz-state', 302);
      // Each code carries only the scopes of its own request.
      const codes = await rows('oauth_codes');
      expect(codes.map((c) => c.scopes).sort()).toEqual(['identify', 'identify servers', 'servers']);
    });

    it('consent is per app: another app asks again', async () => {
      await answerConsent(agent, authorizePath(requestFor(app)), 'authorize');
      const res = await agent.get(authorizePath(requestFor(confidential, { code_challenge: undefined, code_challenge_method: undefined })));
      expect(res.statusCode).toBe(200);
    });

    it('consent is per person: someone else is asked', async () => {
      await answerConsent(agent, authorizePath(requestFor(app)), 'authorize');
      const { agent: bob } = await signedIn(t);
      expect((await bob.get(authorizePath(requestFor(app)))).statusCode).toBe(200);
    });

    it('prompt=consent shows the screen even when consent is remembered', async () => {
      await answerConsent(agent, authorizePath(requestFor(app)), 'authorize');
      const res = await agent.get(authorizePath(requestFor(app, { prompt: 'consent' })));
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Authorize');
    });

    it('prompt=none with remembered consent redirects with a code and no screen', async () => {
      await answerConsent(agent, authorizePath(requestFor(app)), 'authorize');
      expectCodeRedirect(await agent.get(authorizePath(requestFor(app, { prompt: 'none' }))), 'https://app.example/callback?', 'xyz-state', 302);
    });

    it('prompt=none without consent redirects with error=consent_required, state and iss, and issues nothing', async () => {
      const res = await agent.get(authorizePath(requestFor(app, { prompt: 'none' })));
      expect(res.statusCode).toBe(302);
      const to = location(res);
      expect(to.searchParams.get('error')).toBe('consent_required');
      expect(to.searchParams.get('state')).toBe('xyz-state');
      expect(to.searchParams.getAll('iss')).toEqual([ISSUER]);
      expect(await rows('oauth_codes')).toEqual([]);
    });

    it('prompt=none with consent for fewer scopes than requested is consent_required', async () => {
      await answerConsent(agent, authorizePath(requestFor(app, { scope: 'identify' })), 'authorize');
      const res = await agent.get(authorizePath(requestFor(app, { scope: 'identify email', prompt: 'none' })));
      expect(location(res).searchParams.get('error')).toBe('consent_required');
    });

    it('Cancel does not touch a remembered consent', async () => {
      await answerConsent(agent, authorizePath(requestFor(app, { scope: 'identify' })), 'authorize');
      await answerConsent(agent, authorizePath(requestFor(app, { scope: 'identify email' })), 'cancel');
      const [consent] = await rows('oauth_consents');
      expect(consent?.scopes).toBe('identify');
    });
  });
});

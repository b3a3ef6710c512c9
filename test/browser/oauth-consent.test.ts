import { randomBytes } from 'node:crypto';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/core/secrets.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createApplication } from '../../src/modules/applications/applications.service.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS } from '../support/acting.js';

warnIfChromiumMissing('test/browser/oauth-consent.test.ts');

const STATE = 'b r+ö%41/é';

/**
 * The consent flow in a real browser (issue #3 "Done when"): sign in, see the consent screen,
 * Cancel and Authorize, and land on the app's redirect URI with the right parameters. The app's
 * redirect URI is a loopback URI on the test server itself (any port is allowed for 127.0.0.1),
 * so Chromium really follows the 303; the page there is a 404, but its URL is what matters.
 */
describe.skipIf(!chromiumAvailable)('OAuth consent in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let app: Application;
  let callback: string;
  const consoleErrors: string[] = [];

  function authorizeUrl(extra: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: app.id,
      redirect_uri: callback,
      scope: 'identify email',
      state: STATE,
      // A new challenge per request: reusing one is refused (OAUTH-CHECKLIST B10).
      code_challenge: s256Challenge(randomBytes(32).toString('base64url')),
      code_challenge_method: 'S256',
      ...extra,
    });
    return `${served.baseUrl}/app/oauth2/authorize?${query.toString()}`;
  }

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const owner = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'acme', name: 'Acme Inc', password: 'owner password 123' });
    await registerPerson(deps, actingOf(ANONYMOUS), { username: 'robin', name: 'Robin Hood', email: 'robin@example.com', password: 'sherwood forest 1' });
    ({ application: app } = await createApplication(deps, actingOf({ kind: 'person', id: owner.id }), {
      name: 'Acme Reader',
      description: 'Reads your profile to personalise Acme.',
      iconUrl: 'https://icons.acme.example/reader.png',
      redirectUris: ['http://127.0.0.1/oauth-callback'],
      confidential: false,
    }));
    callback = `${served.baseUrl}/oauth-callback`;
    browser = await launchBrowser();
    browser.page.on('console', (m) => {
      // The redirect URI is a 404 on this server on purpose, and so is Chromium's own favicon
      // request there; everything else, CSP violations above all, must be clean.
      const where = m.location().url;
      if (m.type() === 'error' && !where.includes('/oauth-callback') && !where.endsWith('/favicon.ico')) consoleErrors.push(`${m.text()} @ ${where}`);
    });
    browser.page.on('pageerror', (e) => consoleErrors.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('signs in, sees the consent screen, and Cancel lands on the redirect URI with error=access_denied, state and iss', async () => {
    const { page } = browser;
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));

    await page.goto(authorizeUrl());
    await page.waitForURL(/\/login\?next=/);
    await submitSignIn(page, 'robin', 'sherwood forest 1');

    await page.waitForURL(/\/app\/oauth2\/authorize\?/);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Acme Reader wants to access your Gatehouse account');
    const card = page.locator('.consent');
    await expect.poll(() => card.textContent()).toContain('Made by @acme');
    await expect.poll(() => card.textContent()).toContain('Signed in as Robin Hood (@robin)');
    expect(await page.locator('.scope-list li').allTextContents()).toEqual(['✓ Know your name, username and avatar', '✓ Know your e-mail address (robin@example.com, not verified)']);
    expect(await page.getByRole('link', { name: 'Not you? Switch account' }).getAttribute('href')).toMatch(/^\/login\?next=%2Fapp%2Foauth2%2Fauthorize%3F/);
    // Nothing was fetched from anywhere but this server (the app's icon URL included).
    expect(requests.filter((u) => !u.startsWith(served.baseUrl))).toEqual([]);
    await screenshot(page, 'oauth-consent-01-screen');

    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL((url) => url.pathname === '/oauth-callback');
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(callback);
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe(STATE);
    expect(landed.searchParams.get('iss')).toBe(served.baseUrl);
    expect(landed.searchParams.has('code')).toBe(false);
    expect(consoleErrors).toEqual([]);
  });

  it('Authorize lands on the redirect URI with a code, the same state and iss; the code is stored only as its hash', async () => {
    const { page } = browser;
    await page.goto(authorizeUrl());
    await expect.poll(() => page.locator('h1').textContent()).toBe('Acme Reader wants to access your Gatehouse account');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((url) => url.pathname === '/oauth-callback');
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(callback);
    const code = landed.searchParams.get('code');
    expect(code).toMatch(/^ghac_[A-Za-z0-9_-]{43}$/);
    expect(landed.searchParams.get('state')).toBe(STATE);
    expect(landed.searchParams.get('iss')).toBe(served.baseUrl);
    expect(landed.searchParams.has('error')).toBe(false);
    const row = await served.t.services.db.selectFrom('oauth_codes').select(['redirect_uri', 'scopes']).where('code_hash', '=', hashSecret(code as string)).executeTakeFirst();
    expect(row).toEqual({ redirect_uri: callback, scopes: 'identify email' });
    expect(consoleErrors).toEqual([]);
  });

  it('the same request again shows the screen again: a public client on a loopback redirect is never re-authorized silently (RFC 8252 §8.6, issue #21 §5); prompt=consent shows it, fitting a phone', async () => {
    const { page } = browser;
    await page.goto(authorizeUrl());
    await expect.poll(() => page.locator('h1').textContent()).toBe('Acme Reader wants to access your Gatehouse account');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((url) => url.pathname === '/oauth-callback');
    expect(new URL(page.url()).searchParams.get('code')).toMatch(/^ghac_/);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(authorizeUrl({ prompt: 'consent', scope: 'identify email servers' }));
    await expect.poll(() => page.locator('.scope-list li').count()).toBe(3);
    // A string expression: the test project is compiled without DOM types.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'oauth-consent-02-phone');

    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${served.baseUrl}/settings/authorized-apps`);
    await expect.poll(() => page.locator('main h2').allTextContents()).toEqual(['Acme Reader']);
    await screenshot(page, 'oauth-consent-03-authorized-apps');
    // Deauthorizing asks first, naming the app (issue #24).
    await page.getByRole('link', { name: 'Deauthorize Acme Reader…' }).click();
    await page.getByRole('heading', { name: 'Deauthorize Acme Reader?' }).waitFor();
    await page.getByRole('button', { name: 'Deauthorize Acme Reader' }).click();
    await page.waitForURL(/removed=1/);
    await expect.poll(() => page.locator('body').textContent()).toContain('You have not authorized any apps.');
    expect(consoleErrors).toEqual([]);
  });
});

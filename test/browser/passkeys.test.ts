import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { chromiumAvailable, collectProblems, launchBrowser, screenshot, warnIfChromiumMissing, type BrowserSession } from '../support/browser.js';
import { freePort } from '../support/ports.js';
import { seriousViolations } from '../support/axe.js';

warnIfChromiumMissing('test/browser/passkeys.test.ts');

class WallClock extends ManualClock {
  override now(): number {
    return Date.now();
  }
}

const PASSWORD = 'correct horse battery';

/**
 * Passkeys in a real browser (issue #38 §4), with Chromium's virtual authenticator (DevTools
 * WebAuthn domain): register one on Settings → Security, sign out, sign in with it and no password.
 * WebAuthn needs a domain as RP ID (an IP address is refused), so this app's base URL is
 * http://localhost:<port>, not the 127.0.0.1 of serveTestApp.
 */
describe.skipIf(!chromiumAvailable)('passkeys in Chromium', () => {
  let t: TestApp;
  let baseUrl: string;
  let browser: BrowserSession;
  const problems: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    t = await createTestApp({ clock: new WallClock(), env: { GATEHOUSE_BASE_URL: baseUrl } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchBrowser({ width: 390, height: 844 });
    collectProblems(browser.page, problems);
    const cdp = await browser.context.newCDPSession(browser.page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('registers a passkey on Settings → Security and signs in with it, without a password', async () => {
    const { page } = browser;
    await page.goto(`${baseUrl}/register`);
    await page.getByLabel('Username').fill('grace');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL((url) => url.pathname === '/');

    await page.goto(`${baseUrl}/settings/security`);
    await page.getByLabel('Name for a new passkey').fill('Phone');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    // The first passkey is the person's first second factor: ten recovery codes, shown once (issue #38 §4).
    await page.waitForURL((url) => url.pathname === '/settings/security/passkeys');
    await expect.poll(() => page.locator('main').textContent()).toContain('The passkey was added');
    expect(await page.locator('ol.recovery-codes li').count()).toBe(10);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'Done' }).click();
    await page.waitForURL((url) => url.pathname === '/settings/security');
    await expect.poll(() => page.locator('#passkeys').textContent()).toContain('Phone');
    await expect.poll(() => page.locator('#passkeys').textContent()).toContain('never used');
    await screenshot(page, 'passkeys-01-registered');
    // The listed passkey and its remove form, at phone width: axe-clean and nothing scrolls sideways.
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);

    // Signed out: a new browser session with the same authenticator.
    await browser.context.clearCookies();
    await page.goto(`${baseUrl}/login?next=/settings/security`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL((url) => url.pathname === '/settings/security');
    await expect.poll(() => page.locator('header').textContent()).toContain('grace');
    await expect.poll(() => page.locator('main').textContent()).toContain('Signed in with a passkey');
    await expect.poll(() => page.locator('#passkeys').textContent()).toContain('last used');
    await screenshot(page, 'passkeys-02-signed-in');
    expect(problems).toEqual([]);
  });
});

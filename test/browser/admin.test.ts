import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { setAdministrator } from '../../src/modules/accounts/people-admin.service.js';
import { confirmTotp, startTotpEnrolment } from '../../src/modules/mfa/mfa.service.js';
import { seriousViolations } from '../support/axe.js';
import { type BrowserSession, chromiumAvailable, collectProblems, launchBrowser, screenshot, type ServedApp, serveTestApp, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { given } from '../support/given.js';

warnIfChromiumMissing('test/browser/admin.test.ts');

/**
 * Issue #39: the admin pages in Chromium, on a desktop and a phone: the administrator signs in
 * with the second factor, then every kind of admin page (overview, people, a person, a
 * confirmation, apps, an app, servers, a server) is axe-clean and no wider than the window.
 */
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };
const ROOT = { username: 'grace', password: 'compiler pioneer 1' };

describe.skipIf(!chromiumAvailable)('admin pages (Chromium, axe)', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let secret: string;
  const paths: Array<{ name: string; path: string }> = [];
  const problems: string[] = [];

  const code = (at: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: at });

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const grace = await registerPerson(deps, actingOf(ANONYMOUS), { ...ROOT, name: 'Grace Hopper', email: 'grace@example.com' });
    await setAdministrator(deps, operatorActing(Date.now()), grace.id, true);
    secret = (await startTotpEnrolment(deps, personActingOf(grace.id, Date.now()))).secret;
    // Confirmed with the previous step's code (accepted as clock drift), so the sign-in's current code is not a replay.
    await confirmTotp(deps, personActingOf(grace.id, Date.now()), code(Date.now() - 30_000));
    const someone = await given.person(served.t, { username: 'spammer.one', name: 'Sp Ammer', email: 'spam@example.net' });
    const server = await given.server(served.t, { owner: someone, name: 'Spam Central' });
    const bot = await given.bot(served.t, { owner: someone, name: 'Spam Bot' });
    paths.push(
      { name: 'overview', path: '/admin' },
      { name: 'people', path: '/admin/people?q=spam' },
      { name: 'person', path: `/admin/people/${someone.id}` },
      { name: 'disable', path: `/admin/people/${someone.id}/disable` },
      { name: 'delete-person', path: `/admin/people/${someone.id}/delete` },
      { name: 'apps', path: '/admin/apps' },
      { name: 'app', path: `/admin/apps/${bot.client.app.id}` },
      { name: 'servers', path: '/admin/servers' },
      { name: 'server', path: `/admin/servers/${server.id}` },
      { name: 'transfer', path: `/admin/servers/${server.id}/transfer` },
    );
    browser = await launchBrowser(DESKTOP);
    collectProblems(browser.page, problems);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('an administrator signs in with the password and the second factor, and lands on the admin overview', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/admin`);
    await page.getByLabel('Username').fill(ROOT.username);
    await page.getByLabel('Password').fill(ROOT.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/login/second-factor');
    await page.getByLabel('Code').fill(code(Date.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => url.pathname === '/admin');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Admin');
    expect(await page.locator('header.top a[href="/admin"]').getAttribute('aria-current')).toBe('page');
    expect(problems).toEqual([]);
  });

  for (const [device, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    it(`every kind of admin page is axe-clean and fits the window on a ${device}`, async () => {
      const { page } = browser;
      await page.setViewportSize(viewport);
      for (const { name, path } of paths) {
        const response = await page.goto(`${served.baseUrl}${path}`);
        expect(response?.status(), path).toBe(200);
        expect(await seriousViolations(page), path).toEqual([]);
        expect(await page.evaluate<number>('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(viewport.width);
        await screenshot(page, `admin-${device}-${name}`);
      }
      expect(problems).toEqual([]);
    });
  }
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { seriousViolations } from '../support/axe.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { given, type TestBot } from '../support/given.js';

warnIfChromiumMissing('test/browser/chat-a11y.test.ts');

/**
 * Issue #24 accessibility and phone layout, driven as people drive them: skip links, focus on a
 * refused form's message, the phone header's drawer (with and without JavaScript), readable
 * avatar initials, and the consent screen's server picker by keyboard alone (WCAG 3.2.2).
 */
describe.skipIf(!chromiumAvailable)('accessibility and the phone layout in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let bot: TestBot;
  let lancelotServer: string;
  let channelId: string;

  const activeElement = (page: Page) =>
    page.evaluate<string>('(() => { const e = document.activeElement; return e ? e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + "|" + (e.textContent || "").trim().slice(0, 60) : ""; })()');

  beforeAll(async () => {
    served = await serveTestApp();
    const t = served.t;
    const owner = await registerPerson(t.services, actingOf(ANONYMOUS), { username: 'guinevere', name: 'Guinevere', password: 'round table 12' });
    const camelot = await createServer(t.services, personActingOf(owner.id), { name: 'Camelot' });
    channelId = camelot.channels[0]?.id as string;
    lancelotServer = (await createServer(t.services, personActingOf(owner.id), { name: 'Joyous Gard' })).id;
    bot = await given.bot(t, { owner, name: 'Herald Bot' });
    browser = await launchBrowser();
    const { page } = browser;
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'guinevere', 'round table 12');
    await page.waitForURL((url) => url.pathname === '/');
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('the first Tab reaches "Skip to main content"; on a channel the next one skips to the message box', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    await page.keyboard.press('Tab');
    expect(await activeElement(page)).toBe('a|Skip to main content');
    expect(await page.getByRole('link', { name: 'Skip to main content' }).isVisible()).toBe(true);
    await screenshot(page, 'chat-a11y-skip-link', { fullPage: false });
    await page.keyboard.press('Enter');
    expect((await activeElement(page)).startsWith('main#main|')).toBe(true);

    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await activeElement(page)).toBe('a|Skip to the message box');
    await page.keyboard.press('Enter');
    // The fragment navigation lands after the key press returns: wait for it, as a person would.
    await expect.poll(() => new URL(page.url()).hash).toBe('#post');
    await page.keyboard.press('Tab');
    expect(await activeElement(page)).toBe('textarea#content|');
  });

  it('a refused form comes back with focus on its error message', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/settings/password`);
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill('a brand new password 1');
    await page.getByLabel('Confirm new password').fill('a brand new password 1');
    await page.getByLabel('Confirm new password').press('Enter');
    await page.waitForLoadState('load');
    await expect.poll(() => page.evaluate<boolean>('document.activeElement.matches("main .error[role=alert]")')).toBe(true);
    expect(await page.locator('main .error[role=alert]').first().textContent()).not.toBe('');
    await screenshot(page, 'chat-a11y-refused-form-focus', { fullPage: false });
  });

  it('on a phone the header is one row and the channel list is a drawer behind the menu button, without JavaScript too', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    for (const js of [true, false]) {
      if (!js) await page.route('**/assets/*.js', (route) => route.abort());
      await page.goto(`${served.baseUrl}/channels/${channelId}`);
      const header = await page.locator('header.top').boundingBox();
      expect(header?.height).toBeLessThanOrEqual(64);
      const channels = page.getByRole('navigation', { name: 'Channels of Camelot' });
      expect(await channels.isVisible()).toBe(false);
      expect(await page.getByRole('link', { name: 'Developers' }).isVisible()).toBe(false);
      const menuButton = page.locator('header.top summary');
      expect(await menuButton.getAttribute('aria-label')).toBe('Menu');
      // Opened by keyboard: Tab past the skip links and the site name, then Enter.
      for (let i = 0; i < 6 && !(await page.evaluate<boolean>('document.activeElement.matches("header.top summary")')); i += 1) await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      expect(await page.getByRole('link', { name: 'Developers' }).isVisible()).toBe(true);
      expect(await channels.isVisible()).toBe(true);
      expect(await page.getByRole('link', { name: '# general' }).isVisible()).toBe(true);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, `chat-a11y-drawer-open-${js ? 'js' : 'nojs'}`, { fullPage: false });
      if (!js) await page.unroute('**/assets/*.js');
    }
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    // On a desktop the links and the channel list are simply there.
    expect(await page.getByRole('link', { name: 'Developers' }).isVisible()).toBe(true);
    expect(await page.getByRole('navigation', { name: 'Channels of Camelot' }).isVisible()).toBe(true);
    expect(await page.locator('header.top summary').isVisible()).toBe(false);
    // Just wider than a phone, the links wrap inside the header rather than widening the page.
    for (const width of [701, 820]) {
      await page.setViewportSize({ width, height: 860 });
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      expect(await page.getByRole('link', { name: 'Sign out' }).or(page.getByRole('button', { name: 'Sign out' })).isVisible()).toBe(true);
    }
    await screenshot(page, 'chat-a11y-header-820', { fullPage: false });
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('avatar initials contrast at least 4.5:1 with their circle', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/servers/${lancelotServer}/settings/members`);
    await page.evaluate('document.body.insertAdjacentHTML("beforeend", "<span class=\\"avatar\\" id=\\"probe\\">G</span>")');
    const ratio = await page.evaluate<number>(`(() => {
      const probe = getComputedStyle(document.getElementById('probe'));
      const rgb = (c) => c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
      const lum = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
      const a = lum(probe.color), b = lum(probe.backgroundColor);
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    })()`);
    expect(ratio).toBeGreaterThanOrEqual(4.5);
  });

  it('the axe check reports what it finds (an unlabelled field is a critical violation)', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/`);
    await page.evaluate('document.querySelector("main").insertAdjacentHTML("beforeend", "<input type=\\"text\\" id=\\"unlabelled\\">")');
    const found = await seriousViolations(page);
    expect(found.map((v) => v.id)).toContain('label');
  });

  it('the consent screen’s server picker by keyboard alone: arrows choose, nothing happens until Continue, Enter installs', async () => {
    const { page } = browser;
    const link = `${served.baseUrl}/app/oauth2/authorize?client_id=${bot.client.app.id}&scope=bot&permissions=2048`;
    await page.goto(link);
    const before = page.url();
    // Tab to the picker.
    for (let i = 0; i < 30 && !(await activeElement(page)).startsWith('select#server_id'); i += 1) await page.keyboard.press('Tab');
    expect((await activeElement(page)).startsWith('select#server_id')).toBe(true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.waitForTimeout(400);
    // WCAG 3.2.2: choosing changed the choice, not the page.
    expect(page.url()).toBe(before);
    expect(await page.locator('#server_id').inputValue()).toBe(lancelotServer);
    await screenshot(page, 'chat-a11y-consent-picker-chosen');
    await page.keyboard.press('Tab');
    expect(await activeElement(page)).toBe('button|Continue');
    await page.keyboard.press('Enter');
    await page.waitForURL(/server_id=/);
    expect(new URL(page.url()).searchParams.get('server_id')).toBe(lancelotServer);
    await expect.poll(() => page.locator('legend').first().textContent()).toBe('Permissions for Herald Bot in Joyous Gard');
    for (let i = 0; i < 40 && (await activeElement(page)) !== 'button|Authorize'; i += 1) await page.keyboard.press('Tab');
    expect(await activeElement(page)).toBe('button|Authorize');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('h1').textContent()).toBe('Herald Bot was added to Joyous Gard');
    await screenshot(page, 'chat-a11y-consent-installed');
  });
});

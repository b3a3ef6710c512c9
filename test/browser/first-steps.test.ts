import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchBrowser, screenshot, serveTestApp, warnIfChromiumMissing, type BrowserSession, type ServedApp } from '../support/browser.js';

warnIfChromiumMissing('test/browser/first-steps.test.ts');

/**
 * A newcomer's first minutes in a real browser (issue #2 §11): sign up, create a server and a
 * channel, post a message and see it. Screenshots of every page go to test-results/.
 */
describe.skipIf(!chromiumAvailable)('first steps in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  const consoleErrors: string[] = [];
  const failedResponses: string[] = [];

  beforeAll(async () => {
    served = await serveTestApp();
    browser = await launchBrowser();
    // CSP violations and script errors surface as console errors; a missing stylesheet or image
    // as a failed response. (Chromium's own /favicon.ico probe is not the page's doing.)
    browser.page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text());
    });
    browser.page.on('pageerror', (e) => consoleErrors.push(e.message));
    browser.page.on('response', (r) => {
      if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') failedResponses.push(`${r.status()} ${r.url()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('signs up, creates a server and a channel, posts a message and sees it', async () => {
    const { page } = browser;

    await page.goto(`${served.baseUrl}/`);
    await screenshot(page, 'first-steps-01-landing');

    await page.goto(`${served.baseUrl}/register`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Create your account');
    await page.getByLabel('Username').fill('ada');
    await page.getByLabel('Display name').fill('Ada Lovelace');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await screenshot(page, 'first-steps-02-register');
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.waitForURL(`${served.baseUrl}/`);
    await expect.poll(() => page.locator('header').textContent()).toContain('Ada Lovelace');
    await screenshot(page, 'first-steps-03-home');

    // A new server opens on the #general channel it starts with.
    await page.getByLabel('Server name').fill('Analytical Engine');
    await page.getByRole('button', { name: 'Create server' }).click();
    await page.waitForURL(/\/channels\/\d+$/);
    await expect.poll(() => page.locator('.sidebar').first().textContent()).toContain('Analytical Engine');
    await screenshot(page, 'first-steps-04-new-server');

    await page.getByRole('link', { name: 'Server settings' }).click();
    await page.waitForURL(/\/servers\/\d+\/settings$/);
    await screenshot(page, 'first-steps-05-server-settings');
    await page.getByRole('navigation', { name: 'Server settings' }).getByRole('link', { name: 'Channels', exact: true }).click();
    await page.waitForURL(/\/servers\/\d+\/settings\/channels$/);
    await page.getByLabel('Name', { exact: true }).fill('engine-room');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.waitForURL(/done=channel-created/);
    await expect.poll(() => page.locator('body').textContent()).toContain('Channel created.');
    await screenshot(page, 'first-steps-06-channel-created');

    await page.getByRole('link', { name: '# engine-room' }).first().click();
    await page.waitForURL(/\/channels\/\d+$/);
    await expect.poll(() => page.locator('h1').textContent()).toBe('# engine-room');
    await screenshot(page, 'first-steps-07-empty-channel');

    const text = 'Hello, <b>world</b>! First message from Chromium.';
    await page.getByLabel('Message #engine-room').fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/channels\/\d+/);
    const last = page.locator('.messages .message').last();
    await expect.poll(() => last.locator('.body').textContent()).toBe(text);
    await expect.poll(() => last.textContent()).toContain('Ada Lovelace');
    expect(await last.locator('.body b').count()).toBe(0); // shown as text, never as markup
    await screenshot(page, 'first-steps-08-message-posted');

    // The same page on a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    // No sideways scrolling (evaluated in the page: the DOM is not in this project's types).
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'first-steps-09-channel-on-phone');

    expect(consoleErrors).toEqual([]);
    expect(failedResponses).toEqual([]);
  });

  it('renders the API reference page without errors', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 860 });
    const response = await page.goto(`${served.baseUrl}/api/docs`);
    expect(response?.status()).toBe(200);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Gatehouse API reference');
    await screenshot(page, 'api-docs-top', { fullPage: false });
    const operations = page.locator('article.card');
    if ((await operations.count()) > 0) {
      await operations.nth(Math.min(2, (await operations.count()) - 1)).scrollIntoViewIfNeeded();
      await screenshot(page, 'api-docs-operation', { fullPage: false });
    }
    expect(consoleErrors).toEqual([]);
    expect(failedResponses).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { type BrowserSession, chromiumAvailable, collectProblems, launchBrowser, screenshot, type ServedApp, serveTestApp, signInWithForm, warnIfChromiumMissing } from '../support/browser.js';
import { given } from '../support/given.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/page-fit.test.ts');

/**
 * Issue #36 §5, "polish": on a phone the header names the server of the channel shown; the
 * channel view is the window's height, the history pane taking what is left, whatever else the
 * page holds (a topic that wraps); and the URL generator's answer is in view when it arrives.
 */
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };
const TALL = { width: 1440, height: 1100 };
const ADA = { username: 'ada', password: 'analytical engine 1' };
const SERVER_NAME = 'Difference Engine Society of London';

describe.skipIf(!chromiumAvailable)('pages fit the window they are shown in (Chromium)', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let channelId: string;
  let appId: string;
  const problems: string[] = [];

  /** The element's box against the window: wholly inside it, and with a height. */
  const inWindow = (page: Page, selector: string) =>
    page.evaluate<boolean>(`(() => {
      const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
      return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;
    })()`);
  const pageScrolls = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollHeight > window.innerHeight');
  const paneHeight = (page: Page) => page.evaluate<number>(`document.querySelector('.history').getBoundingClientRect().height`);

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const ada = await registerPerson(deps, actingOf(ANONYMOUS), { ...ADA, name: 'Ada Lovelace' });
    const server = await createServer(deps, personActingOf(ada.id), { name: SERVER_NAME });
    // A topic long enough to wrap onto several lines on a phone.
    const channel = await createChannel(deps, operatorActing(), server.id, { name: 'workshop', topic: 'Where the engine is built: gears, cards, the mill and the store, and the tables we print from them every week.' });
    channelId = channel.id;
    for (let i = 1; i <= 40; i += 1) await postMessage(deps, actingOf(person(ada.id)), channelId, `Line ${i} of the workshop log`);
    appId = (await given.bot(served.t, { owner: ada, name: 'Helper Bot' })).client.app.id;
    browser = await launchBrowser(DESKTOP);
    collectProblems(browser.page, problems);
    await signInWithForm(browser.page, served.baseUrl, ADA);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('on a 390×844 phone the header names the channel’s server, in one row; on a desktop the sidebar names it', async () => {
    const { page } = browser;
    await page.setViewportSize(PHONE);
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    const place = page.locator('header.top a.place');
    expect(await place.isVisible()).toBe(true);
    expect(await place.textContent()).toBe(SERVER_NAME);
    expect(await place.getAttribute('href')).toMatch(/^\/servers\/\d+$/);
    expect((await page.locator('header.top').boundingBox())?.height).toBeLessThanOrEqual(64);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, 'page-fit-01-phone-header', { fullPage: false });
    await page.setViewportSize(DESKTOP);
    expect(await place.isVisible()).toBe(false);
    expect(problems).toEqual([]);
  });

  it('the channel view is the window’s height: the composer is in view without scrolling the page, and a taller window gives the pane the difference', async () => {
    const { page } = browser;
    const heights: number[] = [];
    for (const viewport of [PHONE, DESKTOP, TALL]) {
      await page.setViewportSize(viewport);
      await page.goto(`${served.baseUrl}/channels/${channelId}`);
      expect(await pageScrolls(page)).toBe(false);
      expect(await inWindow(page, '#post button[type=submit]')).toBe(true);
      heights.push(await paneHeight(page));
    }
    await screenshot(page, 'page-fit-02-channel-tall', { fullPage: false });
    // The window grew by 240 px from DESKTOP to TALL, and nothing else on the page got taller.
    expect(Math.round((heights[2] as number) - (heights[1] as number))).toBe(TALL.height - DESKTOP.height);
    expect(problems).toEqual([]);
  });

  it('the URL generator’s link is in view when the page with it arrives, on a phone and a desktop', async () => {
    const { page } = browser;
    for (const viewport of [PHONE, DESKTOP]) {
      await page.setViewportSize(viewport);
      await page.goto(`${served.baseUrl}/developers/applications/${appId}/oauth2/url-generator`);
      await page.locator('input[name=scope][value=bot]').check();
      await page.getByRole('button', { name: 'Generate URL' }).click();
      await page.waitForURL(/url-generator\?.*#result$/);
      await page.locator('#generated-url').waitFor();
      await expect.poll(() => inWindow(page, '#generated-url')).toBe(true);
    }
    await screenshot(page, 'page-fit-03-url-generated', { fullPage: false });
    // A selection that makes no link: why not, in view.
    await page.goto(`${served.baseUrl}/developers/applications/${appId}/oauth2/url-generator`);
    await page.getByRole('button', { name: 'Generate URL' }).click();
    await page.waitForURL(/#result$/);
    await expect.poll(() => inWindow(page, '#result .error')).toBe(true);
    expect(await page.locator('#result .error').textContent()).toContain('Tick at least one scope.');
    expect(problems).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { chromiumAvailable, launchBrowser, screenshot, serveTestApp, warnIfChromiumMissing, type BrowserSession, type ServedApp, collectProblems, signInWithForm } from '../support/browser.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/chat-read.test.ts');

const PHONE = { width: 390, height: 844 };
const ADA = { username: 'ada', password: 'analytical engine 1843' };

/**
 * Issue #24 "Reading", in Chromium: a channel opens at its newest message with the composer in
 * view, 500 messages of history are reachable by scrolling up (JavaScript) or by the "Load older
 * messages" link (without), "Jump to present" returns, and unread channels are marked.
 */
describe.skipIf(!chromiumAvailable)('reading a channel in Chromium', () => {
  let served: ServedApp;
  let general: string;
  let news: string;
  let bo: string;
  const posted: string[] = [];
  const sessions: BrowserSession[] = [];
  const problems: string[] = [];

  async function open(viewport?: { width: number; height: number }, javaScriptEnabled = true): Promise<Page> {
    const session = await launchBrowser(viewport, { javaScriptEnabled });
    sessions.push(session);
    const { page } = session;
    collectProblems(page, problems);
    await signInWithForm(page, served.baseUrl, ADA);
    return page;
  }

  /** Whether the element is wholly inside the window (and, for messages, inside the history pane). */
  const inView = (page: Page, selector: string) =>
    page.evaluate<boolean>(`(() => {
      const el = document.querySelector(${JSON.stringify(selector)});
      if (!el) return false;
      const r = el.getBoundingClientRect();
      const pane = document.querySelector('.history')?.getBoundingClientRect();
      const inPane = !el.closest('.history') || !pane || (r.top >= pane.top - 1 && r.bottom <= pane.bottom + 1);
      return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0 && inPane;
    })()`);
  /** Scrolls the history pane to its top (older pages load from there with JavaScript). */
  const scrollPaneUp = (page: Page) => page.evaluate(`document.querySelector('.history').scrollBy(0, -1e6)`);
  const shownCount = `document.querySelectorAll('.history li[data-id]').length`;
  const fontWeight = (page: Page, selector: string) => page.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).fontWeight`).then(Number);

  const shownIds = (page: Page) => page.locator('.history li[data-id]').evaluateAll((items) => items.map((li) => li.getAttribute('data-id') ?? ''));

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const ada = await registerPerson(deps, actingOf(ANONYMOUS), { ...ADA, name: 'Ada Lovelace' });
    bo = (await registerPerson(deps, actingOf(ANONYMOUS), { username: 'bo', name: 'Bo Babbage', password: 'difference engine 1822' })).id;
    const server = await createServer(deps, personActingOf(ada.id), { name: 'Engines' });
    await addMember(deps, operatorActing(), server.id, bo);
    general = server.channels[0]?.id as string;
    news = (await createChannel(deps, operatorActing(), server.id, { name: 'news' })).id;
    // Runs of a few messages per author, so grouping shows.
    for (let i = 1; i <= 500; i += 1) {
      const author = Math.floor((i - 1) / 3) % 2 === 0 ? bo : ada.id;
      posted.push((await postMessage(deps, actingOf(person(author)), general, `history ${i}${i % 7 === 0 ? ' — a longer line that wraps on a phone, to show how a message body flows.' : ''}`)).id);
    }
  });

  afterAll(async () => {
    for (const session of sessions) await session.close();
    await served?.close();
  });

  for (const [label, viewport] of [
    ['desktop', undefined],
    ['phone', PHONE],
  ] as const) {
    it(`opens at the newest message with the composer in view (${label})`, async () => {
      const page = await open(viewport);
      await page.goto(`${served.baseUrl}/channels/${general}`);
      await screenshot(page, `chat-read-01-newest-${label}`, { fullPage: false });
      expect(await inView(page, `#m${posted[499]}`)).toBe(true);
      expect(await inView(page, '#content')).toBe(true);
      // On a desktop the whole view fits; on a phone the channel list above is scrolled past.
      if (!viewport) expect(await page.evaluate('window.scrollY')).toBe(0);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    });
  }

  it('scrolling up loads all 500 messages back to the first, keeping what is on screen in place; "Jump to present" returns', async () => {
    const page = await open();
    await page.goto(`${served.baseUrl}/channels/${general}`);
    expect(await shownIds(page)).toEqual(posted.slice(450));
    expect(await page.locator('[data-jump]').isHidden()).toBe(true);

    // The first load: the message at the top stays where it was once older ones are inserted above.
    const top = `#m${posted[450]}`;
    await scrollPaneUp(page);
    const before = await page.locator(top).evaluate((el) => el.getBoundingClientRect().top);
    await expect.poll(() => page.evaluate<boolean>(`${shownCount} >= 100`)).toBe(true);
    const after = await page.locator(top).evaluate((el) => el.getBoundingClientRect().top);
    expect(Math.abs(after - before)).toBeLessThan(3);
    await screenshot(page, 'chat-read-02-older-loaded', { fullPage: false });

    for (let round = 0; round < 20 && !(await page.getByText('This is the start of #general.').isVisible()); round += 1) {
      const count = (await shownIds(page)).length;
      await scrollPaneUp(page);
      await expect.poll(() => page.evaluate<boolean>(`${shownCount} > ${count} || !document.querySelector('a[data-older]')`)).toBe(true);
    }
    expect(await shownIds(page)).toEqual(posted);
    expect(await page.locator('.history li.day-separator').count()).toBe(1);
    await scrollPaneUp(page);
    expect(await inView(page, `#m${posted[0]}`)).toBe(true);
    expect(await page.locator('[data-jump]').isVisible()).toBe(true);
    await screenshot(page, 'chat-read-03-first-message', { fullPage: false });

    await page.locator('[data-jump]').click();
    await expect.poll(() => page.evaluate<boolean>(`Math.abs(document.querySelector('.history').scrollTop) < 2`)).toBe(true);
    expect(await inView(page, `#m${posted[499]}`)).toBe(true);
    expect(await page.url()).toBe(`${served.baseUrl}/channels/${general}`);
    await expect.poll(() => page.evaluate<boolean>(`document.querySelector('[data-jump]').hidden === true`)).toBe(true);
    expect(problems).toEqual([]);
  });

  it('without JavaScript: "Load older messages" opens the previous 50 at their newest, and a link leads back to the present', async () => {
    const page = await open(undefined, false);
    await page.goto(`${served.baseUrl}/channels/${general}`);
    expect(await inView(page, `#m${posted[499]}`)).toBe(true);
    await page.getByRole('link', { name: 'Load older messages' }).click();
    await page.waitForURL((url) => url.searchParams.get('before') === posted[450]);
    expect(await shownIds(page)).toEqual(posted.slice(400, 450));
    expect(await inView(page, `#m${posted[449]}`)).toBe(true);
    await screenshot(page, 'chat-read-04-nojs-older', { fullPage: false });
    await page.getByRole('link', { name: /Jump to present/ }).first().click();
    await page.waitForURL((url) => url.pathname === `/channels/${general}` && url.search === '');
    expect(await shownIds(page)).toEqual(posted.slice(450));
  });

  it('a channel with messages Ada has not read is bold; opening it shows "New messages" above the first, then it is read', async () => {
    const page = await open();
    await page.goto(`${served.baseUrl}/channels/${news}`);
    const deps = served.t.services;
    const first = await postMessage(deps, actingOf(person(bo)), news, 'Release 2.0 is out!');
    await postMessage(deps, actingOf(person(bo)), news, 'Notes are in the wiki.');
    await page.goto(`${served.baseUrl}/channels/${general}`);
    const link = page.locator(`.sidebar a[href="/channels/${news}"]`);
    expect(await fontWeight(page, `.sidebar a[href="/channels/${news}"]`)).toBeGreaterThanOrEqual(700);
    expect(await link.textContent()).toContain('(unread)');
    await screenshot(page, 'chat-read-05-unread-channel', { fullPage: false });

    await link.click();
    await page.waitForURL((url) => url.pathname === `/channels/${news}`);
    const marker = page.locator('#new-messages', { hasText: 'New messages' });
    expect(await marker.isVisible()).toBe(true);
    expect(await page.evaluate(`document.getElementById('new-messages').nextElementSibling.id`)).toBe(`m${first.id}`);
    expect(await fontWeight(page, `.sidebar a[href="/channels/${news}"]`)).toBeLessThan(700);
    await screenshot(page, 'chat-read-06-new-messages-marker', { fullPage: false });

    await page.reload();
    expect(await page.locator('#new-messages').count()).toBe(0);

    // A message that arrives live while the page is open and visible is read there and then.
    const live = await postMessage(deps, actingOf(person(bo)), news, 'One more thing.');
    await page.locator(`#m${live.id}`).waitFor();
    const mark = () => deps.db.selectFrom('channel_reads').select('last_read_id').where('channel_id', '=', news).where('user_id', '<>', bo).executeTakeFirst();
    await expect.poll(async () => String((await mark())?.last_read_id)).toBe(live.id);
  });
});

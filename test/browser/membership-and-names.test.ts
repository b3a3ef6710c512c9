import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { stored } from '../support/stored.js';

warnIfChromiumMissing('test/browser/membership-and-names.test.ts');

/**
 * Issue #21 §3 and §4 in Chromium: an invited person accepts the invitation from their home page,
 * and a name holding a right-to-left override (stored before the name rule refused it) stays
 * isolated: it cannot move the APP badge and the time in front of it.
 */
describe.skipIf(!chromiumAvailable)('membership by invitation and isolated names, in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let channelId: string;
  let serverId: string;

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const owner = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'hedy', name: 'Hedy Lamarr', password: 'frequency hopping 1' });
    await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: 'analytical engine 2' });
    const server = await createServer(deps, personActingOf(owner.id), { name: 'Inventors' });
    serverId = server.id;
    channelId = server.channels[0]?.id as string;
    // A webhook message whose name predates the rule: U+202E + "ESUOHETAG" reads as GATEHOUSE.
    await stored.insertMessage({ services: deps }, {
      id: deps.ids.next(),
      channelId,
      authorId: '1000000000000000001',
      webhookId: '1000000000000000001',
      applicationId: null,
      authorName: '\u202eESUOHETAG',
      authorAvatarUrl: null,
      content: 'Your account is locked',
      embeds: [],
      createdAt: deps.clock.now(),
    });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  async function signIn(username: string, password: string): Promise<void> {
    const { page } = browser;
    await browser.context.clearCookies();
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, username, password);
    await page.waitForURL((url) => url.pathname === '/');
  }

  it('the owner invites by username; the person accepts on their home page and lands in the server', async () => {
    const { page } = browser;
    await signIn('hedy', 'frequency hopping 1');
    await page.goto(`${served.baseUrl}/servers/${serverId}/settings/members`);
    await page.getByLabel('Username').fill('ada');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toContain('Invitation sent.');

    await signIn('ada', 'analytical engine 2');
    await expect.poll(() => page.locator('.invitations').textContent()).toContain('Hedy Lamarr invited you to join Inventors.');
    await screenshot(page, 'membership-01-invitation', { fullPage: false });
    await page.getByRole('button', { name: 'Accept' }).click();
    await page.waitForURL((url) => url.pathname === `/channels/${channelId}`);
  });

  it('a name with a right-to-left override stays isolated: the APP badge and the time stay after it', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    const item = page.locator('li.message', { hasText: 'Your account is locked' });
    const boxes = await item.evaluate((li) => {
      const box = (selector: string) => li.querySelector(selector)?.getBoundingClientRect();
      const author = box('.author');
      const badge = box('.badge');
      const time = box('time');
      return { author: author?.right ?? NaN, badgeLeft: badge?.left ?? NaN, badgeRight: badge?.right ?? NaN, time: time?.left ?? NaN };
    });
    // A string: the test files are compiled without the DOM library.
    const isolate = await page.evaluate(`getComputedStyle([...document.querySelectorAll('li.message')].find((li) => li.textContent.includes('Your account is locked')).querySelector('.author')).unicodeBidi`);
    await screenshot(page, 'membership-02-isolated-name', { fullPage: false });
    expect(boxes.badgeLeft).toBeGreaterThanOrEqual(boxes.author);
    expect(boxes.time).toBeGreaterThanOrEqual(boxes.badgeRight);
    expect(isolate).toBe('isolate');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { getServer } from '../../src/modules/directory/servers.service.js';
import { actingOf, ANONYMOUS, operatorActing } from '../support/acting.js';
import { seriousViolations } from '../support/axe.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, signInWithForm, warnIfChromiumMissing } from '../support/browser.js';
import { given } from '../support/given.js';

warnIfChromiumMissing('test/browser/server-transfer.test.ts');

/**
 * Issue #39: the owner transfers a server from Server settings → Danger zone, as a desktop and as
 * a 390×844 phone: the picker and its acknowledgement are axe-clean and fit the width, a refused
 * submit comes back with its message, and a completed one leaves the server with the member chosen.
 */
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

describe.skipIf(!chromiumAvailable)('Danger zone → Transfer ownership in a browser', () => {
  let served: ServedApp;
  let browser: BrowserSession;

  beforeAll(async () => {
    served = await serveTestApp();
    browser = await launchBrowser(DESKTOP);
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    it(`${size}: pick a member, tick, transfer; axe-clean and no sideways scrolling`, async () => {
      const { t, baseUrl } = served;
      const { page } = browser;
      await browser.context.clearCookies();
      await page.setViewportSize(viewport);
      const password = 'a long enough password 1';
      const owner = await registerPerson(t.services, actingOf(ANONYMOUS), { username: `owner${size}`, name: 'Olive Owner', email: null, password });
      const heir = await given.person(t, { name: 'Hugo Heir' });
      const server = await given.server(t, { owner, name: `Keep ${size}` });
      await addMember(t.services, operatorActing(), server.id, heir.id);
      await signInWithForm(page, baseUrl, { username: owner.username, password });

      await page.goto(`${baseUrl}/servers/${server.id}/settings`);
      await page.getByRole('link', { name: 'Transfer ownership…' }).click();
      await page.waitForURL((url) => url.pathname === `/servers/${server.id}/transfer`);
      const found: Record<string, unknown> = {};
      const check = async (name: string) => {
        const violations = await seriousViolations(page);
        if (violations.length) found[`${name} axe`] = violations;
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        if (width > viewport.width) found[`${name} scrollWidth`] = width;
        await screenshot(page, `server-transfer-${name}-${size}`);
      };
      await check('form');

      // The browser's own required-field checks stop an empty submit; with them off the server's answer shows.
      await page.evaluate('document.querySelector("form[action$=\\"/transfer\\"]").noValidate = true');
      await page.getByLabel('New owner').selectOption(heir.id);
      await page.getByRole('button', { name: 'Transfer ownership' }).click();
      await page.waitForLoadState('load');
      expect(await page.getByRole('alert').textContent()).toBe('Tick the box to confirm that the server will belong to them.');
      await check('refused');
      expect((await getServer(t.services, server.id))?.ownerId).toBe(owner.id);

      await page.getByLabel('New owner').selectOption(heir.id);
      await page.getByRole('checkbox').check();
      await page.getByRole('button', { name: 'Transfer ownership' }).click();
      await page.waitForURL((url) => url.pathname === '/');
      expect(await page.getByRole('status').first().textContent()).toContain('Ownership transferred');
      expect((await getServer(t.services, server.id))?.ownerId).toBe(heir.id);
      expect(found).toEqual({});
    });
  }
});

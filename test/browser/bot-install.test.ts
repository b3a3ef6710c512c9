import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createApplication } from '../../src/modules/applications/applications.service.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';

warnIfChromiumMissing('test/browser/bot-install.test.ts');

/**
 * The whole bot install in a real browser (issue #4 "Done when"): the owner makes the install link
 * with the portal's URL generator (scope bot, a few permissions, no redirect URI), follows it,
 * picks a server, unticks one permission, authorizes, sees the confirmation, and finds the app
 * with exactly the granted permissions under Server settings → Integrations.
 */
describe.skipIf(!chromiumAvailable)('bot install in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let app: Application;
  let sherwood: string;
  let botUserId: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const owner = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'robin', name: 'Robin Hood', password: 'sherwood forest 1' });
    ({ application: app } = await createApplication(deps, actingOf({ kind: 'person', id: owner.id }), {
      name: 'Merry Bot',
      description: 'Greets new members and keeps #general tidy.',
      iconUrl: 'https://icons.merry.example/bot.png',
      redirectUris: [],
      confidential: true,
    }));
    ({ botUserId } = await enableBot(deps, actingOf(OPERATOR), app.id));
    sherwood = (await createServer(deps, personActingOf(owner.id), { name: 'Sherwood Forest' })).id;
    await createServer(deps, personActingOf(owner.id), { name: 'Nottingham' });
    browser = await launchBrowser();
    browser.page.on('console', (m) => {
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) consoleErrors.push(`${m.text()} @ ${m.location().url}`);
    });
    browser.page.on('pageerror', (e) => consoleErrors.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('from the URL generator’s link to the Integrations page', async () => {
    const { page } = browser;
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));

    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'robin', 'sherwood forest 1');
    await page.waitForURL((url) => url.pathname === '/');

    // The developer portal's URL generator: scope bot and four permissions, no redirect URI.
    await page.goto(`${served.baseUrl}/developers/applications/${app.id}/oauth2/url-generator`);
    await page.locator('input[name="scope"][value="bot"]').check();
    for (const name of ['VIEW_CHANNEL', 'SEND_MESSAGES', 'MANAGE_WEBHOOKS', 'ADMINISTRATOR']) await page.locator(`input[name="permission"][value="${name}"]`).check();
    await page.getByRole('button', { name: 'Generate URL' }).click();
    await page.waitForURL(/url-generator\?/);
    const link = (await page.locator('#generated-url').inputValue()).trim();
    const expected = Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.MANAGE_WEBHOOKS | Permission.ADMINISTRATOR;
    const generated = new URL(link);
    expect(generated.pathname).toBe('/app/oauth2/authorize');
    expect(generated.searchParams.get('scope')).toBe('bot');
    expect(generated.searchParams.get('permissions')).toBe(expected.toString());
    await screenshot(page, 'bot-install-01-url-generator');

    // The consent screen: no server chosen yet, so the picker comes first.
    await page.goto(link);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Add Merry Bot to a server');
    expect(await page.getByRole('button', { name: 'Authorize' }).count()).toBe(0);
    expect(await page.locator('#server_id option').allTextContents()).toEqual(['Select a server', 'Sherwood Forest', 'Nottingham']);
    // Choosing a server changes nothing until Continue (WCAG 3.2.2 On Input).
    await page.locator('#server_id').selectOption({ label: 'Sherwood Forest' });
    expect(page.url()).not.toContain('server_id=');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/server_id=/);
    await expect.poll(() => page.locator('fieldset.permission-list > legend').textContent()).toBe('Permissions for Merry Bot in Sherwood Forest');
    const grantable = page.locator('input[name="permission"]:not([disabled])');
    const values: (string | null)[] = [];
    for (let i = 0; i < (await grantable.count()); i += 1) values.push(await grantable.nth(i).getAttribute('value'));
    expect(values).toEqual(['VIEW_CHANNEL', 'MANAGE_WEBHOOKS', 'SEND_MESSAGES']);
    await expect.poll(() => page.locator('.not-grantable').textContent()).toContain('Never granted: a bot here is never an administrator');

    await page.getByLabel('Send messages').uncheck();
    // Nothing was fetched from anywhere but this server (the app's icon URL included).
    expect(requests.filter((u) => !u.startsWith(served.baseUrl))).toEqual([]);
    await screenshot(page, 'bot-install-02-consent');

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'bot-install-03-consent-phone');
    await page.setViewportSize({ width: 1280, height: 860 });

    await page.getByRole('button', { name: 'Authorize' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Merry Bot was added to Sherwood Forest');
    expect(await page.locator('.pill').allTextContents()).toEqual(['View channels', 'Manage webhooks']);
    await screenshot(page, 'bot-install-04-confirmation');

    await page.getByRole('link', { name: 'See it in Integrations' }).click();
    await page.waitForURL((url) => url.pathname === `/servers/${sherwood}/settings/integrations`);
    const entry = page.locator(`#app-${app.id}`);
    await expect.poll(() => entry.locator('h3').textContent()).toBe('Merry Bot BOT');
    expect(await entry.locator('.pill').allTextContents()).toEqual(['View channels', 'Manage webhooks']);
    await expect.poll(() => entry.textContent()).toContain('Added by @robin');
    await screenshot(page, 'bot-install-05-integrations');

    // The role really holds what the page says.
    const role = await served.t.services.db.selectFrom('roles').select(['name', 'permissions']).where('server_id', '=', sherwood).where('managed_application_id', '=', app.id).executeTakeFirst();
    expect(role).toEqual({ name: 'Merry Bot', permissions: (Permission.VIEW_CHANNEL | Permission.MANAGE_WEBHOOKS).toString() });
    const member = await served.t.services.db.selectFrom('members').select('user_id').where('server_id', '=', sherwood).where('user_id', '=', botUserId).executeTakeFirst();
    expect(member).toBeDefined();
    expect(consoleErrors).toEqual([]);
  });
});

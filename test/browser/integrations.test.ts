import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createApplication } from '../../src/modules/applications/applications.service.js';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';

warnIfChromiumMissing('test/browser/integrations.test.ts');

/**
 * Issue #23 "Done when", in Chromium: the `webhook.incoming` consent screen's channel picker
 * (with the keyboard, and on a phone's width), and the webhook settings page showing the plain,
 * Slack and GitHub URLs with working copy buttons.
 */
describe.skipIf(!chromiumAvailable)('Integrations in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let app: Application;
  let callback: string;
  let general: Channel;
  let deploys: Channel;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const maker = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'statusco', name: 'Status Co', password: 'maker password 123' });
    const robin = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'robin', name: 'Robin Hood', password: 'sherwood forest 1' });
    ({ application: app } = await createApplication(deps, actingOf({ kind: 'person', id: maker.id }), {
      name: 'Status Feed',
      description: 'Posts status changes.',
      redirectUris: ['http://127.0.0.1/hook-callback'],
      confidential: false,
    }));
    callback = `${served.baseUrl}/hook-callback`;
    const server = await createServer(deps, personActingOf(robin.id), { name: 'Sherwood' });
    general = server.channels[0] as Channel;
    deploys = await createChannel(deps, operatorActing(), server.id, { name: 'deploys' });
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: served.baseUrl });
    browser.page.on('console', (m) => {
      const where = m.location().url;
      if (m.type() === 'error' && !where.includes('/hook-callback') && !where.endsWith('/favicon.ico')) consoleErrors.push(`${m.text()} @ ${where}`);
    });
    browser.page.on('pageerror', (e) => consoleErrors.push(e.message));

    const { page } = browser;
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'robin', 'sherwood forest 1');
    await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  function authorizeUrl(verifier: string): string {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: app.id,
      redirect_uri: callback,
      scope: 'webhook.incoming',
      state: 'st',
      code_challenge: s256Challenge(verifier),
      code_challenge_method: 'S256',
    });
    return `${served.baseUrl}/app/oauth2/authorize?${query.toString()}`;
  }

  it('the channel picker is chosen with the keyboard, fits a phone, and its code is exchanged for the webhook', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    const verifier = randomBytes(32).toString('base64url');
    await page.goto(authorizeUrl(verifier));
    await expect.poll(() => page.locator('h1').textContent()).toBe('Status Feed wants to post messages in a channel');
    const picker = page.getByLabel('Post to server and channel');
    expect(await picker.locator('optgroup').getAttribute('label')).toBe('Sherwood');
    expect(await picker.locator('option:not([disabled])').allTextContents()).toEqual(['# general (Sherwood)', '# deploys (Sherwood)']);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'integrations-01-channel-picker-phone');

    // Keyboard only: focus the picker, move to the second channel, Tab to Authorize, press Enter.
    await picker.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await picker.inputValue()).toBe(deploys.id);
    const authorize = page.getByRole('button', { name: 'Authorize' });
    await authorize.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/hook-callback');
    const landed = new URL(page.url());
    const code = landed.searchParams.get('code') as string;
    expect(landed.searchParams.get('state')).toBe('st');
    expect(landed.searchParams.get('iss')).toBe(served.baseUrl);

    const token = await fetch(`${served.baseUrl}/api/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback, client_id: app.id, code_verifier: verifier }),
    });
    expect(token.status).toBe(200);
    const webhook = ((await token.json()) as { webhook: Record<string, unknown> }).webhook;
    expect(webhook['name']).toBe('Status Feed');
    expect(Object.values(webhook)).toContain(deploys.id);
    await page.setViewportSize({ width: 1280, height: 860 });
    expect(consoleErrors).toEqual([]);
  });

  it('Cancel on the picker needs no channel and lands with access_denied', async () => {
    const { page } = browser;
    await page.goto(authorizeUrl(randomBytes(32).toString('base64url')));
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL((url) => url.pathname === '/hook-callback');
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');
  });

  it('the webhook settings show the plain, Slack and GitHub URLs once, each with a copy button that copies it', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/channels/${general.id}/settings/integrations`);
    await page.getByLabel('Name', { exact: true }).fill('Builds');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect.poll(() => page.locator('#issued-title').textContent()).toBe('Webhook created: Builds');
    const plain = await page.locator('#webhook-url').inputValue();
    expect(plain).toMatch(new RegExp(`^${served.baseUrl}/api/v1/webhooks/\\d+/ghwt_`));
    expect(await page.locator('#webhook-url-slack').inputValue()).toBe(`${plain}/slack`);
    expect(await page.locator('#webhook-url-github').inputValue()).toBe(`${plain}/github`);
    for (const id of ['webhook-url', 'webhook-url-slack', 'webhook-url-github']) expect(await page.locator(`button[data-copy="${id}"]`).isVisible()).toBe(true);
    await screenshot(page, 'integrations-02-three-urls');

    await page.locator('button[data-copy="webhook-url-github"]').click();
    await expect.poll(() => page.locator('button[data-copy="webhook-url-github"]').textContent()).toBe('Copied');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(`${plain}/github`);

    // The Slack URL works as shown.
    const slack = await fetch(`${plain}/slack`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: '*hello*' }) });
    expect(slack.status).toBe(200);

    // Shown once: opening the page again shows no URL.
    await page.goto(`${served.baseUrl}/channels/${general.id}/settings/integrations`);
    await expect.poll(() => page.locator('.webhooks strong:not(.image-upload strong)').allTextContents()).toEqual(['Builds']);
    expect(await page.locator('#webhook-url').count()).toBe(0);
    // The webhook made through the consent screen is listed here too, with the app as its name.
    await page.goto(`${served.baseUrl}/channels/${deploys.id}/settings/integrations`);
    await expect.poll(() => page.locator('.webhooks strong:not(.image-upload strong)').allTextContents()).toEqual(['Status Feed']);
    expect(consoleErrors).toEqual([]);
  });
});

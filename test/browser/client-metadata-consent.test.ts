import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS } from '../support/acting.js';

warnIfChromiumMissing('test/browser/client-metadata-consent.test.ts');

/**
 * Issue #41 §3: the consent screen of a client that names itself with a client ID metadata
 * document, in Chromium. The document is served on a loopback port (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE),
 * and its redirect URI is a loopback URI on the test server itself, so Chromium follows the 303.
 */
describe.skipIf(!chromiumAvailable)('a client ID metadata document’s consent screen in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let documents: Server;
  let clientId = '';

  beforeAll(async () => {
    served = await serveTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    await registerPerson(served.t.services, actingOf(ANONYMOUS), { username: 'robin', name: 'Robin Hood', password: 'sherwood forest 1' });
    documents = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: clientId, client_name: 'Notes agent', redirect_uris: [`${served.baseUrl}/oauth-callback`], token_endpoint_auth_method: 'none' }));
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    clientId = `http://127.0.0.1:${(documents.address() as AddressInfo).port}/oauth/client.json`;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    documents?.closeAllConnections();
    await new Promise<void>((resolve) => (documents ? documents.close(() => resolve()) : resolve()));
  });

  it('names the document’s host first, the app’s name only as a claim, and Authorize lands on the redirect URI with a code', async () => {
    const { page } = browser;
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: `${served.baseUrl}/oauth-callback`,
      scope: 'identify',
      state: 'st',
      code_challenge: s256Challenge(randomBytes(32).toString('base64url')),
      code_challenge_method: 'S256',
    });
    await page.goto(`${served.baseUrl}/app/oauth2/authorize?${query.toString()}`);
    await page.waitForURL(/\/login\?next=/);
    await submitSignIn(page, 'robin', 'sherwood forest 1');
    await page.waitForURL(/\/app\/oauth2\/authorize\?/);
    const host = new URL(clientId).host;
    await expect.poll(() => page.locator('h1').textContent()).toBe(`An app at ${host} wants to access your Gatehouse account`);
    const card = page.locator('.consent');
    await expect.poll(() => card.textContent()).toContain(`App at ${host}, not reviewed`);
    await expect.poll(() => card.textContent()).toContain('it calls itself “Notes agent”');
    await screenshot(page, 'client-metadata-consent-01-screen');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((url) => url.pathname === '/oauth-callback');
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
  });
});

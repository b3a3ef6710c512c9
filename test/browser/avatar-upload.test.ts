import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { getPersonById } from '../../src/modules/directory/people.service.js';
import { actingOf, ANONYMOUS } from '../support/acting.js';
import { type BrowserSession, chromiumAvailable, collectProblems, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { solidPng } from '../support/png.js';

warnIfChromiumMissing('test/browser/avatar-upload.test.ts');

/**
 * Issue #42 §3: a person uploads an avatar from Settings → Profile in Chromium: the chosen file
 * is previewed, the multipart form posts it, and the page then shows it, served from our origin.
 */
describe.skipIf(!chromiumAvailable)('uploading an avatar on the settings page, in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let dir: string;
  let personId: string;
  const file = () => join(dir, 'avatar.png');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-avatar-browser-'));
    writeFileSync(file(), solidPng(96, 96, [0x2f, 0x80, 0xed]));
    served = await serveTestApp({ env: { GATEHOUSE_FILES_DIR: join(dir, 'files') } });
    const person = await registerPerson(served.t.services, actingOf(ANONYMOUS), { username: 'grace', name: 'Grace Hopper', password: 'compiler pioneer 1952' });
    personId = person.id;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('previews the chosen image, uploads it, and shows it as the avatar served from this origin', async () => {
    const { page } = browser;
    const problems: string[] = [];
    collectProblems(page, problems);
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'grace', 'compiler pioneer 1952');
    await page.waitForURL((url) => url.pathname === '/');
    await page.goto(`${served.baseUrl}/settings/profile`);

    await page.setInputFiles('#image-file', file());
    const preview = page.locator('#image-preview');
    await preview.waitFor({ state: 'visible' });
    expect(await preview.getAttribute('src')).toMatch(/^data:image\/png;base64,/);

    await Promise.all([page.waitForURL((url) => url.pathname === '/settings/profile' && url.search === '?saved=1'), page.getByRole('button', { name: 'Upload avatar', exact: true }).click()]);
    const stored = (await getPersonById(served.t.services, personId))?.avatarUrl;
    expect(stored).toMatch(/^\/avatars\/\d+\/[0-9a-f]{32}\.png$/);

    const current = page.getByRole('img', { name: 'Current avatar' });
    await current.waitFor();
    expect(await current.getAttribute('src')).toBe(stored);
    // Decoded by the browser from our own origin (a broken image has no natural size).
    await page.waitForFunction(`(() => { const img = document.getElementById('image-current'); return img !== null && img.complete && img.naturalWidth === 96; })()`);
    const colour = await page.evaluate<number[]>(
      `(() => { const img = document.getElementById('image-current'); const c = document.createElement('canvas'); c.width = 1; c.height = 1; const g = c.getContext('2d'); g.drawImage(img, 0, 0, 1, 1); return Array.from(g.getImageData(0, 0, 1, 1).data.slice(0, 3)); })()`,
    );
    expect(colour).toEqual([0x2f, 0x80, 0xed]);
    await expect(page.getByRole('button', { name: 'Remove avatar' }).isVisible()).resolves.toBe(true);
    await page.locator('#avatar').scrollIntoViewIfNeeded();
    await screenshot(page, 'avatar-upload-01-settings', { fullPage: true });
    expect(problems).toEqual([]);
  });
});

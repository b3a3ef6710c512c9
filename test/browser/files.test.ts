import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { multipartBody } from '../support/multipart.js';
import { solidPng } from '../support/png.js';

warnIfChromiumMissing('test/browser/files.test.ts');

/**
 * Issue #42 §3: files posted through a webhook show in the channel view in Chromium: the image
 * inline (decoded, at its reserved size, with its alt text), the PDF as a download card whose link
 * downloads the file instead of opening it.
 */
describe.skipIf(!chromiumAvailable)('files in the channel view, in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let dir: string;
  let channelId: string;
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-files-browser-'));
    served = await serveTestApp({ env: { GATEHOUSE_FILES_DIR: dir } });
    const deps = served.t.services;
    const owner = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: 'analytical engine 1843' });
    const server = await createServer(deps, personActingOf(owner.id), { name: 'Reports' });
    channelId = server.channels[0]?.id as string;
    const channel = server.channels[0];
    if (!channel) throw new Error('the server has no channel');
    const { webhook, token } = await createWebhook(deps, personActingOf(owner.id), channel, { name: 'Nightly', avatarUrl: null });
    const body = await multipartBody({ payload_json: JSON.stringify({ content: 'Nightly report', attachments: [{ id: 0, description: 'Error rate chart' }] }) }, [
      { field: 'files[0]', filename: 'chart.png', type: 'image/png', data: solidPng(240, 120) },
      { field: 'files[1]', filename: 'report.pdf', type: 'application/pdf', data: pdf },
    ]);
    const res = await fetch(`${served.baseUrl}/api/v1/webhooks/${webhook.id}/${token}?wait=true`, { method: 'POST', headers: body.headers, body: new Uint8Array(body.payload) });
    if (res.status !== 200) throw new Error(`execute answered ${res.status}: ${await res.text()}`);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the image inline at its reserved size with its alt text, and downloads the PDF from its card', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'ada', 'analytical engine 1843');
    await page.waitForURL((url) => url.pathname === '/');
    await page.goto(`${served.baseUrl}/channels/${channelId}`);

    const image = page.getByRole('img', { name: 'Error rate chart' });
    await image.waitFor();
    await image.scrollIntoViewIfNeeded();
    // Decoded by the browser (a broken image has no natural size), drawn at the reserved size.
    await page.waitForFunction(`(() => { const img = document.querySelector('.file-image img'); return img !== null && img.complete && img.naturalWidth > 0; })()`);
    const drawn = await page.evaluate<{ natural: [number, number]; box: [number, number] }>(
      `(() => { const img = document.querySelector('.file-image img'); const r = img.getBoundingClientRect(); return { natural: [img.naturalWidth, img.naturalHeight], box: [r.width, r.height] }; })()`,
    );
    expect(drawn.natural).toEqual([240, 120]);
    // The reserved 240 × 120 (border included: the page's box-sizing), give or take the border's rounding.
    expect(drawn.box[0]).toBe(240);
    expect(Math.abs((drawn.box[1] ?? 0) - 120)).toBeLessThanOrEqual(1);
    await screenshot(page, 'files-01-channel', { fullPage: false });

    const card = page.getByRole('link', { name: /report\.pdf/ });
    await expect(card.textContent()).resolves.toContain('report.pdf');
    const [download] = await Promise.all([page.waitForEvent('download'), card.click()]);
    expect(download.suggestedFilename()).toBe('report.pdf');
    expect(readFileSync(await download.path()).equals(pdf)).toBe(true);
  });
});

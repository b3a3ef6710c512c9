import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { installForUser } from '../../src/modules/applications/user-installs.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { seriousViolations } from '../support/axe.js';
import { given } from '../support/given.js';
import { multipartBody } from '../support/multipart.js';
import { CHROMIUM_PATH, chromiumAvailable, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { solidPng } from '../support/png.js';

warnIfChromiumMissing('test/browser/composer-files.test.ts');

const PASSWORD = 'correct horse battery 9';
const LIMIT = 256 * 1024;
const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

/**
 * Issue #42 §2 "People", in Chromium: the composer's Attach files button, chips of the chosen
 * files with upload progress, the image shown inline at its reserved size with its alt text (and
 * live on another person's page), a PDF downloaded from its card, an image pasted and one dropped,
 * the limits checked before sending and a refusal shown without posting again. Axe, light and dark.
 */
describe.skipIf(!chromiumAvailable)('sharing files from the composer (Chromium)', () => {
  let served: ServedApp;
  let browser: Browser;
  let dir: string;
  let channelId: string;
  let adaId: string;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  async function personPage(username: string, options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true, javaScriptEnabled: options.javaScriptEnabled ?? true });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) problems.push(`${username}: ${m.text()} @ ${m.location().url}`);
    });
    page.on('pageerror', (e) => problems.push(`${username}: ${e.message}`));
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, username, PASSWORD);
    await page.waitForURL((url) => url.pathname === '/');
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    if (options.javaScriptEnabled !== false) await page.locator('ol.messages[data-live-state="open"]').waitFor({ state: 'attached' });
    return page;
  }

  /** Every value the upload's progress bar takes from now on, kept in the page. */
  async function recordProgress(page: Page): Promise<void> {
    await page.evaluate(`(() => {
      window.progressSeen = [];
      const watch = new MutationObserver(() => {
        const bar = document.querySelector('[role=progressbar]');
        if (bar) window.progressSeen.push(Number(bar.getAttribute('aria-valuenow')));
      });
      watch.observe(document.getElementById('post'), { subtree: true, attributes: true, attributeFilter: ['aria-valuenow'] });
    })()`);
  }

  /** POSTs the page makes to the channel's message route. */
  function countPosts(page: Page): { count: number } {
    const seen = { count: 0 };
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === `/channels/${channelId}/messages`) seen.count += 1;
    });
    return seen;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-composer-browser-'));
    served = await serveTestApp({ env: { GATEHOUSE_FILES_DIR: dir, GATEHOUSE_ATTACHMENT_MAX_BYTES: String(LIMIT) } });
    const deps = served.t.services;
    const ada = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: PASSWORD });
    const bob = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'bob', name: 'Bob Kahn', password: PASSWORD });
    const server = await createServer(deps, personActingOf(ada.id), { name: 'Reports' });
    await addMember(deps, operatorActing(), server.id, bob.id);
    channelId = server.channels[0]?.id as string;
    adaId = ada.id;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  });

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await served?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('Attach files takes an image: a chip with its name, size and description; sending shows progress, then the image inline at its reserved size with its alt text, here and live on another page', async () => {
    const ada = await personPage('ada');
    const bob = await personPage('bob');
    const posts = countPosts(ada);
    const button = ada.getByRole('button', { name: 'Attach files' });
    expect(await button.isVisible()).toBe(true);
    // The native input is out of sight and out of the tab order; the button opens it.
    expect(await ada.locator('input#files').isVisible()).toBe(false);
    // By keyboard: the button is focusable and Enter opens the file chooser.
    // locator.press focuses the button and presses in one step (a separate focus() then
    // page.keyboard.press opened no chooser on some machines; the cause was not found).
    const [chooser] = await Promise.all([ada.waitForEvent('filechooser'), button.press('Enter')]);
    expect(chooser.isMultiple()).toBe(true);
    await chooser.setFiles([{ name: 'latency.png', mimeType: 'image/png', buffer: solidPng(480, 240) }]);

    const chips = ada.getByRole('list', { name: 'Files to send' });
    await chips.getByText('latency.png').waitFor();
    expect(await chips.locator('li').count()).toBe(1);
    expect(await chips.textContent()).toMatch(/latency\.png\s+\d+(\.\d)? (bytes|kB)/);
    await ada.getByLabel('Description of latency.png (alt text)').fill('Latency, last hour');
    await ada.getByLabel('Message #general').fill('Numbers from the night');
    await screenshot(ada, 'composer-files-01-chips', { fullPage: false });
    for (const colorScheme of ['light', 'dark'] as const) {
      await ada.emulateMedia({ colorScheme });
      expect(await seriousViolations(ada), colorScheme).toEqual([]);
      await ada.locator('#post').screenshot({ path: join(process.cwd(), 'test-results', `composer-files-02-composer-${colorScheme}.png`) });
    }
    await ada.emulateMedia({ colorScheme: 'light' });

    await recordProgress(ada);
    await ada.getByRole('button', { name: 'Send' }).click();
    const image = ada.getByRole('img', { name: 'Latency, last hour' });
    await image.waitFor();
    // The bar went to 100 % as the upload finished, and is gone with the chips.
    expect(await ada.evaluate<number[]>('window.progressSeen')).toContain(100);
    expect(await ada.locator('[role=progressbar]').isVisible()).toBe(false);
    expect(await chips.isVisible()).toBe(false);
    expect(await ada.getByLabel('Message #general').inputValue()).toBe('');
    expect(posts.count).toBe(1);

    for (const page of [ada, bob]) {
      const shown = page.getByRole('img', { name: 'Latency, last hour' });
      await shown.waitFor();
      await shown.scrollIntoViewIfNeeded();
      expect(await shown.getAttribute('width')).toBe('400');
      expect(await shown.getAttribute('height')).toBe('200');
      await page.waitForFunction(`(() => { const img = document.querySelector('.file-image img[alt="Latency, last hour"]'); return img !== null && img.complete && img.naturalWidth > 0; })()`);
      const drawn = await page.evaluate<[number, number]>(`(() => { const img = document.querySelector('.file-image img[alt="Latency, last hour"]'); return [img.naturalWidth, img.naturalHeight]; })()`);
      expect(drawn).toEqual([480, 240]);
      expect(await page.locator('li.message', { hasText: 'Numbers from the night' }).locator('.file-image').count()).toBe(1);
    }
    await screenshot(ada, 'composer-files-03-sent', { fullPage: false });
  });

  it('a PDF sent from the composer is a download card, and the download has the same bytes', async () => {
    const ada = await personPage('ada');
    await ada.locator('input#files').setInputFiles([{ name: 'report.pdf', mimeType: 'application/pdf', buffer: pdf }]);
    await ada.getByRole('list', { name: 'Files to send' }).getByText('report.pdf').waitFor();
    // Enter sends a message with only a file, too.
    await ada.getByLabel('Message #general').press('Enter');
    const card = ada.getByRole('link', { name: /report\.pdf/ });
    await card.waitFor();
    const [download] = await Promise.all([ada.waitForEvent('download'), card.click()]);
    expect(download.suggestedFilename()).toBe('report.pdf');
    expect(readFileSync(await download.path()).equals(pdf)).toBe(true);
  });

  it('an image pasted into the box and one dropped on the channel become chips, removable, and are sent', async () => {
    const ada = await personPage('ada');
    const pasted = solidPng(64, 32, [0x22, 0x22, 0x22]).toString('base64');
    const dropped = solidPng(32, 64, [0xaa, 0xaa, 0xaa]).toString('base64');
    const bytesOf = (b64: string) => `Uint8Array.from(atob(${JSON.stringify(b64)}), (c) => c.charCodeAt(0))`;
    await ada.evaluate(`(() => {
      const data = new DataTransfer();
      data.items.add(new File([${bytesOf(pasted)}], 'pasted.png', { type: 'image/png' }));
      document.querySelector('textarea#content').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    })()`);
    await ada.evaluate(`(() => {
      const data = new DataTransfer();
      data.items.add(new File([${bytesOf(dropped)}], 'dropped.png', { type: 'image/png' }));
      data.items.add(new File(['not wanted'], 'extra.txt', { type: 'text/plain' }));
      const target = document.getElementById('history');
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    })()`);
    const chips = ada.getByRole('list', { name: 'Files to send' });
    await chips.getByText('extra.txt').waitFor();
    expect(await chips.locator('.chip-name').allTextContents()).toEqual(['pasted.png', 'dropped.png', 'extra.txt']);
    await ada.getByRole('button', { name: 'Remove extra.txt' }).focus();
    await ada.keyboard.press('Enter');
    expect(await chips.locator('.chip-name').allTextContents()).toEqual(['pasted.png', 'dropped.png']);
    // Focus stays in the list, on the Remove button now last.
    expect(await ada.evaluate<string | null>('document.activeElement.getAttribute("aria-label")')).toBe('Remove dropped.png');
    // On a 390×844 phone the chips wrap inside the composer: nothing scrolls sideways.
    await ada.setViewportSize({ width: 390, height: 844 });
    expect(await ada.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await ada.locator('#post').screenshot({ path: join(process.cwd(), 'test-results', 'composer-files-05-phone.png') });
    await ada.setViewportSize({ width: 1280, height: 860 });
    await ada.getByLabel('Message #general').fill('Pasted and dropped');
    await ada.getByRole('button', { name: 'Send' }).click();
    const message = ada.locator('li.message', { hasText: 'Pasted and dropped' });
    await message.locator('img[alt="dropped.png"]').waitFor();
    expect(await message.locator('.file-image img').evaluateAll((imgs) => imgs.map((i) => i.getAttribute('alt')))).toEqual(['pasted.png', 'dropped.png']);
    expect(await message.locator('.file-card').count()).toBe(0);
  });

  it('without JavaScript the form posts the chosen files with the text (multipart, the token in its action URL), and the channel shows them', async () => {
    const ada = await personPage('ada', { javaScriptEnabled: false });
    const input = ada.getByLabel('Attach files');
    expect(await input.isVisible()).toBe(true);
    await input.setInputFiles([
      { name: 'plain.png', mimeType: 'image/png', buffer: solidPng(100, 50, [0x11, 0x11, 0x11]) },
      { name: 'plain.pdf', mimeType: 'application/pdf', buffer: pdf },
    ]);
    await ada.getByLabel('Message #general').fill('Sent without script');
    await ada.locator('#post').screenshot({ path: join(process.cwd(), 'test-results', 'composer-files-04-no-js.png') });
    await Promise.all([ada.waitForURL((url) => url.pathname === `/channels/${channelId}`), ada.getByRole('button', { name: 'Send' }).click()]);
    const message = ada.locator('li.message', { hasText: 'Sent without script' });
    await message.waitFor();
    expect(await message.locator('.file-image img').getAttribute('alt')).toBe('plain.png');
    expect(await message.locator('.file-card').textContent()).toContain('plain.pdf');
  });

  it('files over the limits are not added (a clear message); a refused message shows the server’s reason and is not posted again', async () => {
    const ada = await personPage('ada');
    const posts = countPosts(ada);
    await ada.locator('input#files').setInputFiles([{ name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(LIMIT + 1, 1) }]);
    const alert = ada.locator('#post .error[role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toBe('Not added: huge.bin (at most 262 kB of files per message).');
    expect(await ada.getByRole('list', { name: 'Files to send' }).isVisible()).toBe(false);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.txt`, mimeType: 'text/plain', buffer: Buffer.from(`file ${i}`) }));
    await ada.locator('input#files').setInputFiles(eleven);
    expect(await alert.textContent()).toBe('Not added: f10.txt (at most 10 files per message).');
    expect(await ada.getByRole('list', { name: 'Files to send' }).locator('li').count()).toBe(10);
    for (let i = 1; i < 10; i += 1) await ada.getByRole('button', { name: `Remove f${i}.txt` }).click();

    // Text the server refuses (over 2000 characters): its sentence shows, the file stays as a chip, one POST only.
    await ada.getByLabel('Message #general').fill('x'.repeat(2001));
    await ada.getByRole('button', { name: 'Send' }).click();
    await ada.getByText('Must be 2000 or fewer in length.').waitFor();
    expect(posts.count).toBe(1);
    expect(await ada.getByRole('list', { name: 'Files to send' }).locator('.chip-name').allTextContents()).toEqual(['f0.txt']);
    expect(await ada.locator('li.message', { hasText: 'f0.txt' }).count()).toBe(0);
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
  });
  it('in a DM, the app’s bot’s image arrives live and is shown inline at its reserved size with its alt text; the DM’s composer (commands only) offers no files', async () => {
    const t = served.t;
    const bot = await given.bot(t, { name: 'Reporter' });
    await installForUser(t.services, actingOf({ kind: 'person', id: adaId }), bot.client.app.id);
    await t.app.inject({ method: 'PUT', url: `/api/v1/applications/${bot.client.app.id}/commands`, headers: bot.headers, payload: [{ name: 'report', description: 'Sends the report' }] });
    const opened = await t.app.inject({ method: 'POST', url: '/api/v1/users/@me/channels', headers: bot.headers, payload: { recipient_id: adaId } });
    expect(opened.statusCode, opened.body).toBe(200);
    const dmId = (opened.json() as { id: string }).id;
    const known = problems.length;
    const ada = await personPage('ada');
    await ada.goto(`${served.baseUrl}/messages/${dmId}`);
    await ada.locator('ol.messages[data-live-state="open"]').waitFor({ state: 'attached' });
    expect(await ada.locator('#reply textarea[data-composer="commands"]').count()).toBe(1);
    expect(await ada.locator('#reply input[type=file]').count()).toBe(0);

    const body = await multipartBody({ payload_json: JSON.stringify({ content: 'Weekly report', attachments: [{ id: 0, description: 'Errors per day' }] }) }, [
      { field: 'files[0]', filename: 'errors.png', type: 'image/png', data: solidPng(480, 240, [0xc0, 0xc0, 0xc0]) },
    ]);
    const posted = await t.app.inject({ method: 'POST', url: `/api/v1/channels/${dmId}/messages`, headers: { ...bot.headers, ...body.headers }, payload: body.payload });
    expect(posted.statusCode, posted.body).toBe(200);
    // Arrives by the live stream (no reload); polled from the test, as the page's CSP forbids waitForFunction's eval.
    await ada.locator('.file-image img[alt="Errors per day"]').waitFor();
    await expect.poll(() => ada.evaluate<number>(`document.querySelector('.file-image img[alt="Errors per day"]').complete ? document.querySelector('.file-image img[alt="Errors per day"]').naturalWidth : 0`), { timeout: 10_000 }).toBeGreaterThan(0);
    const drawn = await ada.evaluate<[number, number, string | null, string | null]>(`(() => { const img = document.querySelector('.file-image img[alt="Errors per day"]'); return [img.naturalWidth, img.naturalHeight, img.getAttribute('width'), img.getAttribute('height')]; })()`);
    // Drawn from its real bytes; the box reserved at the page's 400 px width, same aspect (files.page.ts).
    expect(drawn).toEqual([480, 240, '400', '200']);
    await screenshot(ada, 'composer-files-06-dm', { fullPage: false });
    expect(problems.slice(known)).toEqual([]);
  });
});

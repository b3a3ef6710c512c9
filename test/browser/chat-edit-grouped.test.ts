import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import type { Deps } from '../../src/deps.js';
import { CHROMIUM_PATH, chromiumAvailable, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/chat-edit-grouped.test.ts');

/**
 * Issue #36 §5: Edit works on every one of a person's own messages, grouped or not (a grouped
 * message is every one after the first of a run, shown without a header), whether the page
 * rendered it or it arrived over the live stream, with and without JavaScript; desktop and phone.
 */

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };
const PASSWORD = 'correct horse battery 9';

describe.skipIf(!chromiumAvailable)('editing a grouped message (Chromium)', () => {
  let served: ServedApp;
  let browser: Browser;
  let deps: Deps;
  let adaId: string;
  let channelId: string;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  async function adaPage(options: { viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: options.viewport ?? DESKTOP, javaScriptEnabled: options.javaScriptEnabled ?? true });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) problems.push(`${m.text()} @ ${m.location().url}`);
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'ada', PASSWORD);
    await page.waitForURL((url) => url.pathname === '/');
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    return page;
  }

  /** Posts a run of Ada's messages; all but the first are shown grouped under the first. */
  async function run(...texts: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const text of texts) ids.push((await postMessage(deps, actingOf(person(adaId)), channelId, text)).id);
    return ids;
  }

  /** Opens the inline editor of message `id`, replaces its text and saves with Enter; `shown` is the new text as rendered. */
  async function editInline(page: Page, id: string, was: string, now: string, shown = now): Promise<void> {
    const message = page.locator(`#m${id}`);
    await message.hover();
    await message.getByRole('link', { name: 'Edit message' }).click();
    const editor = message.getByRole('textbox', { name: 'Edit message' });
    await expect.poll(() => editor.inputValue()).toBe(was);
    await editor.fill(now);
    await editor.press('Enter');
    await page.locator(`#m${id} .body`, { hasText: shown }).waitFor();
    await page.locator(`#m${id}`, { hasText: '(edited)' }).waitFor();
  }

  beforeAll(async () => {
    served = await serveTestApp();
    deps = served.t.services;
    adaId = (await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: PASSWORD })).id;
    const server = await createServer(deps, personActingOf(adaId), { name: 'Engine Room' });
    channelId = server.channels[0]?.id as string;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await served?.close();
  });

  it('edits a grouped message inline: the editor opens in its place, Escape cancels, Enter saves without a reload', async () => {
    const [first, grouped] = await run('The mill is running.', 'Cards are punched.');
    const page = await adaPage();
    const message = page.locator(`#m${grouped}`);
    expect(await message.getAttribute('class')).toBe('message grouped');
    await page.evaluate("window.stayed = 'same page'");

    await message.hover();
    await message.getByRole('link', { name: 'Edit message' }).click();
    const editor = message.getByRole('textbox', { name: 'Edit message' });
    await expect.poll(() => editor.inputValue()).toBe('Cards are punched.');
    // The editor takes the text's place.
    expect(await message.locator('.body').isVisible()).toBe(false);
    await screenshot(page, 'chat-edit-grouped-01-editor-desktop', { fullPage: false });
    await editor.press('Escape');
    expect(await message.locator('.inline-edit').count()).toBe(0);
    expect(await message.locator('.body').isVisible()).toBe(true);

    await editInline(page, grouped as string, 'Cards are punched.', 'Cards are **punched** twice.', 'Cards are punched twice.');
    expect(await page.locator(`#m${grouped} .body strong`).innerText()).toBe('punched');
    expect(await page.evaluate('window.stayed')).toBe('same page');
    // The first of the run is untouched.
    expect(await page.locator(`#m${first} .body`).innerText()).toBe('The mill is running.');
    expect(problems).toEqual([]);
  });

  it('edits a message that arrived over the live stream and joined the group above it', async () => {
    await run('Live run starts.');
    const page = await adaPage();
    await page.locator('ol.messages[data-live-state="open"]').waitFor();
    const [arrived] = await run('Arrived live.');
    const message = page.locator(`#m${arrived}`);
    await expect.poll(() => message.getAttribute('class')).toBe('message grouped');

    await editInline(page, arrived as string, 'Arrived live.', 'Arrived live, then edited.');
    expect(problems).toEqual([]);
  });

  it('on a 390×844 phone: a grouped message shows Edit without hovering and edits inline', async () => {
    const [, grouped] = await run('From the phone.', 'And a second line.');
    const page = await adaPage({ viewport: PHONE });
    const message = page.locator(`#m${grouped}`);
    expect(await message.getAttribute('class')).toBe('message grouped');
    await message.scrollIntoViewIfNeeded();
    expect(await message.getByRole('link', { name: 'Edit message' }).isVisible()).toBe(true);
    await editInline(page, grouped as string, 'And a second line.', 'And a second, edited line.');
    await screenshot(page, 'chat-edit-grouped-02-edited-phone', { fullPage: false });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    expect(problems).toEqual([]);
  });

  it('without JavaScript: Edit on a grouped message opens the form page, and saving returns to the channel', async () => {
    const [, grouped] = await run('Without scripts.', 'Grouped without scripts.');
    const page = await adaPage({ javaScriptEnabled: false });
    const message = page.locator(`#m${grouped}`);
    expect(await message.getAttribute('class')).toBe('message grouped');
    await message.getByRole('link', { name: 'Edit message' }).click();
    await page.waitForURL(new RegExp(`/messages/${grouped}/edit$`));
    await page.getByLabel('Message', { exact: true }).fill('Grouped, edited without scripts.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL((url) => url.pathname === `/channels/${channelId}`);
    expect(await page.locator(`#m${grouped} .body`).innerText()).toBe('Grouped, edited without scripts.');
    expect(await page.locator(`#m${grouped}`, { hasText: '(edited)' }).count()).toBe(1);
    expect(problems).toEqual([]);
  });
});

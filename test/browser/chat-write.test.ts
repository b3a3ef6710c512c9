import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { CHROMIUM_PATH, chromiumAvailable, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/chat-write.test.ts');

/**
 * Issue #24 "Writing", in Chromium: Enter sends without a reload and Shift+Enter adds a line;
 * people edit (inline, Enter saves, Escape cancels) and delete their own messages after one
 * confirmation; a moderator with Manage messages deletes another's; a second person's page
 * follows along live; and every flow works with JavaScript off. Desktop and a 390×844 phone.
 */

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };
const PASSWORD = 'correct horse battery 9';

describe.skipIf(!chromiumAvailable)('writing in a channel (Chromium)', () => {
  let served: ServedApp;
  let browser: Browser;
  let channelId: string;
  let bobMessage: string;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  async function personPage(username: string, options: { viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: options.viewport ?? DESKTOP, javaScriptEnabled: options.javaScriptEnabled ?? true });
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
    return page;
  }

  /** Waits until the page's live stream is open, so what others do next reaches it. */
  async function live(page: Page): Promise<void> {
    await page.locator('ol.messages[data-live-state="open"]').waitFor();
  }

  /** `watcher` follows the channel live; `writer` too, marked so a reload would show. */
  async function writerAndWatcher(writerName: string, watcherName: string): Promise<{ writer: Page; watcher: Page }> {
    const writer = await personPage(writerName);
    const watcher = await personPage(watcherName);
    await live(writer);
    await live(watcher);
    await markWindow(writer);
    return { writer, watcher };
  }

  const item = (page: Page, text: string) => page.locator('li.message', { hasText: text });

  async function markWindow(page: Page): Promise<void> {
    await page.evaluate("window.stayed = 'same page'");
  }
  const stillSamePage = (page: Page) => page.evaluate('window.stayed');

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const ada = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: PASSWORD });
    const bob = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'bob', name: 'Bob Kahn', password: PASSWORD });
    const mo = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'mo', name: 'Mo Derator', password: PASSWORD });
    const server = await createServer(deps, personActingOf(ada.id), { name: 'Writers Room' });
    await addMember(deps, operatorActing(), server.id, bob.id);
    const mods = await createRole(deps, operatorActing(), server.id, { name: 'Moderators', permissions: Permission.MANAGE_MESSAGES });
    await addMember(deps, operatorActing(), server.id, mo.id, [mods.id]);
    channelId = server.channels[0]?.id as string;
    await postMessage(deps, actingOf(person(ada.id)), channelId, 'Welcome to the writers room.');
    bobMessage = (await postMessage(deps, actingOf(person(bob.id)), channelId, 'Spam spam spam, buy now!')).id;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await served?.close();
  });

  it('Enter sends without a reload, Shift+Enter adds a line, and the message shows once, also on a second person’s page', async () => {
    const { writer: ada, watcher: bob } = await writerAndWatcher('ada', 'bob');

    const box = ada.getByLabel('Message #general');
    await box.click();
    await box.pressSequentially('First line');
    await box.press('Shift+Enter');
    await box.pressSequentially('second line');
    expect(await box.inputValue()).toBe('First line\nsecond line');
    await box.press('Enter');

    await item(ada, 'second line').waitFor();
    expect(await item(ada, 'second line').locator('.body').innerText()).toBe('First line\nsecond line');
    expect(await stillSamePage(ada)).toBe('same page');
    expect(await box.inputValue()).toBe('');
    await expect.poll(() => box.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await item(bob, 'second line').waitFor();
    // The fetch answer and the live stream both bring it: it is shown once.
    await ada.waitForTimeout(300);
    expect(await item(ada, 'second line').count()).toBe(1);
    await screenshot(ada, 'chat-write-01-sent-desktop', { fullPage: false });
    expect(problems).toEqual([]);
  });

  it('edits inline (Escape cancels, Enter saves) and a second person sees "(edited)" live', async () => {
    const { writer: ada, watcher: bob } = await writerAndWatcher('ada', 'bob');
    const mine = item(ada, 'Welcome to the writers room.');

    await mine.hover();
    await mine.getByRole('link', { name: 'Edit message' }).click();
    const editor = mine.getByRole('textbox', { name: 'Edit message' });
    await expect.poll(() => editor.inputValue()).toBe('Welcome to the writers room.');
    await editor.press('Escape');
    expect(await mine.locator('.inline-edit').count()).toBe(0);
    expect(await mine.locator('.body').isVisible()).toBe(true);

    await mine.getByRole('link', { name: 'Edit message' }).click();
    await expect.poll(() => editor.inputValue()).toBe('Welcome to the writers room.');
    await editor.fill('Welcome to the **writers** room, everyone.');
    await screenshot(ada, 'chat-write-02-inline-edit-desktop', { fullPage: false });
    await editor.press('Enter');

    const edited = item(ada, 'Welcome to the writers room, everyone.');
    await edited.locator('text=(edited)').waitFor();
    expect(await edited.locator('.body strong').innerText()).toBe('writers');
    const seen = item(bob, 'Welcome to the writers room, everyone.');
    await seen.locator('text=(edited)').waitFor();
    expect(await stillSamePage(ada)).toBe('same page');
    await screenshot(bob, 'chat-write-03-edited-seen-live-desktop', { fullPage: false });
    expect(problems).toEqual([]);
  });

  it('deletes one’s own message after one inline confirmation, gone on both pages', async () => {
    const { writer: ada, watcher: bob } = await writerAndWatcher('ada', 'bob');
    const box = ada.getByLabel('Message #general');
    await box.fill('A typo I regret');
    await box.press('Enter');
    const mine = item(ada, 'A typo I regret');
    await mine.waitFor();
    await item(bob, 'A typo I regret').waitFor();

    await mine.hover();
    await mine.getByRole('link', { name: 'Delete message' }).click();
    const ask = mine.getByRole('group', { name: 'Delete this message?' });
    await ask.waitFor();
    await screenshot(ada, 'chat-write-04-delete-confirm-desktop', { fullPage: false });
    // Cancel keeps it; asking again and confirming removes it.
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect(await mine.count()).toBe(1);
    await mine.getByRole('link', { name: 'Delete message' }).click();
    await ask.getByRole('button', { name: 'Delete', exact: true }).click();
    await mine.waitFor({ state: 'detached' });
    await item(bob, 'A typo I regret').waitFor({ state: 'detached' });
    // Keyboard focus stays in the conversation, not thrown back to the top of the page.
    expect(await ada.evaluate('document.activeElement.closest("ol.messages") !== null')).toBe(true);
    expect(await stillSamePage(ada)).toBe('same page');
    expect(problems).toEqual([]);
  });

  it('a moderator with Manage messages deletes another person’s message; they see no Edit on it', async () => {
    const { writer: mo, watcher: bob } = await writerAndWatcher('mo', 'bob');
    const spam = mo.locator(`#m${bobMessage}`);
    await spam.hover();
    expect(await spam.getByRole('link', { name: 'Edit message' }).count()).toBe(0);
    await spam.getByRole('link', { name: 'Delete message' }).click();
    await spam.getByRole('button', { name: 'Delete', exact: true }).click();
    await spam.waitFor({ state: 'detached' });
    await bob.locator(`#m${bobMessage}`).waitFor({ state: 'detached' });
    await screenshot(mo, 'chat-write-05-moderator-deleted-desktop', { fullPage: false });
    expect(problems).toEqual([]);
  });

  it('without JavaScript: the form posts and reloads, Edit opens a form page, Delete asks on a page', async () => {
    const bob = await personPage('bob', { javaScriptEnabled: false });
    await bob.getByLabel('Message #general').fill('Posted with JavaScript off');
    await bob.getByRole('button', { name: 'Send' }).click();
    const posted = item(bob, 'Posted with JavaScript off');
    await posted.waitFor();

    await posted.getByRole('link', { name: 'Edit message' }).click();
    await bob.waitForURL(/\/messages\/\d+\/edit$/);
    await screenshot(bob, 'chat-write-06-nojs-edit-page-desktop');
    await bob.getByLabel('Message', { exact: true }).fill('Edited with JavaScript off');
    await bob.getByRole('button', { name: 'Save' }).click();
    await bob.waitForURL((url) => url.pathname === `/channels/${channelId}`);
    const edited = item(bob, 'Edited with JavaScript off');
    expect(await edited.locator('text=(edited)').count()).toBe(1);

    await edited.getByRole('link', { name: 'Delete message' }).click();
    await bob.waitForURL(/\/messages\/\d+\/delete$/);
    expect(await bob.getByRole('heading', { name: 'Delete this message?' }).count()).toBe(1);
    expect(await bob.locator('blockquote').innerText()).toContain('Edited with JavaScript off');
    await screenshot(bob, 'chat-write-07-nojs-delete-confirm-desktop');
    await bob.getByRole('button', { name: 'Delete message' }).click();
    await bob.waitForURL((url) => url.pathname === `/channels/${channelId}`);
    expect(await item(bob, 'Edited with JavaScript off').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('on a 390×844 phone: Enter sends, the actions show without hovering, nothing scrolls sideways', async () => {
    const bob = await personPage('bob', { viewport: PHONE });
    await live(bob);
    await markWindow(bob);
    const box = bob.getByLabel('Message #general');
    await box.fill('Sent from my phone with a rather long line that has to wrap nicely on a narrow screen');
    await box.press('Enter');
    const mine = item(bob, 'Sent from my phone');
    await mine.waitFor();
    expect(await stillSamePage(bob)).toBe('same page');
    await mine.getByRole('link', { name: 'Delete message' }).click();
    await mine.getByRole('group', { name: 'Delete this message?' }).waitFor();
    await mine.scrollIntoViewIfNeeded();
    await screenshot(bob, 'chat-write-08-delete-confirm-phone', { fullPage: false });
    expect(await bob.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await mine.getByRole('button', { name: 'Delete', exact: true }).click();
    await mine.waitFor({ state: 'detached' });

    const noJs = await personPage('bob', { viewport: PHONE, javaScriptEnabled: false });
    await noJs.getByLabel('Message #general').fill('Phone without JavaScript');
    await noJs.getByRole('button', { name: 'Send' }).click();
    await item(noJs, 'Phone without JavaScript').getByRole('link', { name: 'Edit message' }).click();
    await noJs.waitForURL(/\/edit$/);
    expect(await noJs.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await screenshot(noJs, 'chat-write-09-nojs-edit-page-phone');
    expect(problems).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/chat-manage.test.ts');

/**
 * Issue #24, "Managing", in Chromium at desktop size and 390×844: a channel name is slugged as it
 * is typed, creating then reloading creates nothing, the invite link is copied with its button and
 * listed with its code after a reload (copy again, revoke), and deleting a channel or removing a
 * member asks first, naming what goes.
 */
describe.skipIf(!chromiumAvailable)('managing a server in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let serverId: string;
  let generalId: string;
  const consoleErrors: string[] = [];

  async function count(table: 'channels' | 'invites'): Promise<number> {
    return (await served.t.services.db.selectFrom(table).select('id').where('server_id', '=', serverId).execute()).length;
  }

  /** No page scrolls sideways on a phone (issue #24). */
  async function noSidewaysScroll(): Promise<void> {
    expect(await browser.page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  }

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const owner = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: 'analytical engine 43' });
    const guest = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'charles', name: 'Charles Babbage', password: 'difference engine 22' });
    const server = await createServer(deps, personActingOf(owner.id), { name: 'Engine Room' });
    serverId = server.id;
    generalId = server.channels[0]?.id as string;
    await addMember(deps, operatorActing(), server.id, guest.id);
    for (const text of ['Morning!', 'The mill is running.', 'Cards are punched.', 'Shipping the tables today.']) await postMessage(deps, actingOf(person(guest.id)), generalId, text);

    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: served.baseUrl });
    browser.page.on('console', (m) => {
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) consoleErrors.push(`${m.text()} @ ${m.location().url}`);
    });
    browser.page.on('pageerror', (e) => consoleErrors.push(e.message));

    const { page } = browser;
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'ada', 'analytical engine 43');
    await page.waitForURL((url) => url.pathname === '/');
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('slugs a channel name as it is typed, and reloading after creating it creates nothing', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/servers/${serverId}/settings/channels`);
    const name = page.locator('#channel-name');
    await name.pressSequentially('Dev Ops!');
    expect(await name.inputValue()).toBe('dev-ops');
    await screenshot(page, 'chat-manage-01-slug-as-you-type', { fullPage: false });
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.waitForURL(/done=channel-created/);
    expect(await page.getByRole('link', { name: '# dev-ops' }).count()).toBe(1);
    expect(await count('channels')).toBe(2);
    await page.reload();
    await page.reload();
    expect(await count('channels')).toBe(2);
    await screenshot(page, 'chat-manage-02-channels');
  });

  it('copies a new invite link with its button; reloading shows it no more and makes no other', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/servers/${serverId}/settings/invites`);
    await page.getByRole('button', { name: 'Create invite link' }).click();
    await page.waitForURL(/done=invite-created/);
    const link = await page.locator('#invite-url').inputValue();
    expect(link).toMatch(new RegExp(`^${served.baseUrl}/invite/ghinv_`));
    const copy = page.locator('button[data-copy="invite-url"]');
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(link);
    await screenshot(page, 'chat-manage-03-invite-copied', { fullPage: false });
    await page.reload();
    expect(await page.locator('#invite-url').count()).toBe(0);
    expect(await count('invites')).toBe(1);
  });

  it('lists every active invite link with its code: Copy copies it again after a reload, Revoke removes it', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/servers/${serverId}/settings/invites`);
    await page.getByLabel('Maximum uses').selectOption('5');
    await page.getByRole('button', { name: 'Create invite link' }).click();
    await page.waitForURL(/done=invite-created/);
    const fresh = await page.locator('#invite-url').inputValue();
    await page.reload();
    expect(await page.locator('#invite-url').count()).toBe(0);
    // Both links, newest first, each in its own field with its Copy and Revoke buttons.
    const fields = page.locator('.invite-rows input[readonly]');
    expect(await fields.count()).toBe(2);
    expect(await fields.first().inputValue()).toBe(fresh);
    const copy = page.locator('.invite-rows button[data-copy]').first();
    expect(await copy.getAttribute('aria-label')).toMatch(/^Copy the link Ada Lovelace created /);
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(fresh);
    expect(await page.locator('.invite-rows li').first().textContent()).toContain('0 of 5 uses');
    await screenshot(page, 'chat-manage-03b-invite-list');

    await page.locator('.invite-rows li').first().getByRole('button', { name: /^Revoke / }).click();
    await page.waitForURL(/done=invite-revoked/);
    expect(await page.locator('.invite-rows input[readonly]').count()).toBe(1);
    expect(await page.locator('.invite-rows input[readonly]').inputValue()).not.toBe(fresh);
    expect(await count('invites')).toBe(1);
  });

  it('asks before deleting a channel, naming its messages; Cancel keeps it, the button deletes it', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/servers/${serverId}/settings/channels`);
    await page.getByRole('link', { name: 'Delete #general…' }).click();
    await page.getByRole('heading', { name: 'Delete # general?' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('All 4 messages in it are deleted with it.');
    await screenshot(page, 'chat-manage-04-confirm-channel-delete');
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.waitForURL(/\/settings\/channels$/);
    expect(await count('channels')).toBe(2);

    await page.getByRole('link', { name: 'Delete #general…' }).click();
    await page.getByRole('button', { name: 'Delete channel' }).click();
    await page.waitForURL(/done=channel-deleted/);
    expect(await count('channels')).toBe(1);
  });

  it('asks before removing a member, naming them', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/servers/${serverId}/settings/members`);
    await page.getByRole('link', { name: 'Remove Charles Babbage from the server…' }).click();
    await page.getByRole('heading', { name: 'Remove Charles Babbage from Engine Room?' }).waitFor();
    await page.getByRole('button', { name: 'Remove member' }).click();
    await page.waitForURL(/done=member-removed/);
    expect(await page.getByText('Charles Babbage').count()).toBe(0);
  });

  it('at 390×844 the settings pages and the confirmation fit the phone', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${served.baseUrl}/servers/${serverId}/settings/channels`);
      const name = page.locator('#channel-name');
      await name.pressSequentially('Release Notes 2');
      expect(await name.inputValue()).toBe('release-notes-2');
      await noSidewaysScroll();
      await screenshot(page, 'chat-manage-05-phone-channels');
      await page.goto(`${served.baseUrl}/servers/${serverId}/settings/invites`);
      await page.getByRole('button', { name: 'Create invite link' }).click();
      await page.waitForURL(/done=invite-created/);
      await noSidewaysScroll();
      await screenshot(page, 'chat-manage-06-phone-invite');
      // The listed links, each copyable, fit the phone too.
      await page.reload();
      expect(await page.locator('.invite-rows input[readonly]').count()).toBeGreaterThan(0);
      await noSidewaysScroll();
      await screenshot(page, 'chat-manage-06b-phone-invite-list');
      const channel = (await served.t.services.db.selectFrom('channels').select('id').where('server_id', '=', serverId).executeTakeFirstOrThrow()).id;
      await page.goto(`${served.baseUrl}/servers/${serverId}/channels/${String(channel)}/delete`);
      await noSidewaysScroll();
      await screenshot(page, 'chat-manage-07-phone-confirm');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    expect(consoleErrors).toEqual([]);
  });
});

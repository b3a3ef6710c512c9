import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { InteractionResponseType, InteractionType, verifyKeyMiddleware } from 'discord-interactions';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { writeServerInstall } from '../../src/modules/applications/installs.service.js';
import { installForUser } from '../../src/modules/applications/user-installs.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { seriousViolations } from '../support/axe.js';
import { type BrowserSession, chromiumAvailable, collectProblems, launchBrowser, screenshot, type ServedApp, serveTestApp, signInWithForm, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';
import { given, type TestBot } from '../support/given.js';

warnIfChromiumMissing('test/browser/interactions-composer.test.ts');

/**
 * Issue #40 §2 in Chromium: typing `/` in a channel's composer lists the installed app's commands
 * (a WAI-ARIA combobox: keyboard only, no serious axe violation, light and dark), a command chosen
 * with the keyboard and sent reaches an unmodified discord-interactions app (verifyKeyMiddleware
 * on express, on a loopback port), and its type 4 answer appears in the channel. Without
 * JavaScript the typed `/name option:value` is run the same way.
 */

const PASSWORD = 'correct horse battery 9';

interface Received {
  type: number;
  data: { name: string; options?: Array<{ name: string; value: unknown }> };
}

describe.skipIf(!chromiumAvailable)('the composer’s / list (Chromium, GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let served: ServedApp;
  let channelId: string;
  let adaId: string;
  let bot: TestBot;
  let appServer: Server;
  const received: Received[] = [];
  const sessions: BrowserSession[] = [];

  beforeAll(async () => {
    served = await serveTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    const deps = served.t.services;
    const ada = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: PASSWORD });
    adaId = ada.id;
    const server = await createServer(deps, personActingOf(ada.id), { name: 'Game Night' });
    channelId = (server.channels[0] as { id: string }).id;
    bot = await given.bot(served.t, { owner: ada, name: 'Dice' });
    await deps.db.transaction().execute((trx) =>
      writeServerInstall(deps, personActingOf(ada.id), trx, {
        application: { id: bot.client.app.id, name: 'Dice', botUserId: bot.botUserId },
        serverId: server.id,
        installerId: ada.id,
        granted: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES,
        commands: true,
      }),
    );
    const inject = served.t.app.inject.bind(served.t.app);
    const commands = await inject({
      method: 'PUT',
      url: `/api/v1/applications/${bot.client.app.id}/commands`,
      headers: bot.headers,
      payload: [
        { name: 'ping', description: 'Checks that Dice is there' },
        {
          name: 'roll',
          description: 'Rolls a die',
          options: [
            { name: 'sides', description: 'How many sides the die has', type: 4, required: true },
            { name: 'label', description: 'What the roll is for', type: 3 },
          ],
        },
      ],
    });
    expect(commands.statusCode).toBe(200);

    const me = await inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    const app = express();
    app.post('/interactions', verifyKeyMiddleware((me.json() as { verify_key: string }).verify_key), (req, res) => {
      const body = req.body as Received;
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      received.push(body);
      const sides = body.data.options?.find((o) => o.name === 'sides')?.value;
      const content = body.data.name === 'roll' ? `Dice rolled a d${String(sides)}: 4` : 'Pong';
      res.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content } });
    });
    appServer = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/interactions`;
    const saved = await inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: url } });
    expect(saved.statusCode).toBe(200);
  });

  afterAll(async () => {
    for (const session of sessions) await session.close();
    if (appServer) await new Promise<void>((resolve) => appServer.close(() => resolve()));
    await served?.close();
  });

  async function adaPage(options: { javaScriptEnabled?: boolean } = {}): Promise<{ page: Page; problems: string[] }> {
    const session = await launchBrowser(undefined, options);
    sessions.push(session);
    const problems: string[] = [];
    collectProblems(session.page, problems);
    await signInWithForm(session.page, served.baseUrl, { username: 'ada', password: PASSWORD });
    await session.page.goto(`${served.baseUrl}/channels/${channelId}`);
    return { page: session.page, problems };
  }

  const box = (page: Page) => page.getByRole('combobox', { name: 'Message #general' });
  const listbox = (page: Page) => page.getByRole('listbox', { name: 'Commands' });

  it('typing / lists the commands, filters as one types, and a command chosen with the keyboard reaches the app, whose answer appears in the channel', async () => {
    const { page, problems } = await adaPage();
    const composer = box(page);
    await composer.focus();
    await page.keyboard.type('/');
    await expect.poll(() => listbox(page).isVisible()).toBe(true);
    expect(await composer.getAttribute('aria-expanded')).toBe('true');
    expect(await composer.getAttribute('aria-controls')).toBe('command-list');
    const options = listbox(page).getByRole('option');
    expect(await options.allInnerTexts()).toEqual([expect.stringContaining('/ping'), expect.stringContaining('/roll')]);
    expect(await options.nth(1).innerText()).toContain('Rolls a die');
    expect(await options.nth(1).innerText()).toContain('Dice');

    // The first command is highlighted; Down moves to the next, and the textarea names it for screen readers.
    await page.keyboard.press('ArrowDown');
    const activeId = await composer.getAttribute('aria-activedescendant');
    expect(await options.nth(1).getAttribute('id')).toBe(activeId);
    expect(await options.nth(1).getAttribute('aria-selected')).toBe('true');

    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'interactions-composer-list', { fullPage: false });
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'interactions-composer-list-dark', { fullPage: false });
    expect(await seriousViolations(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });

    // Typing filters; Escape closes the list and leaves the text.
    await page.keyboard.type('p');
    expect(await options.allInnerTexts()).toEqual([expect.stringContaining('/ping')]);
    await page.keyboard.press('Escape');
    expect(await listbox(page).isVisible()).toBe(false);
    expect(await composer.getAttribute('aria-expanded')).toBe('false');
    expect(await composer.inputValue()).toBe('/p');

    // Back to "/r", Enter chooses /roll: "/roll " is written and its options are shown as hints.
    await page.keyboard.press('Backspace');
    await page.keyboard.type('r');
    await expect.poll(() => options.allInnerTexts()).toEqual([expect.stringContaining('/roll')]);
    await page.keyboard.press('Enter');
    expect(await composer.inputValue()).toBe('/roll ');
    expect(await listbox(page).isVisible()).toBe(false);
    const hints = page.locator('#command-options');
    expect(await hints.innerText()).toContain('sides: a whole number, required — How many sides the die has');
    expect(await hints.innerText()).toContain('label: text, optional — What the roll is for');
    await screenshot(page, 'interactions-composer-options', { fullPage: false });

    const before = received.length;
    await page.keyboard.type('sides:20');
    await page.keyboard.press('Enter');
    await page.locator('li.message', { hasText: 'Dice rolled a d20: 4' }).waitFor();
    expect(received.slice(before)).toEqual([expect.objectContaining({ type: 2, data: expect.objectContaining({ name: 'roll', options: [expect.objectContaining({ name: 'sides', value: 20 })] }) })]);
    // The typed command is not posted as text.
    expect(await page.locator('li.message', { hasText: '/roll sides:20' }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('Tab chooses the highlighted command too; on a phone the open list fits the screen', async () => {
    const { page } = await adaPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await box(page).focus();
    await page.keyboard.type('/');
    await listbox(page).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'interactions-composer-list-phone-dark', { fullPage: false });
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Tab');
    expect(await box(page).inputValue()).toBe('/ping ');
    expect(await page.locator('#command-options').innerText()).toContain('/ping · Dice: no options.');
  });

  it('in the DM with the bot of an app Ada installed for herself, a command chosen from the list is answered by the bot in the DM', async () => {
    const deps = served.t.services;
    await installForUser(deps, personActingOf(adaId), bot.client.app.id);
    const opened = await served.t.app.inject({ method: 'POST', url: '/api/v1/users/@me/channels', headers: { ...bot.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ recipient_id: adaId }) });
    const dmId = (opened.json() as { id: string }).id;
    const { page, problems } = await adaPage();
    await page.goto(`${served.baseUrl}/messages/${dmId}`);
    const composer = page.getByRole('combobox', { name: 'Use a command of Dice' });
    await composer.focus();
    await page.keyboard.type('/ro');
    await listbox(page).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'interactions-composer-dm-list', { fullPage: false });
    await page.keyboard.press('Enter');
    expect(await composer.inputValue()).toBe('/roll ');
    await page.keyboard.type('sides:8');
    await page.keyboard.press('Enter');
    await page.locator('li.message', { hasText: 'Dice rolled a d8: 4' }).waitFor();
    await screenshot(page, 'interactions-composer-dm-answered', { fullPage: false });
    expect(problems).toEqual([]);
  });

  it('in the DM, text the bot refuses is posted once: the refusal shows beside the composer, and the form is not sent a second time', async () => {
    const deps = served.t.services;
    await installForUser(deps, personActingOf(adaId), bot.client.app.id);
    const opened = await served.t.app.inject({ method: 'POST', url: '/api/v1/users/@me/channels', headers: { ...bot.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ recipient_id: adaId }) });
    const dmId = (opened.json() as { id: string }).id;
    const { page } = await adaPage();
    await page.goto(`${served.baseUrl}/messages/${dmId}`);
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === `/messages/${dmId}`) posts.push(request.headers()['accept'] ?? '');
    });
    const composer = page.getByRole('combobox', { name: 'Use a command of Dice' });
    await composer.fill('roll sides:8');
    await composer.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'it receives commands here, not messages' }).waitFor();
    await page.waitForLoadState('load');
    expect(posts).toHaveLength(1);
    expect(await page.getByRole('combobox', { name: 'Use a command of Dice' }).inputValue()).toBe('roll sides:8');
  });

  it('without JavaScript, /roll sides:6 typed and sent is run the same way', async () => {
    const { page } = await adaPage({ javaScriptEnabled: false });
    const before = received.length;
    await page.getByLabel('Message #general').fill('/roll sides:6');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('li.message', { hasText: 'Dice rolled a d6: 4' }).waitFor();
    expect(received.length).toBe(before + 1);
    expect(await page.getByRole('listbox').count()).toBe(0);
  });
});

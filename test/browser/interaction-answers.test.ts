import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import express from 'express';
import { InteractionResponseType, InteractionType, verifyKeyMiddleware } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { writeServerInstall } from '../../src/modules/applications/installs.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { seriousViolations } from '../support/axe.js';
import { type BrowserSession, chromiumAvailable, collectProblems, launchBrowser, screenshot, type ServedApp, serveTestApp, signInWithForm, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';
import { given, type TestBot } from '../support/given.js';

warnIfChromiumMissing('test/browser/interaction-answers.test.ts');

/**
 * Issue #40 §2 in Chromium: a command answered with type 5 shows the bot's "Oracle is thinking…"
 * under "Ada Lovelace used /think"; when the app (discord-interactions' verifyKeyMiddleware,
 * @discordjs/core's interactions API) edits @original and follows up, the open page updates live,
 * each answer keeping its "used /think" line; an ephemeral follow-up arrives live marked "Only you
 * can see this", and "Dismiss message" removes it in place.
 */

const PASSWORD = 'correct horse battery 9';

describe.skipIf(!chromiumAvailable)('deferred answers in the channel view (Chromium, GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let served: ServedApp;
  let channelId: string;
  let bot: TestBot;
  let appServer: Server;
  let session: BrowserSession | undefined;
  const tokens: Array<{ application_id: string; token: string }> = [];

  beforeAll(async () => {
    served = await serveTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    const deps = served.t.services;
    const ada = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: PASSWORD });
    const server = await createServer(deps, personActingOf(ada.id), { name: 'Observatory' });
    channelId = (server.channels[0] as { id: string }).id;
    bot = await given.bot(served.t, { owner: ada, name: 'Oracle' });
    await deps.db.transaction().execute((trx) =>
      writeServerInstall(deps, personActingOf(ada.id), trx, {
        application: { id: bot.client.app.id, name: 'Oracle', botUserId: bot.botUserId },
        serverId: server.id,
        installerId: ada.id,
        granted: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES,
        commands: true,
      }),
    );
    const inject = served.t.app.inject.bind(served.t.app);
    expect((await inject({ method: 'PUT', url: `/api/v1/applications/${bot.client.app.id}/commands`, headers: bot.headers, payload: [{ name: 'think', description: 'Answers after a while' }] })).statusCode).toBe(200);
    const me = await inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
    const app = express();
    app.post('/interactions', verifyKeyMiddleware((me.json() as { verify_key: string }).verify_key), (req, res) => {
      const body = req.body as { type: number; application_id: string; token: string };
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      tokens.push({ application_id: body.application_id, token: body.token });
      res.json({ type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE });
    });
    appServer = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/interactions`;
    expect((await inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: url } })).statusCode).toBe(200);
  });

  afterAll(async () => {
    await session?.close();
    if (appServer) await new Promise<void>((resolve) => appServer.close(() => resolve()));
    await served?.close();
  });

  it('"Oracle is thinking…" under "Ada Lovelace used /think", replaced live by the answer the app sends through @discordjs/core, and its follow-up', async () => {
    session = await launchBrowser();
    const page = session.page;
    const problems: string[] = [];
    collectProblems(page, problems);
    await signInWithForm(page, served.baseUrl, { username: 'ada', password: PASSWORD });
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    const composer = page.getByRole('combobox', { name: 'Message #general' });
    await composer.fill('/think');
    await composer.press('Escape');
    await composer.press('Enter');
    const placeholder = page.locator('li.message', { hasText: 'Oracle is thinking…' });
    await placeholder.waitFor();
    expect(await placeholder.innerText()).toContain('Ada Lovelace used /think');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'interaction-thinking', { fullPage: false });

    const sent = tokens[0] as { application_id: string; token: string };
    const api = new API(new REST({ api: `${served.baseUrl}/api`, version: '1', timeout: 15_000 }));
    await api.interactions.editReply(sent.application_id, sent.token, { content: 'The stars say **yes**' });
    await api.interactions.followUp(sent.application_id, sent.token, { content: 'Ask again tomorrow' });
    const answer = page.locator('li.message', { hasText: 'The stars say yes' });
    await answer.waitFor();
    await page.locator('li.message', { hasText: 'Ask again tomorrow' }).waitFor();
    expect(await answer.innerText()).toContain('Ada Lovelace used /think');
    expect(await answer.innerText()).not.toContain('thinking');
    expect(await page.locator('li.message', { hasText: 'Ask again tomorrow' }).innerText()).toContain('Ada Lovelace used /think');
    // An ephemeral follow-up (flag 64) arrives live, for Ada alone, marked as such.
    await api.interactions.followUp(sent.application_id, sent.token, { content: 'Between us: **7**', flags: 64 });
    const whisper = page.locator('li.message.ephemeral', { hasText: 'Between us: 7' });
    await whisper.waitFor();
    expect(await whisper.innerText()).toContain('Only you can see this');
    expect(await whisper.getByRole('button').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'interaction-ephemeral', { fullPage: false });
    // Discord's "Dismiss message": gone at once, without leaving the page.
    await whisper.getByRole('link', { name: 'Dismiss message' }).click();
    await whisper.waitFor({ state: 'detached' });
    expect(new URL(page.url()).pathname).toBe(`/channels/${channelId}`);
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'interaction-answered-dark', { fullPage: false });
    expect(problems).toEqual([]);
  });
});

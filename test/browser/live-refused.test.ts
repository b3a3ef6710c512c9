import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { chromiumAvailable, launchBrowser, screenshot, serveTestApp, signInWithForm, warnIfChromiumMissing, type BrowserSession, type ServedApp } from '../support/browser.js';
import { actingOf, ANONYMOUS, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/live-refused.test.ts');

const ADA = { username: 'ada', password: 'analytical engine 1843' };

/**
 * Issue #36 §1, in Chromium: a channel view whose event stream the server refuses (one stream per
 * person here) tells the reader that live updates stopped and offers Reconnect, which follows the
 * channel again once the other view is closed.
 */
describe.skipIf(!chromiumAvailable)('a channel view whose live stream is refused, in Chromium', () => {
  let served: ServedApp;
  let adaId: string;
  let channelId: string;
  const sessions: BrowserSession[] = [];

  async function open(): Promise<{ session: BrowserSession; page: Page }> {
    const session = await launchBrowser();
    sessions.push(session);
    await signInWithForm(session.page, served.baseUrl, ADA);
    await session.page.goto(`${served.baseUrl}/channels/${channelId}`);
    return { session, page: session.page };
  }

  beforeAll(async () => {
    served = await serveTestApp({ env: { GATEHOUSE_LIVE_STREAMS_PER_PERSON: '1' } });
    adaId = (await registerPerson(served.t.services, actingOf(ANONYMOUS), { ...ADA, name: 'Ada Lovelace' })).id;
    channelId = (await createServer(served.t.services, personActingOf(adaId), { name: 'Engines' })).channels[0]?.id as string;
  });

  afterAll(async () => {
    for (const session of sessions) await session.close();
    await served?.close();
  });

  it('shows "Live updates stopped" with Reconnect; Reconnect follows the channel once a place is free', async () => {
    const first = await open();
    await first.page.locator('ol.messages[data-live-state="open"]').waitFor({ state: 'attached' });

    const second = await open();
    await second.page.locator('ol.messages[data-live-state="refused"]').waitFor({ state: 'attached' });
    const notice = second.page.locator('[data-live-notice]');
    await notice.waitFor();
    expect(await notice.getAttribute('role')).toBe('status');
    expect(await notice.textContent()).toContain('Live updates stopped');
    await screenshot(second.page, 'live-refused-01-notice', { fullPage: false });

    // The first view closes: its place is free, and Reconnect takes it.
    await first.page.close();
    await expect.poll(() => served.t.services.metrics.render().then((text) => /^live_streams_open 0$/m.test(text))).toBe(true);
    await second.page.getByRole('button', { name: 'Reconnect' }).click();
    await second.page.locator('ol.messages[data-live-state="open"]').waitFor({ state: 'attached' });
    expect(await notice.isHidden()).toBe(true);
    const posted = await postMessage(served.t.services, actingOf(person(adaId)), channelId, 'Back live.');
    await second.page.locator(`#m${posted.id}`).waitFor();
  });
});

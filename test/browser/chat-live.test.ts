import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { hexColor, readableOn } from '../../src/core/contrast.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { seriousViolations } from '../support/axe.js';
import { chromiumAvailable, launchBrowser, screenshot, serveTestApp, warnIfChromiumMissing, type BrowserSession, type ServedApp, collectProblems, signInWithForm } from '../support/browser.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/chat-live.test.ts');

const PHONE = { width: 390, height: 844 };
const ADA = { username: 'ada', password: 'analytical engine 1843' };
/** Bo's role colour: a pink that reads on the light panel as it is (lightened on the dark one). */
const PINK = 0xc2185b;
/** Ada's: a yellow that fails 4.5:1 on the light panel, so it is darkened there. */
const YELLOW = 0xffee00;

function rgb(color: number): string {
  return `rgb(${(color >> 16) & 0xff}, ${(color >> 8) & 0xff}, ${color & 0xff})`;
}

/**
 * Issue #24, where the server-rendered channel view meets what its scripts add, in Chromium at
 * desktop size and 390×844: a message arriving live joins its author's group, an older page's last
 * message regroups with the first one shown before it (one day separator), the view follows the
 * history pane (stays at the newest, or stays put with "New messages ↓" when scrolled up), and
 * names show their highest coloured role's colour, readable on the light and the dark theme.
 */
describe.skipIf(!chromiumAvailable)('the channel view as messages arrive, in Chromium', () => {
  let served: ServedApp;
  let adaId: string;
  let bo: string;
  let serverId: string;
  const sessions: BrowserSession[] = [];
  const problems: string[] = [];

  async function open(viewport?: { width: number; height: number }): Promise<Page> {
    const session = await launchBrowser(viewport);
    sessions.push(session);
    const { page } = session;
    collectProblems(page, problems);
    await signInWithForm(page, served.baseUrl, ADA);
    return page;
  }

  /** Opens a channel and waits for its live stream to be connected. */
  async function openChannel(page: Page, channelId: string): Promise<void> {
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    await page.locator('ol.messages[data-live-state="open"]').waitFor();
  }

  async function channel(name: string): Promise<string> {
    return (await createChannel(served.t.services, operatorActing(), serverId, { name })).id;
  }

  const classOf = (page: Page, id: string) => page.locator(`#m${id}`).getAttribute('class');
  const separators = (page: Page) => page.locator('.history li.day-separator').allTextContents();

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    adaId = (await registerPerson(deps, actingOf(ANONYMOUS), { ...ADA, name: 'Ada Lovelace' })).id;
    bo = (await registerPerson(deps, actingOf(ANONYMOUS), { username: 'bo', name: 'Bo Babbage', password: 'difference engine 1822' })).id;
    const server = await createServer(deps, personActingOf(adaId), { name: 'Engines' });
    serverId = server.id;
    await addMember(deps, operatorActing(), server.id, bo);
    const navigators = await createRole(deps, operatorActing(), server.id, { name: 'Navigators', permissions: 0n, color: PINK });
    const plain = await createRole(deps, operatorActing(), server.id, { name: 'Plain', permissions: 0n });
    const lamps = await createRole(deps, operatorActing(), server.id, { name: 'Lamplighters', permissions: 0n, color: YELLOW });
    // Bo's highest role ("Plain") has no colour: the highest coloured one below it counts.
    await setMemberRoles(deps, operatorActing(), server.id, bo, [navigators.id, plain.id]);
    await setMemberRoles(deps, operatorActing(), server.id, adaId, [navigators.id, lamps.id]);
  });

  afterAll(async () => {
    for (const session of sessions) await session.close();
    await served?.close();
  });

  it('a message arriving live from the author of the last one joins their group; another author starts a new one', async () => {
    const deps = served.t.services;
    const room = await channel('live-groups');
    const first = await postMessage(deps, actingOf(person(bo)), room, 'The mill is running.');
    const page = await open();
    await openChannel(page, room);

    const joined = await postMessage(deps, actingOf(person(bo)), room, 'Cards are punched.');
    await page.locator(`#m${joined.id}`).waitFor();
    await expect.poll(() => classOf(page, joined.id)).toBe('message grouped');
    // As the server renders a grouped message: the hour in the gutter, the name for screen readers only.
    expect(await page.locator(`#m${joined.id} .gutter time[data-short]`).count()).toBe(1);
    expect(await page.locator(`#m${joined.id} .message-main > .visually-hidden`).textContent()).toBe('Bo Babbage');
    expect(await page.locator(`#m${joined.id} .avatar, #m${joined.id} .meta`).count()).toBe(0);
    expect(await classOf(page, first.id)).toBe('message');

    const other = await postMessage(deps, actingOf(person(adaId)), room, 'Shipping the tables today.');
    await page.locator(`#m${other.id}`).waitFor();
    const back = await postMessage(deps, actingOf(person(bo)), room, 'Noted.');
    await page.locator(`#m${back.id}`).waitFor();
    expect(await classOf(page, other.id)).toBe('message');
    expect(await classOf(page, back.id)).toBe('message');
    expect(await separators(page)).toEqual(['Today']);
    await screenshot(page, 'chat-live-01-grouped-live', { fullPage: false });

  });

  it('an older page loaded by scrolling up regroups with the first message shown, under one day separator', async () => {
    const deps = served.t.services;
    const room = await channel('long-run');
    const ids: string[] = [];
    // 60 messages from Bo within a minute: the newest 50 open, the first of them heads its page.
    for (let i = 1; i <= 60; i += 1) ids.push((await postMessage(deps, actingOf(person(bo)), room, `run ${i}`)).id);
    const boundary = ids[10] as string;
    const page = await open();
    await page.goto(`${served.baseUrl}/channels/${room}`);
    expect(await classOf(page, boundary)).toBe('message');
    expect(await page.locator(`#m${boundary}`).evaluate((li) => li.previousElementSibling?.className)).toBe('day-separator');

    await page.evaluate(`document.querySelector('.history').scrollBy(0, -1e6)`);
    await expect.poll(() => page.locator('.history li[data-id]').count()).toBe(60);
    await expect.poll(() => classOf(page, boundary)).toBe('message grouped');
    expect(await separators(page)).toEqual(['Today']);
    // One header for the whole run: the first message's.
    expect(await page.locator('.history li.message:not(.grouped)').evaluateAll((items) => items.map((li) => li.id))).toEqual([`m${ids[0]}`]);
    await screenshot(page, 'chat-live-02-older-page-regrouped', { fullPage: false });
  });

  for (const [label, viewport] of [
    ['desktop', undefined],
    ['phone', PHONE],
  ] as const) {
    it(`follows the history pane: at the newest a live message stays in view; scrolled up, nothing moves and "New messages ↓" appears (${label})`, async () => {
      const deps = served.t.services;
      const room = await channel(`busy-${label}`);
      for (let i = 1; i <= 40; i += 1) await postMessage(deps, actingOf(person(i % 2 ? bo : adaId)), room, `line ${i}: a message long enough to take some room in the pane`);
      const page = await open(viewport);
      await openChannel(page, room);
      const pane = page.locator('.history');
      // The pane is what scrolls, at both sizes.
      expect(await page.evaluate<boolean>(`(() => { const el = document.querySelector('.history'); return el.scrollHeight > el.clientHeight && getComputedStyle(el).overflowY === 'auto'; })()`)).toBe(true);

      const atNewest = await postMessage(deps, actingOf(person(bo)), room, 'Arrived while you were at the newest.');
      await page.locator(`#m${atNewest.id}`).waitFor();
      await expect.poll(() => pane.evaluate((el) => Math.abs(el.scrollTop))).toBeLessThan(2);
      const bottoms = await page.evaluate<[number, number]>(`[document.querySelector('#m${atNewest.id}').getBoundingClientRect().bottom, document.querySelector('.history').getBoundingClientRect().bottom]`);
      expect(bottoms[0]).toBeLessThanOrEqual(bottoms[1] + 1);
      expect(await page.locator('a[data-jump]').isHidden()).toBe(true);

      // Scrolled up a little (less than two screens): what is on screen stays where it is.
      await pane.evaluate((el) => el.scrollBy(0, -300));
      const windowY = await page.evaluate<number>('window.scrollY');
      const watched = page.locator('.history li.message').nth(20);
      const before = await watched.evaluate((el) => el.getBoundingClientRect().top);
      const below = await postMessage(deps, actingOf(person(bo)), room, 'Arrived while you were reading older ones.');
      await page.locator(`#m${below.id}`).waitFor({ state: 'attached' });
      const jump = page.locator('a[data-jump]');
      await jump.waitFor();
      expect(await jump.textContent()).toBe('New messages ↓');
      expect(Math.abs((await watched.evaluate((el) => el.getBoundingClientRect().top)) - before)).toBeLessThan(1);
      expect(await page.evaluate<number>('window.scrollY')).toBe(windowY);
      await screenshot(page, `chat-live-03-new-messages-hint-${label}`, { fullPage: false });

      await jump.click();
      await expect.poll(() => pane.evaluate((el) => Math.abs(el.scrollTop))).toBeLessThan(2);
      await expect.poll(() => jump.isHidden()).toBe(true);
      expect(await jump.textContent()).toBe('Jump to present ↓');
      expect(problems).toEqual([]);
    });
  }

  it('names show their highest coloured role\'s colour, made readable on the light and the dark panel, live ones too', async () => {
    const deps = served.t.services;
    const room = await channel('colours');
    const fromBo = await postMessage(deps, actingOf(person(bo)), room, 'In pink.');
    const fromAda = await postMessage(deps, actingOf(person(adaId)), room, 'In yellow, darkened to read on white.');
    const page = await open();
    await openChannel(page, room);
    const colorOf = (id: string) => page.evaluate<string>(`getComputedStyle(document.querySelector('#m${id} .author')).color`);
    expect(await colorOf(fromBo.id)).toBe(rgb(PINK));
    expect(readableOn(YELLOW, 0xffffff)).not.toBe(YELLOW);
    expect(await colorOf(fromAda.id)).toBe(rgb(readableOn(YELLOW, 0xffffff)));
    expect(hexColor(readableOn(YELLOW, 0xffffff))).toBe('#807700');

    // A message arriving live (another author, so it heads its own group) is coloured too.
    const live = await postMessage(deps, actingOf(person(bo)), room, 'Live, and still pink.');
    await page.locator(`#m${live.id} .author`).waitFor();
    await expect.poll(() => colorOf(live.id)).toBe(rgb(PINK));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'chat-live-04-role-colours-light', { fullPage: false });

    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await colorOf(fromAda.id)).toBe(rgb(YELLOW));
    expect(await colorOf(fromBo.id)).toBe(rgb(readableOn(PINK, 0x1f2227)));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'chat-live-05-role-colours-dark', { fullPage: false });
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

warnIfChromiumMissing('test/browser/webhook-live.test.ts');

/** Pictures for avatars, icons and embed images, answered by the browser itself (no network in CI). */
const PICTURES: Record<string, string> = {
  'deploy.svg': `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#4f46e5"/><path d="M20 40l12-18 12 18z" fill="#fff"/></svg>`,
  'ci.svg': `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><circle cx="16" cy="16" r="16" fill="#0ea5e9"/><path d="M9 16l5 5 9-10" stroke="#fff" stroke-width="3" fill="none"/></svg>`,
  'tests.svg': `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#f59e0b"/><circle cx="32" cy="32" r="14" fill="#fff"/></svg>`,
  'thumb.svg': `<svg xmlns="http://www.w3.org/2000/svg" width="80" height="80"><rect width="80" height="80" rx="12" fill="#22c55e"/><text x="40" y="52" font-size="34" text-anchor="middle" fill="#fff" font-family="sans-serif">v2</text></svg>`,
  'chart.svg': `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="140"><rect width="400" height="140" fill="#f1f5f9"/><g fill="#22c55e"><rect x="20" y="80" width="40" height="50"/><rect x="80" y="60" width="40" height="70"/><rect x="140" y="40" width="40" height="90"/><rect x="200" y="50" width="40" height="80"/><rect x="260" y="25" width="40" height="105"/><rect x="320" y="15" width="40" height="115"/></g></svg>`,
};

/**
 * Issue #5 "Done when": a person creates a webhook on the Integrations page, the URL it shows once
 * is posted to with fetch, and the message appears in the open channel view without a reload,
 * with its APP badge, its embed, Markdown rendered and no script run.
 */
describe.skipIf(!chromiumAvailable)('webhook messages appear live in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let channelId: string;
  const consoleErrors: string[] = [];
  const failedResponses: string[] = [];

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const owner = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'grace', name: 'Grace Hopper', password: 'cobol forever 59' });
    const colleague = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'alan', name: 'Alan Turing', password: 'enigma machine 42' });
    const server = await createServer(deps, personActingOf(owner.id), { name: 'Release Engineering' });
    await addMember(deps, operatorActing(), server.id, colleague.id);
    channelId = server.channels[0]?.id as string;
    await postMessage(deps, actingOf(person(colleague.id)), channelId, 'Shipping **v2.4.1** this afternoon. Ping me in `#general` if anything looks off.');
    await postMessage(deps, actingOf(person(owner.id)), channelId, 'Sounds good. I’ll hook the deploy pipeline up to this channel.');

    browser = await launchBrowser();
    await browser.context.route('https://img.example/**', (route) =>
      route.fulfill({ status: 200, contentType: 'image/svg+xml', body: PICTURES[new URL(route.request().url()).pathname.slice(1)] ?? '' }),
    );
    // CSP violations and script errors surface as console errors; a missing asset as a failed response.
    browser.page.on('console', (m) => {
      if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) consoleErrors.push(`${m.text()} @ ${m.location().url}`);
    });
    browser.page.on('pageerror', (e) => consoleErrors.push(e.message));
    browser.page.on('response', (r) => {
      if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') failedResponses.push(`${r.status()} ${r.url()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('creates a webhook in the settings page, posts to its URL with fetch, and sees the message appear live with its APP badge', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/login`);
    await submitSignIn(page, 'grace', 'cobol forever 59');
    await page.waitForURL((url) => url.pathname === '/');

    // Channel settings → Integrations, from the channel view.
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    await page.getByRole('link', { name: 'Integrations (webhooks)' }).click();
    await page.waitForURL(/\/settings\/integrations/);
    await page.getByLabel('Name', { exact: true }).fill('Deploy Bot');
    await page.getByLabel('Avatar URL').fill('https://img.example/deploy.svg');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const url = (await page.locator('#webhook-url').inputValue()).trim();
    expect(url).toMatch(new RegExp(`^${served.baseUrl}/api/v1/webhooks/\\d+/\\S+$`));
    await screenshot(page, 'webhook-live-01-created', { fullPage: false });

    // Back in the channel, scrolled to the bottom, with its live stream open.
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    await page.locator('ol.messages[data-live-state="open"]').waitFor();
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight); window.__samePage = true');
    const before = await page.locator('.messages .message').count();

    // The deploy pipeline posts, from outside the browser.
    const response = await fetch(`${url}?wait=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        content: 'Deployed **v2.4.1** to production <script>window.__pwned = true</script> — details: https://status.example/deploys/241 @everyone',
        embeds: [
          {
            title: 'Deploy #241 succeeded',
            url: 'https://ci.example/deploys/241',
            description: 'All **42** checks passed on `main`.\nRolled out to *3 regions* with zero downtime.',
            color: 0x22c55e,
            timestamp: new Date().toISOString(),
            author: { name: 'Release pipeline', url: 'https://ci.example', icon_url: 'https://img.example/ci.svg' },
            thumbnail: { url: 'https://img.example/thumb.svg' },
            fields: [
              { name: 'Version', value: 'v2.4.1', inline: true },
              { name: 'Duration', value: '3m 12s', inline: true },
              { name: 'Regions', value: 'eu-west, us-east, ap-south', inline: true },
              { name: 'Changelog', value: '• Faster webhook delivery\n• Fixed [#812](https://tracker.example/812): avatars on phones', inline: false },
            ],
            image: { url: 'https://img.example/chart.svg' },
            footer: { text: 'ci.example', icon_url: 'https://img.example/ci.svg' },
          },
        ],
      }),
    });
    expect(response.status).toBe(200);
    const record = (await response.json()) as { id: string };

    const item = page.locator(`#m${record.id}`);
    await item.waitFor();
    expect(await page.locator('.messages .message').count()).toBe(before + 1);
    expect(await item.locator('.author').textContent()).toBe('Deploy Bot');
    expect(await item.locator('.badge').textContent()).toBe('APP');
    expect(await item.locator('.avatar img').getAttribute('src')).toBe('https://img.example/deploy.svg');
    expect(await item.locator('.body strong').textContent()).toBe('v2.4.1');
    expect(await item.locator('.body').textContent()).toContain('<script>window.__pwned = true</script>');
    expect(await item.locator('.body a').getAttribute('href')).toBe('https://status.example/deploys/241');
    expect(await item.locator('.embed-title').textContent()).toBe('Deploy #241 succeeded');
    expect(await item.locator('.embed-title a').getAttribute('href')).toBe('https://ci.example/deploys/241');
    expect(await item.locator('.embed-bar rect').getAttribute('fill')).toBe('#22c55e');
    expect(await item.locator('.embed-field.inline').count()).toBe(3);
    expect(await item.locator('.embed-description strong').textContent()).toBe('42');
    // No script ran, nothing reloaded, and the view followed the new message to the bottom.
    expect(await item.locator('script').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.evaluate('window.__samePage')).toBe(true);
    await expect.poll(() => page.evaluate<boolean>('window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 2')).toBe(true);

    // The page itself may post too (same origin, no CORS): a failing run under another name.
    const status = await page.evaluate<number, string>(
      (target) =>
        fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            username: 'Nightly tests',
            avatar_url: 'https://img.example/tests.svg',
            embeds: [
              {
                title: '2 tests failed on main',
                color: 0xef4444,
                description: '`test/http/refresh.test.ts` › *a refresh token works once*\n`test/unit/pkce.test.ts` › _S256 vector_',
                fields: [
                  { name: 'Passed', value: '1,284', inline: true },
                  { name: 'Failed', value: '2', inline: true },
                ],
                footer: { text: 'nightly · run 1912' },
              },
            ],
          }),
        }).then((r) => r.status),
      url,
    );
    expect(status).toBe(204);
    const nightly = page.locator('.messages .message').last();
    await expect.poll(() => nightly.locator('.author').textContent()).toBe('Nightly tests');
    expect(await nightly.locator('.badge').textContent()).toBe('APP');
    expect(await nightly.locator('.embed-bar rect').getAttribute('fill')).toBe('#ef4444');
    expect(await nightly.locator('.body').count()).toBe(0);
    expect(await page.evaluate('window.__samePage')).toBe(true);

    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'webhook-live-02-channel-desktop');
    await item.scrollIntoViewIfNeeded();
    await screenshot(page, 'webhook-live-03-embed-desktop', { fullPage: false });

    // The same channel on a phone: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.locator('ol.messages[data-live-state="open"]').waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.locator(`#m${record.id}`).scrollIntoViewIfNeeded();
    await screenshot(page, 'webhook-live-04-embed-phone', { fullPage: false });
    await screenshot(page, 'webhook-live-05-channel-phone');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'webhook-live-06-embed-phone-dark', { fullPage: false });

    expect(consoleErrors).toEqual([]);
    expect(failedResponses).toEqual([]);
  });
});

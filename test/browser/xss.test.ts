import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createApplication } from '../../src/modules/applications/applications.service.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { s256Challenge } from '../../src/modules/oauth/pkce.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { OPERATOR, person } from '../../src/core/actor.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';

warnIfChromiumMissing('test/browser/xss.test.ts');

/**
 * Issue #7 §6 XSS: markup in everything people and apps can name — webhook content, the
 * username a webhook posts as, display names, embeds (title, description, fields, author,
 * footer, links), app names and descriptions, server, channel-topic and role names — is shown as
 * text in Chromium, and no script runs. Each payload would call `__xss.push(<where>)` or
 * `alert()`; the page gets a `__xss` array and a dialog trap before any of its scripts, and CSP
 * violations (which would mean markup got through escaping) are recorded from the console.
 */

/** A payload that would record `tag` if it ever ran; short enough for 32-character names. */
const p = (tag: string) => `<svg onload=__xss.push('${tag}')>`;
const ALERT = `"'><img src=x onerror=alert(1)>`;
const SCRIPT = '</script><script>__xss.push("script")</script>';

interface Inspection {
  /** What payloads pushed to window.__xss: any entry means a script ran. */
  ran: string[];
  /** Elements with an on* attribute (the app's own markup has none: strict CSP). */
  handlers: string[];
  /** Inline or foreign scripts. */
  scripts: string[];
  /** href/src/action values with a script scheme. */
  badLinks: string[];
  /** Payload markup found in the serialised DOM (text would be re-escaped there). */
  rawMarkup: string[];
  /** The page's text and the values of its form fields: what a person sees. */
  text: string;
}

/** Runs in the page (a string: the project's TypeScript has no DOM types). */
const INSPECT = `(() => {
  const all = [...document.querySelectorAll('*')];
  const markup = document.documentElement.outerHTML;
  return {
    ran: window.__xss,
    handlers: all.filter((el) => [...el.attributes].some((a) => a.name.toLowerCase().startsWith('on'))).map((el) => el.outerHTML.slice(0, 120)),
    scripts: [...document.scripts].filter((s) => !s.src || new URL(s.src).origin !== location.origin).map((s) => s.outerHTML.slice(0, 120)),
    badLinks: all.flatMap((el) => ['href', 'src', 'action', 'formaction'].map((a) => el.getAttribute(a) || '')).filter((v) => /^\\s*(javascript|data:text\\/html|vbscript):/i.test(v)),
    rawMarkup: ['<svg onload', '<img src=x', '<script>__xss'].filter((m) => markup.includes(m)),
    text: document.body.innerText + '\\n' + [...document.querySelectorAll('input, textarea')].map((f) => f.value).join('\\n'),
  };
})()`;

describe.skipIf(!chromiumAvailable)('XSS payloads render as inert text in Chromium', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let serverId: string;
  let channelId: string;
  let appId: string;
  const dialogs: string[] = [];
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  const visited: string[] = [];
  let execute: (body: unknown) => Promise<Response>;

  beforeAll(async () => {
    served = await serveTestApp();
    const deps = served.t.services;
    const owner = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'xssowner', name: p('owner'), password: 'inert text only 1' });
    const other = await registerPerson(deps, actingOf(ANONYMOUS), { username: 'xssother', name: ALERT.slice(0, 32), password: 'inert text only 2' });
    const server = await createServer(deps, personActingOf(owner.id), { name: `Srv ${p('server')} ${ALERT}` });
    serverId = server.id;
    channelId = server.channels[0]?.id as string;
    await createChannel(deps, operatorActing(), server.id, { name: 'second', topic: `${p('topic')} ${SCRIPT}` });
    const role = await createRole(deps, operatorActing(), server.id, { name: `${p('role')}${ALERT}`, permissions: 0n });
    await addMember(deps, operatorActing(), server.id, other.id, [role.id]);
    await postMessage(deps, actingOf(person(other.id)), channelId, `${p('content')} ${SCRIPT} [click](javascript:__xss.push('md')) <a href="javascript:alert(1)">x</a>`);

    const created = await createApplication(deps, actingOf({ kind: 'person', id: owner.id }), {
      name: `A${p('app')}`.slice(0, 32),
      description: `${p('description')} ${SCRIPT} ${ALERT}`,
      redirectUris: ['https://app.example/cb'],
      confidential: false,
    });
    appId = created.application.id;
    await enableBot(deps, actingOf(OPERATOR), appId);

    const { webhook, token } = await createWebhook(deps, actingOf({ kind: 'person', id: owner.id }), server.channels[0]!, { name: `Hook ${p('webhook')}`, avatarUrl: null });
    execute = (body: unknown) =>
      fetch(`${served.baseUrl}/api/v1/webhooks/${webhook.id}/${token}?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const posted = await execute({
      content: `${p('webhook-content')} ${SCRIPT} [a](javascript:alert(1))`,
      username: `${p('username')}`,
      embeds: [
        {
          title: `${p('title')}${ALERT}`,
          description: `${p('embed-description')} ${SCRIPT} [b](javascript:alert(1))`,
          url: 'https://example.com/"><svg/onload=alert(1)>',
          fields: [
            { name: p('field-name'), value: `${p('field-value')} ${SCRIPT}`, inline: true },
            { name: ALERT, value: '[c](javascript:alert(1))' },
          ],
          author: { name: p('author'), url: 'https://example.com/author"onmouseover="alert(1)"' },
          footer: { text: `${p('footer')}${ALERT}` },
        },
      ],
    });
    expect(posted.status, await posted.clone().text()).toBe(200);
    // javascript: and data: URLs in embeds and avatars are refused before they are stored.
    for (const body of [
      { content: 'x', embeds: [{ title: 't', url: 'javascript:alert(1)' }] },
      { content: 'x', embeds: [{ title: 't', author: { name: 'a', url: 'javascript:alert(1)' } }] },
      { content: 'x', embeds: [{ image: { url: 'data:text/html,<script>alert(1)</script>' } }] },
      { content: 'x', avatar_url: 'javascript:alert(1)' },
    ]) {
      expect((await execute(body)).status).toBe(400);
    }

    browser = await launchBrowser();
    await browser.context.addInitScript('window.__xss = [];');
    browser.page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()} @ ${browser.page.url()}`);
      void dialog.dismiss();
    });
    browser.page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspViolations.push(`${m.text()} @ ${browser.page.url()}`);
    });
    browser.page.on('pageerror', (e) => pageErrors.push(`${e.message} @ ${browser.page.url()}`));

    await browser.page.goto(`${served.baseUrl}/login`);
    await submitSignIn(browser.page, 'xssowner', 'inert text only 1');
    await browser.page.waitForURL((url) => url.pathname === '/');
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    console.log(
      `xss summary: ${visited.length} pages visited in Chromium; ${dialogs.length} dialogs, ${cspViolations.length} CSP violations, ${pageErrors.length} page errors, 0 scripts run from payloads expected`,
    );
  });

  /** Loads `path` and checks that nothing ran and the payload markup is not in the DOM as markup. */
  async function visit(path: string, expectText: string[]): Promise<void> {
    const { page } = browser;
    const response = await page.goto(`${served.baseUrl}${path}`, { waitUntil: 'load' });
    expect(response?.status(), path).toBeLessThan(400);
    await page.waitForTimeout(150); // onload handlers and timers would have fired by now
    visited.push(path);
    const state = (await page.evaluate(INSPECT)) as Inspection;
    expect({ path, ran: state.ran, handlers: state.handlers, scripts: state.scripts, badLinks: state.badLinks, rawMarkup: state.rawMarkup }).toEqual({ path, ran: [], handlers: [], scripts: [], badLinks: [], rawMarkup: [] });
    for (const text of expectText) expect(state.text, `${path} shows ${text} as text`).toContain(text);
    expect(dialogs).toEqual([]);
    expect(cspViolations).toEqual([]);
  }

  it('the channel view shows message content, the webhook username override, display names and every embed part as text', async () => {
    // Where Markdown applies (content, embed description, field values), `__…__` is bold: the text keeps the rest.
    const md = (tag: string) => `<svg onload=xss.push('${tag}')>`;
    await visit(`/channels/${channelId}`, [md('content'), md('webhook-content'), p('username'), p('title'), md('embed-description'), p('field-name'), md('field-value'), p('author'), p('footer'), ALERT.slice(0, 32), '</script><script>', '[click](javascript:']);
    // Markdown links to javascript: stay text, not links.
    expect(await browser.page.locator('a', { hasText: 'click' }).count()).toBe(0);
    await screenshot(browser.page, 'xss-01-channel', { fullPage: false });
  });

  it('a message that arrives live over the event stream is rendered as text too', async () => {
    const { page } = browser;
    await page.goto(`${served.baseUrl}/channels/${channelId}`);
    await page.waitForTimeout(300); // the stream is open
    const live = await execute({ content: `LIVE ${p('live-content')} ${SCRIPT}`, username: `L${p('live-user')}`, embeds: [{ title: `LT ${p('live-title')}`, description: p('live-embed') }] });
    expect(live.status).toBe(200);
    await page.getByText(`L${p('live-user')}`).waitFor({ timeout: 10_000 });
    await page.waitForTimeout(150);
    const state = (await page.evaluate(INSPECT)) as Inspection;
    expect({ ran: state.ran, handlers: state.handlers, rawMarkup: state.rawMarkup }).toEqual({ ran: [], handlers: [], rawMarkup: [] });
    expect(state.text).toContain(`LT ${p('live-title')}`);
    expect(state.text).toContain('</script><script>');
    expect(dialogs).toEqual([]);
    expect(cspViolations).toEqual([]);
    visited.push(`/channels/${channelId} (live)`);
  });

  it('the server, its settings (roles, members, channels) and the Integrations page show names and topics as text', async () => {
    await visit('/', [`Srv ${p('server')}`]);
    await visit(`/servers/${serverId}`, [`Srv ${p('server')}`]);
    await visit(`/servers/${serverId}/settings/roles`, [p('role')]);
    await visit(`/servers/${serverId}/settings/members`, [ALERT.slice(0, 32)]);
    await visit(`/servers/${serverId}/settings/channels`, ['second']);
    await visit(`/servers/${serverId}/settings/integrations`, [`Hook ${p('webhook')}`]);
  });

  it('the developer portal and the consent screens (sign-in with the app, bot install with its server picker) show app names and descriptions as text', async () => {
    await visit('/developers/applications', [p('app').slice(0, 31)]);
    await visit(`/developers/applications/${appId}`, [p('description')]);
    const challenge = s256Challenge('x'.repeat(50));
    const query = new URLSearchParams({ response_type: 'code', client_id: appId, redirect_uri: 'https://app.example/cb', scope: 'identify', code_challenge: challenge, code_challenge_method: 'S256' });
    await visit(`/app/oauth2/authorize?${query.toString()}`, [p('app').slice(0, 31), p('description')]);
    await screenshot(browser.page, 'xss-02-consent', { fullPage: false });
    const bot = new URLSearchParams({ client_id: appId, scope: 'bot', permissions: '3072' });
    await visit(`/app/oauth2/authorize?${bot.toString()}`, [p('app').slice(0, 31), `Srv ${p('server')}`]);
  });

  it('no page raised a script error, a dialog or a CSP violation', () => {
    expect(visited.length).toBeGreaterThanOrEqual(10);
    expect({ dialogs, cspViolations, pageErrors }).toEqual({ dialogs: [], cspViolations: [], pageErrors: [] });
  });
});

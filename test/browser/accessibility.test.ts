import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { Permission } from '../../src/core/permissions.js';
import { person } from '../../src/core/actor.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { installForUser } from '../../src/modules/applications/user-installs.service.js';
import { createInvite } from '../../src/modules/directory/invites.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { seriousViolations } from '../support/axe.js';
import { type BrowserSession, chromiumAvailable, launchBrowser, screenshot, type ServedApp, serveTestApp, submitSignIn, warnIfChromiumMissing } from '../support/browser.js';
import { given, type TestBot, type TestWebhook } from '../support/given.js';
import { openDm } from '../http/dms.fixtures.js';
import { insertPasskey } from '../../src/modules/accounts/passkeys.repository.js';
import { operatorResetLink } from '../../src/modules/accounts/password-reset.service.js';
import { issueRecoveryCodesIfNone, secondFactorsChanged } from '../../src/modules/mfa/mfa.service.js';
import { actingOf, ANONYMOUS, operatorActing, personActingOf } from '../support/acting.js';

warnIfChromiumMissing('test/browser/accessibility.test.ts');

/**
 * Every page, as a desktop and as a 390×844 phone (issue #24 "Done when"), the phone in the dark
 * theme too: axe-core finds no serious or critical violation, nothing scrolls sideways, and a
 * screenshot of each is kept as test-results/a11y-<name>-<desktop|phone|phone-dark>.png. A new
 * page is one more entry in PAGES.
 */
interface World {
  serverId: string;
  channelId: string;
  roleId: string;
  inviteCode: string;
  hook: TestWebhook;
  bot: TestBot;
  dmChannelId: string;
  messageId: string;
  oauthClient: { clientId: string; redirectUri: string };
  /** A live password reset link (path and query) of `grace`. */
  resetPath: string;
}

interface PageSpec {
  name: string;
  path: (w: World) => string;
  /** Visited before signing in (sign-in and sign-up pages). */
  signedOut?: boolean;
  /** Brings the page to the state to check (e.g. a refused form). */
  setup?: (page: Page, w: World) => Promise<void>;
  /** The screenshot shows the first screen only: the page is too long for one picture to be read. */
  firstScreenOnly?: boolean;
}

const PAGES: PageSpec[] = [
  { name: 'sign-in', path: () => '/login', signedOut: true },
  {
    name: 'sign-in-refused',
    path: () => '/login',
    signedOut: true,
    setup: async (page) => {
      await submitSignIn(page, 'nobody', 'not the password');
      await page.waitForLoadState('load');
    },
  },
  { name: 'sign-up', path: () => '/register', signedOut: true },
  { name: 'forgot-password', path: () => '/forgot-password', signedOut: true },
  { name: 'reset-link-refused', path: () => '/reset-password?token=ghpr_not-a-real-link', signedOut: true },
  // Issue #38: the other pages of a person's own account before they are signed in.
  { name: 'reset-password', path: (w) => w.resetPath, signedOut: true },
  { name: 'verify-email-refused', path: () => '/verify-email?token=ghev_not-a-real-link', signedOut: true },
  {
    // The second sign-in step of a person whose second factor is a passkey (with recovery codes).
    name: 'second-factor-step',
    path: () => '/login',
    signedOut: true,
    setup: async (page) => {
      await submitSignIn(page, 'grace', 'compiler first 1952');
      await page.waitForURL((url) => url.pathname === '/login/second-factor');
    },
  },
  { name: 'not-found-signed-out', path: () => '/no/such/page', signedOut: true },
  { name: 'home', path: () => '/' },
  { name: 'server', path: (w) => `/servers/${w.serverId}` },
  { name: 'channel', path: (w) => `/channels/${w.channelId}` },
  { name: 'messages', path: () => '/messages' },
  { name: 'dm', path: (w) => `/messages/${w.dmChannelId}` },
  { name: 'invite', path: (w) => `/invite/${w.inviteCode}` },
  { name: 'message-edit', path: (w) => `/channels/${w.channelId}/messages/${w.messageId}/edit` },
  { name: 'message-delete', path: (w) => `/channels/${w.channelId}/messages/${w.messageId}/delete` },
  { name: 'channel-delete', path: (w) => `/servers/${w.serverId}/channels/${w.channelId}/delete` },
  { name: 'server-settings', path: (w) => `/servers/${w.serverId}/settings` },
  { name: 'server-channels', path: (w) => `/servers/${w.serverId}/settings/channels` },
  { name: 'server-roles', path: (w) => `/servers/${w.serverId}/settings/roles` },
  { name: 'server-role', path: (w) => `/servers/${w.serverId}/settings/roles/${w.roleId}` },
  { name: 'server-members', path: (w) => `/servers/${w.serverId}/settings/members` },
  { name: 'server-invites', path: (w) => `/servers/${w.serverId}/settings/invites` },
  { name: 'server-integrations', path: (w) => `/servers/${w.serverId}/settings/integrations` },
  { name: 'channel-webhooks', path: (w) => `/channels/${w.hook.channel.id}/settings/integrations` },
  { name: 'webhook-regenerate', path: (w) => `/channels/${w.hook.channel.id}/settings/integrations/webhooks/${w.hook.webhook.id}/regenerate` },
  { name: 'webhook-delete', path: (w) => `/channels/${w.hook.channel.id}/settings/integrations/webhooks/${w.hook.webhook.id}/delete` },
  { name: 'developer-apps', path: () => '/developers/applications' },
  { name: 'developer-app', path: (w) => `/developers/applications/${w.bot.client.app.id}` },
  { name: 'developer-url-generator', path: (w) => `/developers/applications/${w.bot.client.app.id}/oauth2/url-generator` },
  { name: 'developer-app-webhooks', path: (w) => `/developers/applications/${w.bot.client.app.id}/webhooks` },
  { name: 'consent-bot-install', path: (w) => `/app/oauth2/authorize?client_id=${w.bot.client.app.id}&scope=bot&permissions=${Permission.SEND_MESSAGES | Permission.ADMINISTRATOR}` },
  { name: 'consent-bot-install-server', path: (w) => `/app/oauth2/authorize?client_id=${w.bot.client.app.id}&scope=bot&permissions=${Permission.SEND_MESSAGES}&server_id=${w.serverId}` },
  {
    name: 'consent-oauth',
    path: (w) => `/app/oauth2/authorize?client_id=${w.oauthClient.clientId}&response_type=code&scope=identify%20email&redirect_uri=${encodeURIComponent(w.oauthClient.redirectUri)}&state=s`,
  },
  { name: 'settings-profile', path: () => '/settings/profile' },
  { name: 'settings-password', path: () => '/settings/password' },
  { name: 'settings-sessions', path: () => '/settings/sessions' },
  { name: 'settings-account', path: () => '/settings/account' },
  { name: 'settings-authorized-apps', path: () => '/settings/authorized-apps' },
  { name: 'settings-apps', path: () => '/settings/apps' },
  { name: 'settings-security', path: () => '/settings/security' },
  {
    name: 'settings-two-factor-enrol',
    path: () => '/settings/security',
    setup: async (page) => {
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await page.waitForLoadState('load');
    },
  },
  { name: 'settings-two-factor-remove', path: () => '/settings/security/totp/remove' },
  { name: 'not-found', path: () => '/no/such/page' },
  { name: 'api-reference', path: () => '/api/docs', firstScreenOnly: true },
];

const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

describe.skipIf(!chromiumAvailable)('every page is accessible on a desktop and a phone', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let world: World;

  beforeAll(async () => {
    served = await serveTestApp();
    const t = served.t;
    const owner = await registerPerson(t.services, actingOf(ANONYMOUS), { username: 'ada', name: 'Ada Lovelace', password: 'analytical engine 1' });
    const server = await given.server(t, { owner, name: 'Difference Engine' });
    await given.server(t, { owner, name: 'Analytical Engine' }); // a second server: the channel view's server switcher
    const channelId = server.channels[0]?.id as string;
    const long = await postMessage(t.services, actingOf(person(owner.id)), channelId, 'A long link: https://example.com/' + 'a'.repeat(150) + ' and `' + 'x'.repeat(120) + '`');
    await postMessage(t.services, actingOf(person(owner.id)), channelId, '```\n' + 'const veryLongLine = "' + 'y'.repeat(200) + '";\n```');
    const role = await createRole(t.services, operatorActing(), server.id, { name: 'Moderators', permissions: Permission.MANAGE_MESSAGES, color: 0x1abc9c });
    const invite = await createInvite(t.services, personActingOf(owner.id), server.id, {});
    const hook = await given.webhook(t, { name: 'Deploys', channel: server.channels[0] });
    const bot = await given.bot(t, { owner, name: 'Helper Bot' });
    await installForUser(t.services, actingOf(person(owner.id)), bot.client.app.id);
    const dm = await openDm(t, bot, { recipient_id: owner.id });
    const dmChannelId = (dm.json() as { id: string }).id;
    const oauth = await given.confidentialApp(t, { owner, name: 'Notes App', redirectUris: ['https://notes.example/callback'] });
    // Issue #38: a person with a passkey as second factor (and its recovery codes), and a reset link.
    const grace = await registerPerson(t.services, actingOf(ANONYMOUS), { username: 'grace', name: 'Grace Hopper', password: 'compiler first 1952' });
    await insertPasskey(t.services.db, { credentialId: 'a11y-passkey', userId: grace.id, name: 'Laptop', publicKey: 'AQID', signCount: 0, transports: ['internal'], createdAt: t.clock.now() });
    await issueRecoveryCodesIfNone(t.services, t.services.db, grace.id);
    await secondFactorsChanged(t.services.db, grace.id);
    const reset = new URL((await operatorResetLink(t.services, operatorActing(), 'grace')).resetUrl);
    world = { serverId: server.id, channelId, roleId: role.id, inviteCode: invite.code, hook, bot, dmChannelId, messageId: long.id, oauthClient: oauth, resetPath: reset.pathname + reset.search };
    browser = await launchBrowser(DESKTOP);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  /** Desktop and phone in the light theme; the phone again in the dark one (prefers-color-scheme). */
  const VARIANTS = [
    { size: 'desktop', viewport: DESKTOP, colorScheme: 'light' },
    { size: 'phone', viewport: PHONE, colorScheme: 'light' },
    { size: 'phone-dark', viewport: PHONE, colorScheme: 'dark' },
  ] as const;

  async function check(spec: PageSpec): Promise<void> {
    const { page } = browser;
    const found: Record<string, unknown> = {};
    for (const { size, viewport, colorScheme } of VARIANTS) {
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme });
      await page.goto(served.baseUrl + spec.path(world));
      await spec.setup?.(page, world);
      const violations = await seriousViolations(page);
      const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
      await screenshot(page, `a11y-${spec.name}-${size}`, { fullPage: spec.firstScreenOnly !== true });
      if (violations.length) found[`${size} axe`] = violations;
      if (scrollWidth > viewport.width) found[`${size} scrollWidth`] = scrollWidth;
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(found).toEqual({});
  }

  describe('signed out', () => {
    for (const spec of PAGES.filter((p) => p.signedOut)) it(spec.name, () => check(spec));
  });

  describe('signed in', () => {
    beforeAll(async () => {
      const { page } = browser;
      await page.setViewportSize(DESKTOP);
      await page.goto(`${served.baseUrl}/login`);
      await submitSignIn(page, 'ada', 'analytical engine 1');
      await page.waitForURL((url) => url.pathname === '/');
    });
    for (const spec of PAGES.filter((p) => !p.signedOut)) it(spec.name, () => check(spec));
  });
});

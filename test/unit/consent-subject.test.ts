import { describe, expect, it } from 'vitest';
import { consentPage, type ConsentPageInput, type ConsentSubject } from '../../src/modules/oauth/authorize.page.js';
import { installConsentPage } from '../../src/modules/oauth/install-consent.page.js';
import { webhookConsentPage } from '../../src/modules/oauth/incoming-webhook.page.js';

// Issue #37 §3: the consent screens answer any subject (an authorization request, an install,
// later a device request): where they post, where "Switch account" comes back to and whether they
// name a destination all come from the subject, never from a path written into the page.

const DEVICE: ConsentSubject = { action: '/device/consent', returnUrl: '/device?user_code=WDJB-MJHT', redirectUri: undefined };

function input(subject: ConsentSubject): ConsentPageInput {
  return {
    ctx: { viewer: { id: '1', username: 'ada', name: 'Ada', avatarUrl: null }, csrfToken: 'csrf', serviceName: 'Gatehouse' },
    view: {
      application: { id: '2', name: 'Tool', description: '', ownerUsername: 'dev' },
      scopes: [{ name: 'identify', description: 'Know your username' }],
      fields: [['user_code', 'WDJB-MJHT']],
      subject,
    },
  };
}

const install = { kind: 'bot' as const, commands: false, servers: [{ id: '3', name: 'Home' }], chosenServer: undefined, locked: false, lockedUnavailable: false, permissions: [] };

const pages: [string, (subject: ConsentSubject) => string][] = [
  ['the consent screen', (subject) => consentPage(input(subject))],
  ['the install screen (with its server picker)', (subject) => installConsentPage(input(subject), install)],
  ['the webhook.incoming screen', (subject) => webhookConsentPage(input(subject), { servers: [] })],
];

describe('consent screens take their subject (issue #37 §3)', () => {
  for (const [name, render] of pages) {
    it(`${name} posts to the subject's action, comes back to its URL after "Switch account", and names no destination when there is none`, () => {
      const page = render(DEVICE);
      expect(page).toContain('<form method="post" action="/device/consent">');
      expect(page).not.toContain('/app/oauth2/authorize');
      expect(page).toContain(`/login?next=${encodeURIComponent('/device?user_code=WDJB-MJHT')}`);
      expect(page).not.toContain('you will be sent to');
      expect(page).toContain('You stay on Gatehouse');
    });

    it(`${name} names the redirect URI's origin when the answer goes there`, () => {
      const page = render({ action: '/app/oauth2/authorize', returnUrl: '/app/oauth2/authorize?client_id=2', redirectUri: 'https://tool.example/cb?x=1' });
      expect(page).toContain('you will be sent to <strong class="mono">https://tool.example</strong>');
    });
  }

  it("the install screen's server picker reloads the subject's screen", () => {
    expect(installConsentPage(input(DEVICE), install)).toContain('<form method="get" action="/device/consent" class="server-picker">');
  });
});

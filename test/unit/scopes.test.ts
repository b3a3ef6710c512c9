import { describe, expect, it } from 'vitest';
import { coversScopes, describeScope, formatScopes, parseScope, SCOPES, supportedScopes } from '../../src/core/scopes.js';

describe('scopes', () => {
  it('identify, email and servers are accepted, in canonical order whatever the request order', () => {
    expect(parseScope('servers identify email')).toEqual({ ok: true, scopes: ['identify', 'email', 'servers'] });
  });

  it('duplicates collapse', () => {
    expect(parseScope('identify identify email')).toEqual({ ok: true, scopes: ['identify', 'email'] });
  });

  it('extra spaces between names are tolerated', () => {
    expect(parseScope('  identify   email ')).toEqual({ ok: true, scopes: ['identify', 'email'] });
  });

  it('an empty scope is refused', () => {
    expect(parseScope('')).toMatchObject({ ok: false });
    expect(parseScope('   ')).toMatchObject({ ok: false });
  });

  it('an unknown scope is refused and named in the reason', () => {
    const parsed = parseScope('identify address');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain('address');
  });

  it('names are case-sensitive (RFC 6749 §3.3)', () => {
    expect(parseScope('Identify').ok).toBe(false);
  });

  it('bot and applications.commands are accepted (issue #4) and advertised', () => {
    expect(parseScope('bot')).toEqual({ ok: true, scopes: ['bot'] });
    expect(parseScope('applications.commands identify bot')).toEqual({ ok: true, scopes: ['identify', 'bot', 'applications.commands'] });
    expect(supportedScopes()).toEqual(['openid', 'profile', 'identify', 'email', 'servers', 'bot', 'applications.commands', 'webhook.incoming']);
  });

  it('a reason never carries characters error_description may not hold', () => {
    const parsed = parseScope('identify "bad\\name\u00e9');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]*$/);
  });

  it('formatScopes joins in canonical order without duplicates', () => {
    expect(formatScopes(['servers', 'identify', 'servers'])).toBe('identify servers');
  });

  it('coversScopes says whether a remembered consent covers a request', () => {
    expect(coversScopes(['identify', 'email'], ['email'])).toBe(true);
    expect(coversScopes(['identify'], ['identify', 'email'])).toBe(false);
  });

  it('every scope has a plain-words description for the consent screen', () => {
    for (const s of SCOPES) expect(s.description.length).toBeGreaterThan(5);
    expect(describeScope('identify')).toBe('Know your name, username and avatar');
  });
});

describe('webhook.incoming (issue #23)', () => {
  it('is accepted, advertised, and refused together with an install scope', async () => {
    const { incomingWebhookScopeProblem } = await import('../../src/modules/oauth/incoming-webhook.js');
    expect(parseScope('webhook.incoming identify')).toEqual({ ok: true, scopes: ['identify', 'webhook.incoming'] });
    expect(supportedScopes()).toContain('webhook.incoming');
    expect(incomingWebhookScopeProblem(['identify', 'webhook.incoming'])).toBeUndefined();
    expect(incomingWebhookScopeProblem(['bot', 'webhook.incoming'])).toMatch(/cannot be combined/);
    expect(incomingWebhookScopeProblem(['applications.commands', 'webhook.incoming'])).toMatch(/cannot be combined/);
  });
});

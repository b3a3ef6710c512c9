import { describe, expect, it } from 'vitest';
import { accessTokenHash, idTokenClaims, profileClaims } from '../../src/modules/oidc/id-token.js';
import { openPrivateKey, sealPrivateKey } from '../../src/modules/oidc/key-sealing.js';
import { needsFreshSignIn, readOidcRequest, withSignedInAfter } from '../../src/modules/oidc/oidc-request.js';

const person = { id: '1234', username: 'ada', name: 'Ada', avatarUrl: 'https://cdn.example/a.png', email: 'ada@example.com', emailVerified: true };

describe('ID token claims (OpenID Connect Core §2, §3.1.3.6, §5.4)', () => {
  it('at_hash: the example of Core Appendix A.3', () => {
    expect(accessTokenHash('jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y')).toBe('77QmUPtjPfzWtF2AnpK9RQ');
  });

  it('iss, sub, aud, exp, iat, auth_time in seconds, nonce when the request had one, and no azp with a single audience', () => {
    const claims = idTokenClaims({ issuer: 'https://id.example', clientId: '99', person, scopes: ['openid'], issuedAt: 1_700_000_000_500, lifetimeMs: 3_600_000, authTime: 1_699_999_000_999, nonce: 'n', accessToken: 'x' });
    expect(claims).toEqual({ iss: 'https://id.example', sub: '1234', aud: '99', exp: 1_700_003_600, iat: 1_700_000_000, auth_time: 1_699_999_000, nonce: 'n', at_hash: accessTokenHash('x') });
    const refreshed = idTokenClaims({ issuer: 'https://id.example', clientId: '99', person, scopes: ['openid'], issuedAt: 1, lifetimeMs: 1, authTime: 1, nonce: null, accessToken: 'x' });
    expect(refreshed).not.toHaveProperty('nonce');
  });

  it('identify adds name, preferred_username and picture; email adds email and email_verified; nothing else leaks', () => {
    expect(profileClaims(person, ['openid'])).toEqual({});
    expect(profileClaims(person, ['openid', 'identify'])).toEqual({ name: 'Ada', preferred_username: 'ada', picture: 'https://cdn.example/a.png' });
    expect(profileClaims(person, ['openid', 'profile'])).toEqual({ name: 'Ada', preferred_username: 'ada', picture: 'https://cdn.example/a.png' });
    expect(profileClaims(person, ['openid', 'email'])).toEqual({ email: 'ada@example.com', email_verified: true });
    expect(profileClaims({ ...person, avatarUrl: null, email: null }, ['identify', 'email'])).toEqual({ name: 'Ada', preferred_username: 'ada' });
  });
});

describe('OpenID request parameters (Core §3.1.2.1)', () => {
  it('request, request_uri, registration and claims are refused with their codes; repeated parameters too', () => {
    expect(readOidcRequest({ request: 'x' })).toMatchObject({ ok: false, error: 'request_not_supported' });
    expect(readOidcRequest({ request_uri: 'x' })).toMatchObject({ ok: false, error: 'request_uri_not_supported' });
    expect(readOidcRequest({ registration: '{}' })).toMatchObject({ ok: false, error: 'registration_not_supported' });
    expect(readOidcRequest({ claims: '{}' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(readOidcRequest({ nonce: ['a', 'b'] })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(readOidcRequest({ prompt: 'none login' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(readOidcRequest({ max_age: '-1' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(readOidcRequest({ nonce: 'x'.repeat(513) })).toMatchObject({ ok: false, error: 'invalid_request' });
  });

  it('max_age and prompt=login need a fresh sign-in until the one they forced has happened', () => {
    const read = (q: Record<string, string>) => {
      const r = readOidcRequest(q);
      if (!r.ok) throw new Error(r.description);
      return r.request;
    };
    expect(needsFreshSignIn(read({ max_age: '60' }), 1_000, 61_000)).toBe(false);
    expect(needsFreshSignIn(read({ max_age: '60' }), 1_000, 61_001)).toBe(true);
    expect(needsFreshSignIn(read({ max_age: '0' }), 1_000, 1_000)).toBe(false);
    expect(needsFreshSignIn(read({ max_age: '0' }), 1_000, 1_001)).toBe(true);
    expect(needsFreshSignIn(read({ prompt: 'login' }), 5, 6)).toBe(true);
    expect(needsFreshSignIn(read({ prompt: 'select_account' }), 5, 6)).toBe(true);
    expect(needsFreshSignIn(read({ prompt: 'login', signed_in_after: '5' }), 5, 6)).toBe(false);
    expect(needsFreshSignIn(read({ prompt: 'login', signed_in_after: '6' }), 5, 6)).toBe(true);
    expect(withSignedInAfter('/app/oauth2/authorize?a=1&signed_in_after=3', 9)).toBe('/app/oauth2/authorize?a=1&signed_in_after=9');
  });
});

describe('private signing keys at rest', () => {
  it('sealed with the secret, opened only with the same secret; plain JSON passes through', () => {
    const sealed = sealPrivateKey('{"d":"secret"}', 'a long secret for tests', Buffer.alloc(16, 1), Buffer.alloc(12, 2));
    expect(sealed.startsWith('enc:v1:')).toBe(true);
    expect(sealed).not.toContain('secret"');
    expect(openPrivateKey(sealed, 'a long secret for tests', 'k1')).toBe('{"d":"secret"}');
    expect(() => openPrivateKey(sealed, 'another long secret!!', 'k1')).toThrow(/not the secret it was created with/);
    expect(() => openPrivateKey(sealed, undefined, 'k1')).toThrow(/set GATEHOUSE_OIDC_KEY_SECRET/);
    expect(openPrivateKey('{"d":"x"}', undefined, 'k2')).toBe('{"d":"x"}');
  });
});

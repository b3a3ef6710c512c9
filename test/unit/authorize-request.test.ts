import { describe, expect, it } from 'vitest';
import { authorizationCodeUri, authorizationErrorUri, authorizationResponseUri, safeErrorDescription } from '../../src/modules/oauth/authorize-response.js';
import { checkClientId, readAuthorizeParams, resolveRedirectUri, validateAuthorizeParams, type RawAuthorizeParams } from '../../src/modules/oauth/authorize.js';

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const TARGET = { redirectUri: 'https://app.example/cb', redirectUriSent: true };

function params(query: Record<string, string | string[]>): RawAuthorizeParams {
  return readAuthorizeParams(query);
}

function validate(query: Record<string, string | string[]>, confidential = false) {
  return validateAuthorizeParams(params(query), '1', TARGET, { confidential });
}

const GOOD = { response_type: 'code', scope: 'identify', code_challenge: CHALLENGE, code_challenge_method: 'S256' };

describe('reading the authorization request', () => {
  it('A2: empty values count as absent, unknown parameters are ignored, repeated ones are noted', () => {
    const p = params({ client_id: '1', state: '', scope: ['identify', 'email'], foo: 'bar' });
    expect(p.values).toEqual({ client_id: '1' });
    expect(p.repeated).toEqual(['scope']);
  });

  it('A3: a missing, repeated or malformed client_id is a page problem', () => {
    expect(checkClientId(params({})).ok).toBe(false);
    expect(checkClientId(params({ client_id: ['1', '2'] })).ok).toBe(false);
    expect(checkClientId(params({ client_id: 'abc' })).ok).toBe(false);
    expect(checkClientId(params({ client_id: '99999999999999999999' })).ok).toBe(false);
    expect(checkClientId(params({ client_id: '123' }))).toEqual({ ok: true, clientId: '123' });
  });

  it('A7: redirect_uri may be omitted only when exactly one URI is registered', () => {
    expect(resolveRedirectUri(params({}), ['https://a.example/cb'])).toEqual({ ok: true, target: { redirectUri: 'https://a.example/cb', redirectUriSent: false } });
    expect(resolveRedirectUri(params({}), ['https://a.example/cb', 'https://a.example/cb2']).ok).toBe(false);
  });

  it('A5: a loopback redirect URI keeps the port the request named', () => {
    expect(resolveRedirectUri(params({ redirect_uri: 'http://127.0.0.1:53124/cb' }), ['http://127.0.0.1/cb'])).toEqual({
      ok: true,
      target: { redirectUri: 'http://127.0.0.1:53124/cb', redirectUriSent: true },
    });
  });

  it('A4: a redirect_uri differing in any byte is a page problem', () => {
    expect(resolveRedirectUri(params({ redirect_uri: 'https://a.example/cb/' }), ['https://a.example/cb']).ok).toBe(false);
    expect(resolveRedirectUri(params({ redirect_uri: ['https://a.example/cb', 'https://a.example/cb'] }), ['https://a.example/cb']).ok).toBe(false);
  });
});

describe('validating the rest of the request', () => {
  it('a complete public-client request with S256 is valid', () => {
    const result = validate(GOOD);
    expect(result).toEqual({
      ok: true,
      request: { clientId: '1', ...TARGET, scopes: ['identify'], state: undefined, codeChallenge: CHALLENGE, prompt: undefined },
    });
  });

  it('A2: a repeated parameter is invalid_request', () => {
    expect(validate({ ...GOOD, scope: ['identify', 'email'] })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(validate({ ...GOOD, state: ['a', 'b'] })).toMatchObject({ ok: false, error: 'invalid_request' });
  });

  it('A10: missing response_type is invalid_request, any other value unsupported_response_type (I3: token too)', () => {
    expect(validate({ ...GOOD, response_type: '' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(validate({ ...GOOD, response_type: 'token' })).toMatchObject({ ok: false, error: 'unsupported_response_type' });
    expect(validate({ ...GOOD, response_type: 'code id_token' })).toMatchObject({ ok: false, error: 'unsupported_response_type' });
  });

  it('missing, empty or unknown scope is invalid_scope', () => {
    expect(validate({ ...GOOD, scope: '' })).toMatchObject({ ok: false, error: 'invalid_scope' });
    // `guilds` is Discord's alias of `servers` (DESIGN §1): an unknown name is still refused.
    expect(validate({ ...GOOD, scope: 'identify channels' })).toMatchObject({ ok: false, error: 'invalid_scope' });
  });

  it('B2: a public client without code_challenge is invalid_request; a confidential one may omit it', () => {
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = GOOD;
    expect(validate(noPkce)).toMatchObject({ ok: false, error: 'invalid_request', description: expect.stringContaining('code challenge required') });
    expect(validate(noPkce, true)).toMatchObject({ ok: true });
  });

  it('B3: plain or unknown methods are invalid_request', () => {
    expect(validate({ ...GOOD, code_challenge_method: 'plain' })).toMatchObject({ ok: false, error: 'invalid_request', description: expect.stringContaining('transform algorithm not supported') });
    expect(validate({ ...GOOD, code_challenge_method: 's256' })).toMatchObject({ ok: false, error: 'invalid_request' });
  });

  it('B4: a challenge without method, or a method without challenge, is invalid_request', () => {
    expect(validate({ ...GOOD, code_challenge_method: '' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(validate({ ...GOOD, code_challenge: '' }, true)).toMatchObject({ ok: false, error: 'invalid_request' });
  });

  it('B5: a malformed challenge is invalid_request', () => {
    expect(validate({ ...GOOD, code_challenge: CHALLENGE.slice(0, 42) })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(validate({ ...GOOD, code_challenge: `${CHALLENGE}=` })).toMatchObject({ ok: false, error: 'invalid_request' });
  });

  it('prompt: consent and none are read; none with anything else is invalid_request; unknown values are ignored', () => {
    expect(validate({ ...GOOD, prompt: 'consent' })).toMatchObject({ ok: true, request: { prompt: 'consent' } });
    expect(validate({ ...GOOD, prompt: 'none' })).toMatchObject({ ok: true, request: { prompt: 'none' } });
    expect(validate({ ...GOOD, prompt: 'none consent' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(validate({ ...GOOD, prompt: 'login' })).toMatchObject({ ok: true, request: { prompt: undefined } });
  });
});

describe('building the authorization response', () => {
  it('A13: a registered query is kept and the parameters appended', () => {
    expect(authorizationResponseUri('https://a.example/cb?tenant=7', [['code', 'x']])).toBe('https://a.example/cb?tenant=7&code=x');
    expect(authorizationResponseUri('https://a.example/cb', [['code', 'x']])).toBe('https://a.example/cb?code=x');
    expect(authorizationResponseUri('com.example.app:/cb', [['code', 'x']])).toBe('com.example.app:/cb?code=x');
  });

  it('A11: state survives a round trip through a URL parser byte for byte, and is left out when absent', () => {
    for (const state of ['a+b', '100%', 'with spaces', 'ünï😀code', 'x'.repeat(500), '&=?#']) {
      const uri = new URL(authorizationCodeUri('https://a.example/cb', 'c', state, 'https://gh.example'));
      expect(uri.searchParams.get('state')).toBe(state);
      expect(decodeURIComponent(/state=([^&]*)/.exec(uri.search)?.[1] ?? '')).toBe(state);
    }
    expect(new URL(authorizationCodeUri('https://a.example/cb', 'c', undefined, 'https://gh.example')).searchParams.has('state')).toBe(false);
  });

  it('H4: error responses carry iss; A8: error_description holds only the allowed characters', () => {
    const uri = new URL(authorizationErrorUri('https://a.example/cb', 'invalid_scope', 'bad "scope" \\ é', 's', 'https://gh.example'));
    expect(uri.searchParams.get('iss')).toBe('https://gh.example');
    expect(uri.searchParams.get('error')).toBe('invalid_scope');
    expect(uri.searchParams.get('error_description')).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
    expect(safeErrorDescription('a"b\\c\u00e9\n')).toBe('a?b?c??');
  });
});

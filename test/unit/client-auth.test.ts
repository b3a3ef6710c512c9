import { describe, expect, it } from 'vitest';
import { formUrlDecode, formUrlEncode, parseBasicCredentials, readClientCredentials } from '../../src/modules/oauth/client-auth.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('formUrlDecode (RFC 6749 Appendix B)', () => {
  it('turns + into a space and decodes %XX as UTF-8', () => {
    expect(formUrlDecode('a+b%2Bc%3Ad%25e%20f')).toBe('a b+c:d%e f');
    expect(formUrlDecode('%C3%BC')).toBe('ü');
  });
  it('refuses a malformed escape', () => {
    expect(formUrlDecode('%zz')).toBeUndefined();
    expect(formUrlDecode('%')).toBeUndefined();
  });
  it('round-trips with formUrlEncode for ids and secrets with :, +, %, space', () => {
    for (const value of ['a:b', 'a+b', '100%', 'with space', "!'()*~", 'ü€']) expect(formUrlDecode(formUrlEncode(value))).toBe(value);
  });
});

describe('parseBasicCredentials (RFC 6749 §2.3.1)', () => {
  it('form-urldecodes each half after base64', () => {
    expect(parseBasicCredentials(`Basic ${b64('my%3Aid:se%2Bcr+et%25')}`)).toEqual({ clientId: 'my:id', clientSecret: 'se+cr et%' });
  });
  it('splits at the first colon: the secret may contain colons', () => {
    expect(parseBasicCredentials(`Basic ${b64('123:a:b')}`)).toEqual({ clientId: '123', clientSecret: 'a:b' });
  });
  it('[A-Za-z0-9_-] secrets decode alike whether or not the client form-encoded them', () => {
    const secret = 'ghcs_AbC-123_xyz';
    expect(parseBasicCredentials(`Basic ${b64(`42:${secret}`)}`)).toEqual(parseBasicCredentials(`Basic ${b64(`42:${formUrlEncode(secret)}`)}`));
  });
  it('accepts any case of the scheme and extra spaces', () => {
    expect(parseBasicCredentials(`bAsIc   ${b64('1:2')}`)).toEqual({ clientId: '1', clientSecret: '2' });
  });
  it('refuses other schemes, missing colons, broken base64 and broken escapes', () => {
    expect(parseBasicCredentials(`Bearer ${b64('1:2')}`)).toBeUndefined();
    expect(parseBasicCredentials(`Basic ${b64('no-colon')}`)).toBeUndefined();
    expect(parseBasicCredentials('Basic !!!')).toBeUndefined();
    expect(parseBasicCredentials('Basic a')).toBeUndefined();
    expect(parseBasicCredentials(`Basic ${b64('1:%zz')}`)).toBeUndefined();
    expect(parseBasicCredentials('Basic')).toBeUndefined();
  });
});

describe('readClientCredentials (RFC 6749 §2.3)', () => {
  it('Basic → client_secret_basic', () => {
    expect(readClientCredentials({ authorization: `Basic ${b64('1:s')}`, clientId: undefined, clientSecret: undefined })).toEqual({
      ok: true,
      credentials: { method: 'client_secret_basic', clientId: '1', clientSecret: 's' },
    });
  });
  it('Basic with the same client_id in the body is fine', () => {
    expect(readClientCredentials({ authorization: `Basic ${b64('1:s')}`, clientId: '1', clientSecret: undefined })).toMatchObject({ ok: true });
  });
  it('D5: Basic and client_secret in the body at once is invalid_request', () => {
    expect(readClientCredentials({ authorization: `Basic ${b64('1:s')}`, clientId: '1', clientSecret: 's' })).toMatchObject({ ok: false, error: 'invalid_request' });
  });
  it('Basic with a different client_id in the body is invalid_request', () => {
    expect(readClientCredentials({ authorization: `Basic ${b64('1:s')}`, clientId: '2', clientSecret: undefined })).toMatchObject({ ok: false, error: 'invalid_request' });
  });
  it('D6: a malformed or non-Basic Authorization header is invalid_client via the header', () => {
    expect(readClientCredentials({ authorization: 'Bearer x', clientId: '1', clientSecret: undefined })).toMatchObject({ ok: false, error: 'invalid_client', viaHeader: true });
  });
  it('D4: client_id + client_secret in the body → client_secret_post', () => {
    expect(readClientCredentials({ authorization: undefined, clientId: '1', clientSecret: 's' })).toEqual({ ok: true, credentials: { method: 'client_secret_post', clientId: '1', clientSecret: 's' } });
  });
  it('client_id alone → none (a public client)', () => {
    expect(readClientCredentials({ authorization: undefined, clientId: '1', clientSecret: undefined })).toEqual({ ok: true, credentials: { method: 'none', clientId: '1' } });
  });
  it('HTTP Basic with an empty password → none, like client_id alone (DESIGN §1, Go x/oauth2)', () => {
    const authorization = `Basic ${Buffer.from('1:').toString('base64')}`;
    expect(readClientCredentials({ authorization, clientId: undefined, clientSecret: undefined })).toEqual({ ok: true, credentials: { method: 'none', clientId: '1' } });
  });
  it('D7: nothing at all is invalid_client; a secret without an id is invalid_request', () => {
    expect(readClientCredentials({ authorization: undefined, clientId: undefined, clientSecret: undefined })).toMatchObject({ ok: false, error: 'invalid_client', viaHeader: false });
    expect(readClientCredentials({ authorization: undefined, clientId: undefined, clientSecret: 's' })).toMatchObject({ ok: false, error: 'invalid_request' });
  });
});

describe('HTTP Basic with an empty password (DESIGN §1)', () => {
  it('counts as client_id alone, like an empty client_secret in the body', () => {
    expect(readClientCredentials({ authorization: `Basic ${b64('123:')}`, clientId: undefined, clientSecret: undefined })).toEqual({ ok: true, credentials: { method: 'none', clientId: '123' } });
  });
  it('a non-empty password stays client_secret_basic', () => {
    expect(readClientCredentials({ authorization: `Basic ${b64('123:s')}`, clientId: undefined, clientSecret: undefined })).toEqual({
      ok: true,
      credentials: { method: 'client_secret_basic', clientId: '123', clientSecret: 's' },
    });
  });
});

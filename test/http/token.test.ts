import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MINUTE, SECOND } from '../../src/core/clock.js';
import { hashSecret } from '../../src/core/secrets.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  basicAuth,
  codeExchangeFields,
  createClient,
  createPerson,
  getWithBearer,
  issueCode,
  postForm,
  type TestClient,
  type Tokens,
} from '../support/oauth-factory.js';

const TOKEN = '/api/oauth2/token';

describe('POST /api/oauth2/token: authorization_code grant', () => {
  let t: TestApp;
  let person: Person;
  let confidential: TestClient;
  let pub: TestClient;
  let other: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    person = await createPerson(t);
    confidential = await createClient(t, { owner: person });
    pub = await createClient(t, { owner: person, confidential: false, redirectUris: ['com.example.app:/callback'] });
    other = await createClient(t, { owner: person });
  });
  afterAll(async () => t.close());

  const exchange = (fields: Record<string, string | string[]>, headers: Record<string, string> = {}) => postForm(t, TOKEN, fields, { headers });

  it('SPEC §3 code issued → used: the exchange within 10 minutes issues access and refresh tokens (E1, E2)', async () => {
    const issued = await issueCode(t, { client: pub, person, scopes: ['identify', 'email'] });
    t.clock.advance(9 * MINUTE + 59 * SECOND);
    const res = await exchange(codeExchangeFields(pub, issued));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['pragma']).toBe('no-cache');
    const body = res.json() as Tokens;
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'identify email' });
    expect(body.access_token).toMatch(/^ghat_[A-Za-z0-9_-]{43}$/);
    expect(body.refresh_token).toMatch(/^ghrt_[A-Za-z0-9_-]{43}$/);
    expect((await getWithBearer(t, '/api/v1/users/@me', body.access_token)).statusCode).toBe(200);
  });

  it('C1: codes, access and refresh tokens carry 256 random bits and never repeat', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const issued = await issueCode(t, { client: pub, person });
      const body = (await exchange(codeExchangeFields(pub, issued))).json() as Tokens;
      for (const secret of [issued.code, body.access_token, body.refresh_token]) {
        expect(Buffer.from(secret.slice(5), 'base64url').length).toBe(32);
        expect(seen.has(secret)).toBe(false);
        seen.add(secret);
      }
    }
  });

  it('C8: codes and tokens are stored only as hashes: the database holds no usable credential', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const body = (await exchange(codeExchangeFields(pub, issued))).json() as Tokens;
    const db = t.services.db;
    const codes = await db.selectFrom('oauth_codes').select('code_hash').execute();
    const access = await db.selectFrom('oauth_access_tokens').select('token_hash').execute();
    const refresh = await db.selectFrom('oauth_refresh_tokens').select('token_hash').execute();
    const dump = JSON.stringify([codes, access, refresh]);
    for (const secret of [issued.code, body.access_token, body.refresh_token]) expect(dump).not.toContain(secret.slice(5));
    expect(codes.map((c) => c.code_hash)).toContain(hashSecret(issued.code));
    expect(access.map((c) => c.token_hash)).toContain(hashSecret(body.access_token));
  });

  it('SPEC §3 code issued → expired, C2: after 10 minutes the code answers invalid_grant "authorization code expired"', async () => {
    const issued = await issueCode(t, { client: pub, person });
    t.clock.advance(10 * MINUTE);
    const res = await exchange(codeExchangeFields(pub, issued));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code expired' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['pragma']).toBe('no-cache');
  });

  it('SPEC §3 code used → unusable, C3: a code works once; the second exchange answers invalid_grant and the first tokens stop working', async () => {
    const issued = await issueCode(t, { client: confidential, person });
    const first = await exchange(codeExchangeFields(confidential, issued));
    expect(first.statusCode).toBe(200);
    const tokens = first.json() as Tokens;
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);

    const second = await exchange(codeExchangeFields(confidential, issued));
    expect(second.statusCode).toBe(400);
    expect(second.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code already used' });
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
    const refreshed = await exchange({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: confidential.clientId, client_secret: confidential.clientSecret as string });
    expect(refreshed.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('SPEC §7: a used, expired or unknown code is not accepted (400 invalid_grant naming the cause, never the code)', async () => {
    const res = await exchange({ grant_type: 'authorization_code', code: 'ghac_nonexistentnonexistentnonexistent00000', redirect_uri: pub.redirectUri, client_id: pub.clientId, code_verifier: 'a'.repeat(43) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code is invalid' });
    expect(res.body).not.toContain('nonexistent');
  });

  it('C4: 20 parallel redemptions of one code → exactly one 200', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const results = await Promise.all(Array.from({ length: 20 }, () => exchange(codeExchangeFields(pub, issued))));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expect(r.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('C5: a replayed code with a bad code_verifier or bad client authentication does not end the grant', async () => {
    const issued = await issueCode(t, { client: confidential, person });
    const tokens = (await exchange(codeExchangeFields(confidential, issued))).json() as Tokens;
    const badVerifier = await exchange({ ...codeExchangeFields(confidential, issued), code_verifier: 'z'.repeat(43) });
    expect(badVerifier.json()).toMatchObject({ error: 'invalid_grant' });
    const badSecret = await exchange({ ...codeExchangeFields(confidential, issued), client_secret: 'ghcs_wrong' });
    expect(badSecret.statusCode).toBe(401);
    const otherClient = await exchange({ ...codeExchangeFields(other, issued) });
    expect(otherClient.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
  });

  it('C6: a code redeemed by another client answers invalid_grant and stays usable by its own client', async () => {
    const issued = await issueCode(t, { client: confidential, person });
    const stolen = await exchange({ ...codeExchangeFields(other, issued) });
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code was not issued to this client' });
    expect((await exchange(codeExchangeFields(confidential, issued))).statusCode).toBe(200);
  });

  it('C7: redirect_uri must be present and identical when the authorization request carried it', async () => {
    const issued = await issueCode(t, { client: confidential, person });
    const { redirect_uri: _omitted, ...without } = codeExchangeFields(confidential, issued);
    const missing = await exchange(without);
    expect(missing.json()).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri is required: the authorization request included it' });
    for (const variant of [`${confidential.redirectUri}/`, confidential.redirectUri.toUpperCase(), `${confidential.redirectUri}?x=1`]) {
      const res = await exchange({ ...codeExchangeFields(confidential, issued), redirect_uri: variant });
      expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' });
    }
    expect((await exchange(codeExchangeFields(confidential, issued))).statusCode).toBe(200);
  });

  it('C7: redirect_uri may be omitted when the authorization request did not carry it', async () => {
    const issued = await issueCode(t, { client: confidential, person, redirectUriSent: false });
    const { redirect_uri: _omitted, ...without } = codeExchangeFields(confidential, issued);
    expect((await exchange(without)).statusCode).toBe(200);
  });

  it('B7: a code with a challenge and no code_verifier answers invalid_grant', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const { code_verifier: _v, ...without } = codeExchangeFields(pub, issued);
    const res = await exchange(without);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'code_verifier is required: the authorization request included code_challenge' });
  });

  it('B7: a wrong code_verifier answers invalid_grant, and the code still works with the right one', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const wrong = await exchange({ ...codeExchangeFields(pub, issued), code_verifier: `${issued.verifier?.slice(0, -1)}Q` });
    expect(wrong.json()).toEqual({ error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' });
    const malformed = await exchange({ ...codeExchangeFields(pub, issued), code_verifier: 'short' });
    expect(malformed.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await exchange(codeExchangeFields(pub, issued))).statusCode).toBe(200);
  });

  it('B8: a code_verifier for a code issued without a challenge is rejected (no PKCE downgrade)', async () => {
    const issued = await issueCode(t, { client: confidential, person, pkce: false });
    const res = await exchange({ ...codeExchangeFields(confidential, issued), code_verifier: 'a'.repeat(43) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'code_verifier sent for a code issued without code_challenge' });
    expect((await exchange(codeExchangeFields(confidential, issued))).statusCode).toBe(200);
  });

  it('B9: a confidential app that sent a challenge must also pass the verifier, client secret or not', async () => {
    const issued = await issueCode(t, { client: confidential, person });
    const { code_verifier: _v, ...secretOnly } = codeExchangeFields(confidential, issued);
    expect((await exchange(secretOnly)).json()).toMatchObject({ error: 'invalid_grant' });
    expect((await exchange(codeExchangeFields(confidential, issued))).statusCode).toBe(200);
  });

  it('SPEC §5.3: a confidential app without PKCE authenticates with its client secret instead', async () => {
    const issued = await issueCode(t, { client: confidential, person, pkce: false });
    const res = await exchange(codeExchangeFields(confidential, issued));
    expect(res.statusCode).toBe(200);
  });

  it('the versioned alias /api/v1/oauth2/token answers identically', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const res = await postForm(t, '/api/v1/oauth2/token', codeExchangeFields(pub, issued));
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
  });

  it('E4: token_type is "Bearer", which clients compare case-insensitively', async () => {
    const issued = await issueCode(t, { client: pub, person });
    expect(((await exchange(codeExchangeFields(pub, issued))).json() as Tokens).token_type.toLowerCase()).toBe('bearer');
  });

  it('code is required', async () => {
    const res = await exchange({ grant_type: 'authorization_code', client_id: pub.clientId });
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'code is required' });
  });

  it('I2: error descriptions never echo a presented secret', async () => {
    const res = await exchange({ grant_type: 'authorization_code', code: 'ghac_secretvalue', client_id: confidential.clientId, client_secret: 'ghcs_verysecret' });
    expect(res.body).not.toContain('verysecret');
    expect(res.body).not.toContain('secretvalue');
  });
});

describe('POST /api/oauth2/token: request format and client authentication', () => {
  let t: TestApp;
  let person: Person;
  let confidential: TestClient;
  let pub: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    person = await createPerson(t);
    confidential = await createClient(t, { owner: person });
    pub = await createClient(t, { owner: person, confidential: false });
  });
  afterAll(async () => t.close());

  it('D1: only POST; other methods answer 405 with an OAuth error and Allow: POST', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
      for (const url of [TOKEN, '/api/v1/oauth2/token', '/api/oauth2/token/revoke']) {
        const res = await t.app.inject({ method, url });
        expect(res.statusCode).toBe(405);
        expect(res.headers['allow']).toBe('POST');
        expect(res.json()).toMatchObject({ error: 'invalid_request' });
        expect(res.headers['cache-control']).toBe('no-store');
      }
    }
  });

  it('D2: a JSON body answers 400 invalid_request (form-urlencoded only)', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const res = await t.app.inject({ method: 'POST', url: TOKEN, payload: codeExchangeFields(pub, issued) });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'the request body must be application/x-www-form-urlencoded' });
    expect(res.headers['cache-control']).toBe('no-store');
    // Nothing was consumed.
    expect((await postForm(t, TOKEN, codeExchangeFields(pub, issued))).statusCode).toBe(200);
  });

  it('D2: other media types and a missing body answer 400 invalid_request too', async () => {
    for (const [type, payload] of [
      ['text/plain', 'grant_type=authorization_code'],
      ['multipart/form-data; boundary=x', '--x--'],
      ['application/xml', '<a/>'],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: TOKEN, payload, headers: { 'content-type': type } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_request' });
    }
    const empty = await t.app.inject({ method: 'POST', url: TOKEN });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('a form with a charset parameter is accepted', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const res = await t.app.inject({
      method: 'POST',
      url: TOKEN,
      payload: new URLSearchParams(codeExchangeFields(pub, issued)).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
    });
    expect(res.statusCode).toBe(200);
  });

  it('a repeated parameter answers invalid_request; unknown parameters are ignored', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const repeated = await postForm(t, TOKEN, { ...codeExchangeFields(pub, issued), grant_type: ['authorization_code', 'authorization_code'] });
    expect(repeated.statusCode).toBe(400);
    expect(repeated.json()).toEqual({ error: 'invalid_request', error_description: 'grant_type must not be repeated' });
    const unknown = await postForm(t, TOKEN, { ...codeExchangeFields(pub, issued), extra: ['1', '2'], nonce: 'x' });
    expect(unknown.statusCode).toBe(200);
  });

  it('D3: client_secret_basic is form-urldecoded: secrets with ":", "+", "%" and spaces work', async () => {
    const secret = 'se:cr+et%20 with space/ü';
    const odd = await createClient(t, { owner: person, clientSecret: secret });
    const issued = await issueCode(t, { client: odd, person, pkce: false });
    const res = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: issued.code, redirect_uri: odd.redirectUri }, { headers: { authorization: basicAuth(odd.clientId, secret) } });
    expect(res.statusCode).toBe(200);
    // Not form-encoded, "+" would read as a space: the secret no longer matches.
    const raw = `Basic ${Buffer.from(`${odd.clientId}:${secret}`).toString('base64')}`;
    const issued2 = await issueCode(t, { client: odd, person, pkce: false });
    const bad = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: issued2.code, redirect_uri: odd.redirectUri }, { headers: { authorization: raw } });
    expect(bad.statusCode).toBe(401);
  });

  it('D3: the Basic scheme name is case-insensitive, and ordinary [A-Za-z0-9_-] secrets decode alike however they are encoded', async () => {
    const secret = confidential.clientSecret as string;
    for (const header of [basicAuth(confidential.clientId, secret), `basic ${Buffer.from(`${confidential.clientId}:${secret}`).toString('base64')}`]) {
      const issued = await issueCode(t, { client: confidential, person, pkce: false });
      const res = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: issued.code, redirect_uri: confidential.redirectUri }, { headers: { authorization: header } });
      expect(res.statusCode).toBe(200);
    }
  });

  it('D4: client_secret_post is accepted', async () => {
    const issued = await issueCode(t, { client: confidential, person, pkce: false });
    const res = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: issued.code, redirect_uri: confidential.redirectUri, client_id: confidential.clientId, client_secret: confidential.clientSecret as string });
    expect(res.statusCode).toBe(200);
  });

  it('D5: HTTP Basic and client_secret in the body at once answer 400 invalid_request', async () => {
    const issued = await issueCode(t, { client: confidential, person, pkce: false });
    const res = await postForm(
      t,
      TOKEN,
      { grant_type: 'authorization_code', code: issued.code, redirect_uri: confidential.redirectUri, client_id: confidential.clientId, client_secret: confidential.clientSecret as string },
      { headers: { authorization: basicAuth(confidential.clientId, confidential.clientSecret as string) } },
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('D6: failed authentication through the Authorization header answers 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const issued = await issueCode(t, { client: confidential, person, pkce: false });
    const res = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: issued.code, redirect_uri: confidential.redirectUri }, { headers: { authorization: basicAuth(confidential.clientId, 'ghcs_wrong') } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm="/);
    expect(res.headers['cache-control']).toBe('no-store');
    const malformed = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: issued.code }, { headers: { authorization: 'Basic !!!' } });
    expect(malformed.statusCode).toBe(401);
    expect(malformed.headers['www-authenticate']).toMatch(/^Basic /);
  });

  it('D6: failed authentication in the body answers 401 invalid_client', async () => {
    const issued = await issueCode(t, { client: confidential, person, pkce: false });
    const res = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: issued.code, redirect_uri: confidential.redirectUri, client_id: confidential.clientId, client_secret: 'ghcs_wrong' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('D7: a confidential client that sends no secret answers invalid_client; a request without client_id too', async () => {
    const issued = await issueCode(t, { client: confidential, person });
    const res = await postForm(t, TOKEN, { ...codeExchangeFields(confidential, issued), client_secret: '' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'invalid_client', error_description: 'this client is confidential: authenticate with its client secret' });
    const { client_id: _c, client_secret: _s, ...anonymous } = codeExchangeFields(confidential, issued);
    const none = await postForm(t, TOKEN, anonymous);
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('an unknown or malformed client_id answers invalid_client', async () => {
    for (const clientId of ['123456789012345678', 'not-a-snowflake', "1' or '1'='1", '99999999999999999999999']) {
      const res = await postForm(t, TOKEN, { grant_type: 'authorization_code', code: 'ghac_x', client_id: clientId });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'invalid_client', error_description: 'unknown client_id' });
    }
  });

  it('a public app that presents a client secret answers invalid_client', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const res = await postForm(t, TOKEN, { ...codeExchangeFields(pub, issued), client_secret: 'ghcs_anything' });
    expect(res.statusCode).toBe(401);
  });

  it('D12: an empty client_secret counts as absent (simple-oauth2 and passport-oauth2 public clients)', async () => {
    const issued = await issueCode(t, { client: pub, person });
    const res = await postForm(t, TOKEN, { ...codeExchangeFields(pub, issued), client_secret: '' });
    expect(res.statusCode).toBe(200);
  });

  it('D8, D9: client secrets are stored as SHA-256 only', async () => {
    const row = await t.services.db.selectFrom('applications').select('client_secret_hash').where('id', '=', confidential.clientId).executeTakeFirstOrThrow();
    expect(row.client_secret_hash).toBe(hashSecret(confidential.clientSecret as string));
    expect(row.client_secret_hash).not.toContain(confidential.clientSecret as string);
  });

  it('D11, I3: unknown grant types and password, implicit answer unsupported_grant_type', async () => {
    // The device code grant (RFC 8628) is registered since issue #41: test/http/device-flow.test.ts.
    for (const grantType of ['password', 'implicit', 'urn:ietf:params:oauth:grant-type:saml2-bearer', 'token']) {
      const res = await postForm(t, TOKEN, { grant_type: grantType, client_id: confidential.clientId, client_secret: confidential.clientSecret as string, username: 'a', password: 'b' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'unsupported_grant_type' });
    }
    const missing = await postForm(t, TOKEN, { client_id: pub.clientId });
    expect(missing.json()).toEqual({ error: 'invalid_request', error_description: 'grant_type is required' });
  });

  it('E3: every error is JSON {error, error_description} with Content-Type application/json', async () => {
    const res = await postForm(t, TOKEN, { grant_type: 'authorization_code', client_id: pub.clientId, code: 'ghac_nope' });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.json() as object).sort()).toEqual(['error', 'error_description']);
  });

  it('a body larger than the limit answers an OAuth invalid_request', async () => {
    const res = await t.app.inject({ method: 'POST', url: TOKEN, payload: `grant_type=x&pad=${'a'.repeat(2 * 1024 * 1024)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('D10: throttling of failed client authentication', () => {
  let t: TestApp;
  let person: Person;
  let confidential: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    person = await createPerson(t);
    confidential = await createClient(t, { owner: person });
  });
  afterAll(async () => t.close());

  const attempt = (secret: string, address: string, client = confidential) =>
    postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: 'ghrt_x', client_id: client.clientId, client_secret: secret }, { address });

  it('20 failures from one address within 10 minutes: the next attempt, even a correct one, answers 429 with Retry-After until the window ends', async () => {
    const address = '192.0.2.10';
    for (let i = 0; i < 20; i++) expect((await attempt('ghcs_wrong', address)).statusCode).toBe(401);
    const blocked = await attempt(confidential.clientSecret as string, address);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ error: 'temporarily_unavailable' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.headers['cache-control']).toBe('no-store');
    // Another address is not affected.
    expect((await attempt(confidential.clientSecret as string, '192.0.2.11')).json()).toMatchObject({ error: 'invalid_grant' });
    t.clock.advance(10 * MINUTE);
    expect((await attempt(confidential.clientSecret as string, address)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('issue #21 §2: 50 wrong secrets for one client from 3 addresses never refuse the real client, which authenticates from its own address', async () => {
    const target = await createClient(t, { owner: person });
    const attackers = ['198.51.100.1', '198.51.100.2', '198.51.100.3'];
    // 17 or fewer per address: under each address's own limit, so each is answered 401.
    for (let i = 0; i < 50; i++) expect((await attempt('ghcs_wrong', attackers[i % 3] as string, target)).statusCode).toBe(401);
    // The right secret from another address is answered at once is answered at once (the grant, not the client, is what is wrong here).
    const real = await attempt(target.clientSecret as string, '203.0.113.1', target);
    expect(real.statusCode).toBe(400);
    expect(real.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('issue #21 §2: a public client probing HTTP Basic with an empty secret (Go x/oauth2) is accepted as client_id alone and never counted as a failure', async () => {
    const pub = await createClient(t, { owner: person, confidential: false });
    const address = '192.0.2.77';
    const basic = `Basic ${Buffer.from(`${pub.clientId}:`).toString('base64')}`;
    for (let i = 0; i < 30; i++) {
      const res = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: 'ghrt_x' }, { address, headers: { authorization: basic } });
      // Authenticated as the public client: what fails is the made-up refresh token.
      expect(res.json()).toMatchObject({ error: 'invalid_grant' });
    }
    // A confidential app that forgets its secret is refused, but guessed nothing and is not counted either.
    for (let i = 0; i < 30; i++) {
      const res = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: 'ghrt_x', client_id: confidential.clientId }, { address });
      expect(res.statusCode).toBe(401);
    }
    expect((await attempt(confidential.clientSecret as string, address)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('a public client presenting its client_id alone guesses nothing: its grants read no failure count, even from an address that is refused', async () => {
    const pub = await createClient(t, { owner: person, confidential: false });
    const address = '192.0.2.90';
    for (let i = 0; i < 20; i++) expect((await attempt('ghcs_wrong', address)).statusCode).toBe(401);
    expect((await attempt(confidential.clientSecret as string, address)).statusCode).toBe(429);
    const buckets = t.services.buckets;
    const peek = vi.spyOn(buckets, 'peek');
    try {
      const res = await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: 'ghrt_x', client_id: pub.clientId }, { address });
      // Authenticated as the public client: what fails is the made-up refresh token.
      expect(res.json()).toMatchObject({ error: 'invalid_grant' });
      expect(peek).not.toHaveBeenCalled();
      // A secret presented for the public client is a guess: refused like any other from this address.
      expect((await postForm(t, TOKEN, { grant_type: 'refresh_token', refresh_token: 'ghrt_x', client_id: pub.clientId, client_secret: 'ghcs_guess' }, { address })).statusCode).toBe(429);
      expect(peek).toHaveBeenCalledTimes(1);
    } finally {
      peek.mockRestore();
    }
  });

  it('successful authentications are not counted', async () => {
    const address = '192.0.2.50';
    for (let i = 0; i < 30; i++) expect((await attempt(confidential.clientSecret as string, address)).statusCode).toBe(400);
  });
});

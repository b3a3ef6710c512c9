import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/core/clock.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { basicAuth, createClient, createPerson, getWithBearer, obtainTokens, postForm, type TestClient } from '../support/oauth-factory.js';

const REVOKE = '/api/oauth2/token/revoke';

describe('POST /api/oauth2/token/revoke (RFC 7009)', () => {
  let t: TestApp;
  let person: Person;
  let confidential: TestClient;
  let pub: TestClient;
  let other: TestClient;
  let otherPublic: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    person = await createPerson(t);
    confidential = await createClient(t, { owner: person });
    pub = await createClient(t, { owner: person, confidential: false });
    other = await createClient(t, { owner: person });
    otherPublic = await createClient(t, { owner: person, confidential: false });
  });
  afterAll(async () => t.close());

  const works = async (accessToken: string) => (await getWithBearer(t, '/api/v1/users/@me', accessToken)).statusCode === 200;
  const refreshWorks = async (client: TestClient, refreshToken: string) =>
    (
      await postForm(t, '/api/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: client.clientId,
        ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
      })
    ).statusCode === 200;
  const expectEmpty200 = (res: Awaited<ReturnType<typeof postForm>>) => {
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe('{}');
  };

  it('SPEC §3 authorization → ended, G5, G7: revoking the access token ends the whole authorization at once', async () => {
    const tokens = await obtainTokens(t, pub, person);
    expect(await works(tokens.access_token)).toBe(true);
    expectEmpty200(await postForm(t, REVOKE, { token: tokens.access_token, client_id: pub.clientId }));
    expect(await works(tokens.access_token)).toBe(false);
    expect(await refreshWorks(pub, tokens.refresh_token)).toBe(false);
  });

  it('G8, G5: revoking the refresh token ends the grant: its access tokens stop working too', async () => {
    const tokens = await obtainTokens(t, confidential, person);
    expectEmpty200(await postForm(t, REVOKE, { token: tokens.refresh_token }, { headers: { authorization: basicAuth(confidential.clientId, confidential.clientSecret as string) } }));
    expect(await works(tokens.access_token)).toBe(false);
    expect(await refreshWorks(confidential, tokens.refresh_token)).toBe(false);
  });

  it('revocation also forgets the remembered consent of that person for that app', async () => {
    const tokens = await obtainTokens(t, pub, person);
    await t.services.db.insertInto('oauth_consents').values({ user_id: person.id, application_id: pub.clientId, scopes: 'identify', updated_at: t.clock.now() }).execute();
    expectEmpty200(await postForm(t, REVOKE, { token: tokens.refresh_token, client_id: pub.clientId }));
    const consent = await t.services.db.selectFrom('oauth_consents').selectAll().where('user_id', '=', person.id).where('application_id', '=', pub.clientId).executeTakeFirst();
    expect(consent).toBeUndefined();
  });

  it('G1: a wrong or unknown token_type_hint is ignored and the search extends to every token type', async () => {
    for (const hint of ['access_token', 'refresh_token', 'id_token', 'nonsense']) {
      const tokens = await obtainTokens(t, pub, person);
      expectEmpty200(await postForm(t, REVOKE, { token: tokens.refresh_token, token_type_hint: hint === 'refresh_token' ? 'access_token' : hint, client_id: pub.clientId }));
      expect(await works(tokens.access_token)).toBe(false);
    }
  });

  it('G2: a public client revokes with client_id alone; a confidential one must authenticate (401 invalid_client otherwise)', async () => {
    const tokens = await obtainTokens(t, confidential, person);
    const unauthenticated = await postForm(t, REVOKE, { token: tokens.access_token, client_id: confidential.clientId });
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.json()).toMatchObject({ error: 'invalid_client' });
    const wrong = await postForm(t, REVOKE, { token: tokens.access_token, client_id: confidential.clientId, client_secret: 'ghcs_wrong' });
    expect(wrong.statusCode).toBe(401);
    expect(await works(tokens.access_token)).toBe(true);
    expectEmpty200(await postForm(t, REVOKE, { token: tokens.access_token, client_id: confidential.clientId, client_secret: confidential.clientSecret as string }));
    expect(await works(tokens.access_token)).toBe(false);
  });

  it('G3: unknown, expired and already revoked tokens all answer 200 {}', async () => {
    expectEmpty200(await postForm(t, REVOKE, { token: 'ghat_unknownunknownunknownunknownunknown0000', client_id: pub.clientId }));
    expectEmpty200(await postForm(t, REVOKE, { token: 'not even a token', client_id: pub.clientId }));
    const tokens = await obtainTokens(t, pub, person);
    t.clock.advance(HOUR + 1);
    expectEmpty200(await postForm(t, REVOKE, { token: tokens.access_token, client_id: pub.clientId }));
    expectEmpty200(await postForm(t, REVOKE, { token: tokens.access_token, client_id: pub.clientId }));
    expect(await refreshWorks(pub, tokens.refresh_token)).toBe(false);
  });

  it('G4: a token of another client is not revoked: a public caller gets a silent 200 {}', async () => {
    const tokens = await obtainTokens(t, pub, person);
    expectEmpty200(await postForm(t, REVOKE, { token: tokens.access_token, client_id: otherPublic.clientId }));
    expect(await works(tokens.access_token)).toBe(true);
  });

  it('G4: a token of another client is not revoked: an authenticated confidential caller is told (400 invalid_request)', async () => {
    const tokens = await obtainTokens(t, confidential, person);
    const res = await postForm(t, REVOKE, { token: tokens.access_token, client_id: other.clientId, client_secret: other.clientSecret as string });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'the token was not issued to this client' });
    expect(await works(tokens.access_token)).toBe(true);
  });

  it('G6: a missing token answers 400 invalid_request', async () => {
    const res = await postForm(t, REVOKE, { client_id: pub.clientId });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'token is required' });
    const empty = await postForm(t, REVOKE, { client_id: pub.clientId, token: '' });
    expect(empty.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('the request must be form-urlencoded and parameters must not repeat', async () => {
    const json = await t.app.inject({ method: 'POST', url: REVOKE, payload: { token: 'x', client_id: pub.clientId } });
    expect(json.statusCode).toBe(400);
    expect(json.json()).toMatchObject({ error: 'invalid_request' });
    const repeated = await postForm(t, REVOKE, { token: ['a', 'b'], client_id: pub.clientId });
    expect(repeated.json()).toEqual({ error: 'invalid_request', error_description: 'token must not be repeated' });
  });

  it('the versioned alias /api/v1/oauth2/token/revoke answers identically', async () => {
    const tokens = await obtainTokens(t, pub, person);
    expectEmpty200(await postForm(t, '/api/v1/oauth2/token/revoke', { token: tokens.access_token, client_id: pub.clientId }));
    expect(await works(tokens.access_token)).toBe(false);
  });

  it('revoking one authorization leaves the person’s other authorizations of the same app working', async () => {
    const a = await obtainTokens(t, pub, person);
    const b = await obtainTokens(t, pub, person);
    expectEmpty200(await postForm(t, REVOKE, { token: a.access_token, client_id: pub.clientId }));
    expect(await works(a.access_token)).toBe(false);
    expect(await works(b.access_token)).toBe(true);
  });
});

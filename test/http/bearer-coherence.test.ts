import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateProfile } from '../../src/modules/accounts/accounts.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { statementsDuring, TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/database.js';
import { createClient, createPerson, getWithBearer, obtainTokens, postForm, type TestClient, type Tokens } from '../support/oauth-factory.js';
import { resetClientSecret } from '../../src/modules/applications/applications.service.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf, personActingOf } from '../support/acting.js';

/**
 * Issue #26 §1: on PostgreSQL with Redis each instance answers bearer checks and the token
 * endpoint's client lookup from memory, and a revocation, a change to the person or a reset
 * secret, made on any instance, reaches every instance before it is answered (storage/coherence.ts). Two instances in this process, each with its own pool and
 * Redis connections, on one database.
 */
const canRun = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!canRun) console.log('bearer-coherence: skipped: needs TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (Redis)');

describe.skipIf(!canRun)('bearer checks from memory on several instances', () => {
  let a: TestApp;
  let b: TestApp;
  let person: Person;
  let client: TestClient;
  beforeAll(async () => {
    const env = { REDIS_URL: TEST_REDIS_URL as string };
    a = await createTestApp({ env });
    b = await createTestApp({ env, sameDatabaseAs: a, clock: a.clock });
    person = await createPerson(a);
    client = await createClient(a, { owner: person, confidential: false });
    await Promise.all([untilLive(a), untilLive(b)]);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  async function untilLive(t: TestApp): Promise<void> {
    for (let i = 0; i < 200 && !t.services.coherence?.live(); i++) await new Promise((r) => setTimeout(r, 25));
    expect(t.services.coherence?.live()).toBe(true);
  }

  const statementsOn = <T>(t: TestApp, run: () => Promise<T>) => statementsDuring(t.database.handle, run);

  it('GET /users/@me a second time on an instance is answered from memory: no statement', async () => {
    const tokens = await obtainTokens(a, client, person, ['identify']);
    expect((await getWithBearer(b, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    const { result, statements } = await statementsOn(b, () => getWithBearer(b, '/api/v1/users/@me', tokens.access_token));
    expect(result.statusCode).toBe(200);
    expect(result.json()).toMatchObject({ id: person.id, username: person.username });
    expect(statements).toEqual([]);
  });

  it('a token revoked on one instance is refused by the other from the moment the revocation is answered', async () => {
    const tokens = await obtainTokens(a, client, person, ['identify']);
    for (const t of [a, b]) expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    const revoked = await postForm(a, '/api/oauth2/token/revoke', { token: tokens.access_token, client_id: client.clientId });
    expect(revoked.statusCode).toBe(200);
    for (const t of [b, a]) expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
  });

  it('a revocation by an instance that has made no bearer check yet still reaches the others', async () => {
    const fresh = await createTestApp({ env: { REDIS_URL: TEST_REDIS_URL as string }, sameDatabaseAs: a, clock: a.clock });
    try {
      await untilLive(fresh);
      const tokens = await obtainTokens(a, client, person, ['identify']);
      expect((await getWithBearer(b, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
      // The new instance has made no bearer check: its first request is the revocation.
      expect((await postForm(fresh, '/api/oauth2/token/revoke', { token: tokens.access_token, client_id: client.clientId })).statusCode).toBe(200);
      expect((await getWithBearer(b, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
    } finally {
      await fresh.close();
    }
  });

  it('revoking the refresh token on the other instance ends the remembered access token too', async () => {
    const tokens = await obtainTokens(a, client, person, ['identify']);
    expect((await getWithBearer(a, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    expect((await postForm(b, '/api/oauth2/token/revoke', { token: tokens.refresh_token, client_id: client.clientId })).statusCode).toBe(200);
    expect((await getWithBearer(a, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
  });

  it("a person's new name is what every instance answers once the change is answered", async () => {
    const tokens = await obtainTokens(a, client, person, ['identify']);
    expect((await getWithBearer(b, '/api/v1/users/@me', tokens.access_token)).json()).toMatchObject({ global_name: person.name });
    await updateProfile(a.services, personActingOf(person.id), { name: 'Renamed Everywhere' });
    expect((await getWithBearer(b, '/api/v1/users/@me', tokens.access_token)).json()).toMatchObject({ global_name: 'Renamed Everywhere' });
  });

  it('a refresh grant on an instance that remembers its client is two statements: the token, and the rotation', async () => {
    const tokens = await obtainTokens(a, client, person, ['identify']);
    const refresh = (token: string) => postForm(b, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: token, client_id: client.clientId });
    const first = await refresh(tokens.refresh_token);
    expect(first.statusCode).toBe(200);
    const { result, statements } = await statementsOn(b, () => refresh((first.json() as Tokens).refresh_token));
    expect(result.statusCode).toBe(200);
    expect(statements.map((s) => s.operation)).toEqual(['select', 'raw']);
  });

  it('a client secret reset on one instance is refused by the other from the moment the reset is answered', async () => {
    const confidential = await createClient(a, { owner: person, confidential: true });
    const tokens = await obtainTokens(a, confidential, person, ['identify']);
    const refresh = (t: TestApp, token: string, secret: string) =>
      postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: token, client_id: confidential.clientId, client_secret: secret });
    const first = await refresh(b, tokens.refresh_token, confidential.clientSecret as string);
    expect(first.statusCode).toBe(200);
    const newSecret = await resetClientSecret(a.services, actingOf(OPERATOR), confidential.clientId);
    expect((await refresh(b, (first.json() as Tokens).refresh_token, confidential.clientSecret as string)).statusCode).toBe(401);
    expect((await refresh(b, (first.json() as Tokens).refresh_token, newSecret)).statusCode).toBe(200);
  });

  it('a remembered token still expires on time', async () => {
    const tokens = await obtainTokens(a, client, person, ['identify']);
    expect((await getWithBearer(b, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    a.clock.advance(tokens.expires_in * 1000 + 1);
    expect((await getWithBearer(b, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { statementsDuring, testDialect } from '../support/database.js';
import { basicAuth, codeExchangeFields, createClient, createPerson, getWithBearer, issueCode, obtainTokens, postForm, type TestClient, type Tokens } from '../support/oauth-factory.js';
import type { Person } from '../../src/modules/directory/people.js';
import { findCodeInTurn, findRefreshTokenInTurn } from '../../src/modules/oauth/tokens.repository.js';
import { hashSecret } from '../../src/core/secrets.js';
import { addResourceServer } from '../../src/modules/resource-servers/resource-servers.service.js';
import { cliActing } from '../../src/core/acting.js';

/**
 * Issue #26 §1 on PostgreSQL (without Redis: nothing remembered, test/http/bearer-coherence.test.ts
 * has the instance's memory): the statements of a refresh rotation, counted. The client and the
 * presented token are read (the rotation's successors derive from the stored rotation key), then
 * one statement rotates and stores both successors; the token and code reads of one event-loop
 * turn share one select; a bearer check is one select, and GET /users/@me reads the person in
 * that same one.
 */
const onPostgres = testDialect === 'postgres';
if (!onPostgres) console.log('token-round-trips: skipped on SQLite (no network between the server and its database)');

describe.skipIf(!onPostgres)('token endpoint and bearer round trips on PostgreSQL', () => {
  let t: TestApp;
  let person: Person;
  let client: TestClient;
  beforeAll(async () => {
    t = await createTestApp();
    person = await createPerson(t);
    client = await createClient(t, { owner: person, confidential: false });
  });
  afterAll(async () => t.close());

  const statementsOf = <T>(run: () => Promise<T>) => statementsDuring(t.database.handle, run);

  it('a refresh rotation is three statements: the client, the token, and one that rotates and stores both successors', async () => {
    const first = await obtainTokens(t, client, person, ['identify']);
    const { result, statements } = await statementsOf(() => postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.clientId }));
    expect(result.statusCode).toBe(200);
    expect(statements.map((s) => s.operation)).toEqual(['select', 'select', 'raw']);
    const next = result.json() as Tokens;
    expect((await getWithBearer(t, '/api/v1/users/@me', next.access_token)).statusCode).toBe(200);
    // The successor rotates in turn; the spent token is refused as reuse.
    expect((await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: next.refresh_token, client_id: client.clientId })).statusCode).toBe(200);
  });

  it('a code exchange is three statements: the client, the code with its grant, and one that consumes the code and stores both tokens', async () => {
    const issued = await issueCode(t, { client, person, scopes: ['identify'] });
    const { result, statements } = await statementsOf(() => postForm(t, '/api/oauth2/token', codeExchangeFields(client, issued)));
    expect(result.statusCode).toBe(200);
    expect(statements.map((s) => s.operation)).toEqual(['select', 'select', 'raw']);
    const tokens = result.json() as Tokens;
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    // Single use (SPEC §3): the same code again is a replay.
    expect((await postForm(t, '/api/oauth2/token', codeExchangeFields(client, issued))).statusCode).toBe(400);
  });

  it("client credentials write in one statement: the app's grant for the resource server, made on first use, and the token under it", async () => {
    const api = await createClient(t, { owner: person, confidential: true });
    await addResourceServer(t.services, cliActing(t.clock), api.clientId, { identifier: 'https://round-trips.example/', scopes: ['read'], scopeDescriptions: [] });
    const grant = () => postForm(t, '/api/oauth2/token', { grant_type: 'client_credentials', resource: 'https://round-trips.example/' }, { headers: { authorization: basicAuth(api.clientId, api.clientSecret as string) } });
    for (const call of ['first', 'second']) {
      const { result, statements } = await statementsOf(grant);
      expect(result.statusCode, `${call}: ${result.body}`).toBe(200);
      expect(statements.filter((s) => s.operation !== 'select').map((s) => s.operation), call).toEqual(['raw']);
    }
    // Both tokens hang under one grant; it was made by the first call.
    const grants = await t.services.db.selectFrom('oauth_grants').select('id').where('application_id', '=', api.clientId).where('app_only', '=', 1).execute();
    expect(grants).toHaveLength(1);
    const tokens = await t.services.db.selectFrom('oauth_access_tokens').select(['grant_id', 'app_only']).where('application_id', '=', api.clientId).execute();
    expect(tokens.map((row) => [String(row.grant_id), Number(row.app_only)])).toEqual([
      [String(grants[0]?.id), 1],
      [String(grants[0]?.id), 1],
    ]);
  });

  it('GET /users/@me is one statement: the token and its person read together', async () => {
    const tokens = await obtainTokens(t, client, person, ['identify', 'email']);
    const { result, statements } = await statementsOf(() => getWithBearer(t, '/api/v1/users/@me', tokens.access_token));
    expect(result.statusCode).toBe(200);
    expect(result.json()).toMatchObject({ id: person.id, username: person.username });
    expect(statements.map((s) => s.operation)).toEqual(['select']);
    // Still the token's scopes that decide: without identify the same route refuses.
    const servers = await obtainTokens(t, client, person, ['servers']);
    expect((await getWithBearer(t, '/api/v1/users/@me', servers.access_token)).statusCode).toBe(403);
  });

  it("the refresh-token lookups of one event-loop turn are one select, each caller answered with its own row", async () => {
    const tokens = await Promise.all([1, 2, 3].map(() => obtainTokens(t, client, person, ['identify'])));
    const hashes = tokens.map((x) => hashSecret(x.refresh_token));
    const { result, statements } = await statementsOf(() => Promise.all([...hashes, hashes[0] as string, 'no-such-hash'].map((h) => findRefreshTokenInTurn(t.services.db, h))));
    expect(statements.map((s) => s.operation)).toEqual(['select']);
    expect(result.map((row) => row?.grantId)).toEqual([...tokens.map((x) => x.grantId), tokens[0]?.grantId, undefined]);
  });

  it('the code lookups of one event-loop turn are one select, each code read with its own grant', async () => {
    const issued = await Promise.all([1, 2].map(() => issueCode(t, { client, person, scopes: ['identify'] })));
    const { result, statements } = await statementsOf(() => Promise.all([...issued.map((x) => hashSecret(x.code)), 'no-such-hash'].map((h) => findCodeInTurn(t.services.db, h))));
    expect(statements.map((s) => s.operation)).toEqual(['select']);
    expect(result.map((row) => row?.grant?.id)).toEqual([...issued.map((x) => x.grantId), undefined]);
  });

  it('two concurrent refreshes of one token: one rotation is written, the other answers as its retry', async () => {
    const first = await obtainTokens(t, client, person, ['identify']);
    const form = { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.clientId };
    const [a, b] = await Promise.all([postForm(t, '/api/oauth2/token', form), postForm(t, '/api/oauth2/token', form)]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect((a.json() as Tokens).refresh_token).toBe((b.json() as Tokens).refresh_token);
    const grantTokens = await t.database.handle.db.selectFrom('oauth_refresh_tokens').select('token_hash').where('grant_id', '=', first.grantId).execute();
    expect(grantTokens).toHaveLength(2);
  });
});

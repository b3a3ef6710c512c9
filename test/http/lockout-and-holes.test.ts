import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, MINUTE } from '../../src/core/clock.js';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../support/app.js';
import { parseFlags } from '../../src/cli/command.js';
import { CONTROL_CHARACTER_ERROR } from '../../src/core/text.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { csrfFrom, signedIn as signedInPerson } from '../support/directory-fixtures.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';
import { answerConsent, authorizePath, createApp, freshPkce, location, requestFor, signedIn } from './authorize.fixtures.js';
import { call, createTestWebhook } from './webhook-url.fixtures.js';
import { personActingOf } from '../support/acting.js';

/** Issue #21 §2 and §5: nobody locks another out; the smaller holes. */

describe('issue #21 §2: authorization codes are limited, indexed and purged', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('one person gets at most 30 codes per app per 10 minutes; the 31st request is redirected with temporarily_unavailable, and another app is not affected', async () => {
    const { agent, person } = await signedIn(t);
    const { app } = await createApp(t, person, { redirectUris: ['https://good.example.com/cb'] });
    const { app: other } = await createApp(t, person, { redirectUris: ['https://other.example.com/cb'] });
    expect(location(await answerConsent(agent, authorizePath(requestFor(app)), 'authorize')).searchParams.get('code')).toBeTruthy();
    // Consent is remembered (https redirect): each further request is a code at once.
    for (let i = 1; i < 30; i += 1) expect(location(await agent.get(authorizePath(requestFor(app)))).searchParams.get('code')).toBeTruthy();
    const refused = location(await agent.get(authorizePath(requestFor(app))));
    expect(refused.searchParams.get('error')).toBe('temporarily_unavailable');
    expect(refused.searchParams.get('code')).toBeNull();
    expect(refused.searchParams.get('state')).toBe('xyz-state');
    expect(location(await answerConsent(agent, authorizePath(requestFor(other)), 'authorize')).searchParams.get('code')).toBeTruthy();
    t.clock.advance(10 * MINUTE);
    expect(location(await agent.get(authorizePath(requestFor(app)))).searchParams.get('code')).toBeTruthy();
  });

  it('codes that expired more than a day ago are purged when codes are next issued', async () => {
    const { agent, person } = await signedIn(t);
    const { app } = await createApp(t, person, { redirectUris: ['https://purge.example.com/cb'] });
    expect(location(await answerConsent(agent, authorizePath(requestFor(app)), 'authorize')).searchParams.get('code')).toBeTruthy();
    const count = async () => Number((await t.services.db.selectFrom('oauth_codes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    expect(before).toBeGreaterThan(1);
    t.clock.advance(DAY + 21 * MINUTE);
    expect(location(await agent.get(authorizePath(requestFor(app)))).searchParams.get('code')).toBeTruthy();
    expect(await count()).toBe(1);
  });

  it('oauth_codes has an index on grant_id (revocation) and on expires_at (the purge)', async () => {
    const names =
      t.services.dialect === 'postgres'
        ? (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'oauth_codes' and schemaname = current_schema()`.execute(t.services.db)).rows
        : (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'oauth_codes'`.execute(t.services.db)).rows;
    expect(names.map((r) => r.name)).toEqual(expect.arrayContaining(['oauth_codes_grant_idx', 'oauth_codes_expires_idx']));
  });
});

describe('issue #21 §5: PKCE challenge reuse is checked per person and app', () => {
  it('a challenge one person used does not stop another person signing in to the same app with it', async () => {
    const t = await createTestApp();
    try {
      const alice = await signedIn(t);
      const bob = await signedIn(t);
      const { app } = await createApp(t, alice.person, { redirectUris: ['https://good.example.com/cb'] });
      const challenge = freshPkce().challenge;
      expect(location(await answerConsent(alice.agent, authorizePath(requestFor(app, { code_challenge: challenge })), 'authorize')).searchParams.get('code')).toBeTruthy();
      const forBob = location(await answerConsent(bob.agent, authorizePath(requestFor(app, { code_challenge: challenge })), 'authorize'));
      expect(forBob.searchParams.get('error')).toBeNull();
      expect(forBob.searchParams.get('code')).toBeTruthy();
    } finally {
      await t.close();
    }
  });
});

describe('issue #21 §5: remembered consent of public clients (RFC 8252 §8.6)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('a public client redirecting to a loopback port is shown the consent screen every time, whatever port', async () => {
    const { agent, person } = await signedIn(t);
    const { app } = await createApp(t, person, { name: 'Native', redirectUris: ['http://127.0.0.1/cb'] });
    const first = location(await answerConsent(agent, authorizePath(requestFor(app, { redirect_uri: 'http://127.0.0.1:49152/cb' })), 'authorize'));
    expect(first.searchParams.get('code')).toBeTruthy();
    for (const port of [49152, 50000]) {
      const again = await agent.get(authorizePath(requestFor(app, { redirect_uri: `http://127.0.0.1:${port}/cb` })));
      expect(again.statusCode).toBe(200);
      expect(again.body).toContain('name="decision" value="authorize"');
    }
    // prompt=none cannot be answered without the screen.
    const none = location(await agent.get(authorizePath(requestFor(app, { redirect_uri: 'http://127.0.0.1:50001/cb', prompt: 'none' }))));
    expect(none.searchParams.get('error')).toBe('consent_required');
  });

  it('a public client with a private-use scheme is asked every time too; one with an https redirect URI skips the screen once consented', async () => {
    const { agent, person } = await signedIn(t);
    const { app: scheme } = await createApp(t, person, { name: 'Scheme', redirectUris: ['com.example.app:/callback'] });
    expect(location(await answerConsent(agent, authorizePath(requestFor(scheme)), 'authorize')).protocol).toBe('com.example.app:');
    expect((await agent.get(authorizePath(requestFor(scheme)))).statusCode).toBe(200);
    const { app: web } = await createApp(t, person, { name: 'Web', redirectUris: ['https://spa.example.com/cb'] });
    expect(location(await answerConsent(agent, authorizePath(requestFor(web)), 'authorize')).searchParams.get('code')).toBeTruthy();
    expect(location(await agent.get(authorizePath(requestFor(web)))).searchParams.get('code')).toBeTruthy();
  });
});

describe('issue #21 §5: one text rule refuses control characters in every field, on every database', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => t.close());

  it('a NUL in webhook message content, username or an embed is a 50035 naming the field, and nothing is stored', async () => {
    const hook = await createTestWebhook(t);
    const res = await call(t, 'POST', `${hook.path}?wait=true`, { content: 'before\u0000after', embeds: [{ title: 'ok', fields: [{ name: 'bell\u0007', value: 'v' }] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        content: { _errors: [CONTROL_CHARACTER_ERROR] },
        embeds: { '0': { fields: { '0': { name: { _errors: [CONTROL_CHARACTER_ERROR] } } } } },
      },
    });
    const stored = await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', hook.channel.id).execute();
    expect(stored).toEqual([]);
    // Tabs and line breaks are text.
    expect((await call(t, 'POST', `${hook.path}?wait=true`, { content: 'line one\r\n\tline two' })).statusCode).toBe(200);
  });

  it('a NUL in a server, channel or role name, or in the sign-in username, is a 400 page, never a 500', async () => {
    const { agent, person } = await signedInPerson(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Clean' });
    const csrf = await csrfFrom(agent, `/servers/${server.id}/settings/roles`);
    for (const [path, fields] of [
      ['/servers', { name: 'Evil\u0000server' }],
      [`/servers/${server.id}/channels`, { name: 'evil\u0000channel' }],
      [`/servers/${server.id}/roles`, { name: 'Evil\u0000role' }],
    ] as const) {
      const res = await agent.postRaw(path, { ...fields, _csrf: csrf });
      expect({ path, status: res.statusCode }).toEqual({ path, status: 400 });
    }
    expect((await t.services.db.selectFrom('servers').select('id').where('owner_id', '=', person.id).execute()).length).toBe(1);

    const visitor = new PageAgent(t.app);
    const page = await visitor.get('/login');
    const res = await visitor.postRaw('/login', { username: 'nobody\u0000', password: 'whatever password', _csrf: csrfTokenIn(page.body) ?? '' });
    expect(res.statusCode).toBe(400);
  });

  it('the OAuth endpoints answer invalid_request for a control character; the CLI refuses one in any flag', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/oauth2/token/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'token=ghat_x%00y&client_id=1' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
    expect(() => parseFlags(['--name', 'Evil\u0000'], { name: { description: 'a name' } })).toThrow(/--name must not contain control characters/);
  });

  it('a method the token endpoint lacks still answers a control character in the OAuth form (RFC 6749 §5.2)', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: '/api/oauth2/token/revoke?Authorization=%00' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'Authorization must not contain control characters' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '../../src/core/clock.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { basicAuth, codeExchangeFields, createClient, createPerson, issueCode, obtainTokens, postForm, type TestClient, type Tokens } from '../support/oauth-factory.js';
import { csrfTokenIn, type PageAgent } from '../support/page-agent.js';
import { authorizePath, consentFields, location, requestFor, signedIn } from './authorize.fixtures.js';

/**
 * Issue #37 §2: OAuth's security events in the audit log, through the real endpoints — a consent
 * approved, an app deauthorized, a code replayed, a rotated refresh token reused, a client failing
 * to authenticate — with the request's address and id. A successful exchange or rotation records
 * nothing (test/http/token-round-trips.test.ts counts its statements), and no row holds a secret.
 */

interface AuditRow {
  action: string;
  actor_kind: string;
  actor_id: string | null;
  application_id: string | null;
  target_id: string | null;
  subject_user_id: string | null;
  address: string | null;
  request_id: string | null;
  options: string | null;
}

describe('the audit log of OAuth', () => {
  let t: TestApp;
  let owner: Person;
  let confidential: TestClient;
  let publicClient: TestClient;
  /** Every secret a test saw: none may appear in any audit row. */
  const secrets: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
    owner = await createPerson(t);
    confidential = await createClient(t, { owner, confidential: true, name: 'Confidential Reader' });
    publicClient = await createClient(t, { owner, confidential: false, name: 'Public Reader' });
    secrets.push(confidential.clientSecret as string);
  });
  afterAll(async () => {
    // No row of any test holds a client secret, code, token or password.
    const all = await t.services.db.selectFrom('audit_events').selectAll().execute();
    const text = JSON.stringify(all, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    for (const secret of secrets) expect(text).not.toContain(secret);
    await t.close();
  });

  async function rows(where: { requestId?: string; action?: string; applicationId?: string } = {}): Promise<AuditRow[]> {
    let query = t.services.db
      .selectFrom('audit_events')
      .select(['action', 'actor_kind', 'actor_id', 'application_id', 'target_id', 'subject_user_id', 'address', 'request_id', 'options'])
      .orderBy('id', 'asc');
    if (where.requestId !== undefined) query = query.where('request_id', '=', where.requestId);
    if (where.action !== undefined) query = query.where('action', '=', where.action);
    if (where.applicationId !== undefined) query = query.where('application_id', '=', where.applicationId);
    const found = await query.execute();
    const text = (v: unknown) => (v === null ? null : String(v));
    return found.map((r) => ({ ...r, actor_id: text(r.actor_id), application_id: text(r.application_id), subject_user_id: text(r.subject_user_id) }));
  }

  const count = async () => (await rows()).length;

  /** Opens the consent screen and presses a button, with the given request headers on the POST. */
  async function consent(agent: PageAgent, client: TestClient, scope: string, decision: 'authorize' | 'cancel', headers: Record<string, string>) {
    const page = await agent.get(authorizePath(requestFor(client.app, { scope, prompt: 'consent' })));
    expect(page.statusCode).toBe(200);
    return agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision }, headers);
  }

  it('approving the consent screen records grant.created with the scopes, by the person, from the request', async () => {
    const { agent, person } = await signedIn(t);
    const res = await consent(agent, publicClient, 'identify email', 'authorize', { 'x-request-id': 'req-consent', 'x-forwarded-for': '203.0.113.30' });
    const code = location(res).searchParams.get('code');
    expect(code).toBeTruthy();
    secrets.push(code as string);
    expect(await rows({ requestId: 'req-consent' })).toEqual([
      {
        action: 'grant.created',
        actor_kind: 'person',
        actor_id: person.id,
        application_id: publicClient.app.id,
        target_id: publicClient.app.id,
        subject_user_id: person.id,
        address: '203.0.113.30',
        request_id: 'req-consent',
        options: JSON.stringify({ scopes: 'identify email' }),
      },
    ]);
  });

  it('declining the consent screen records nothing', async () => {
    const { agent } = await signedIn(t);
    const res = await consent(agent, publicClient, 'identify', 'cancel', { 'x-request-id': 'req-consent-declined' });
    expect(location(res).searchParams.get('error')).toBe('access_denied');
    expect(await rows({ requestId: 'req-consent-declined' })).toEqual([]);
  });

  it('deauthorizing an app in Settings records grant.revoked; deauthorizing one never authorized records nothing', async () => {
    const { agent, person } = await signedIn(t);
    await consent(agent, publicClient, 'identify', 'authorize', {});
    const page = await agent.get('/settings/authorized-apps');
    const res = await agent.postRaw(`/settings/authorized-apps/${publicClient.app.id}/deauthorize`, { _csrf: csrfTokenIn(page.body) as string }, { 'x-request-id': 'req-deauthorize', 'x-forwarded-for': '203.0.113.31' });
    expect(res.statusCode).toBe(303);
    expect(await rows({ requestId: 'req-deauthorize' })).toEqual([
      expect.objectContaining({ action: 'grant.revoked', actor_kind: 'person', actor_id: person.id, application_id: publicClient.app.id, subject_user_id: person.id, address: '203.0.113.31' }),
    ]);
    const again = await agent.postRaw(`/settings/authorized-apps/${publicClient.app.id}/deauthorize`, { _csrf: csrfTokenIn(page.body) as string }, { 'x-request-id': 'req-deauthorize-again' });
    expect(again.statusCode).toBe(303);
    expect(await rows({ requestId: 'req-deauthorize-again' })).toEqual([]);
  });

  it('a successful code exchange and refresh rotation record nothing', async () => {
    const person = await createPerson(t);
    const before = await count();
    const tokens = await obtainTokens(t, confidential, person, ['identify']);
    const rotated = await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: confidential.clientId, client_secret: confidential.clientSecret as string });
    expect(rotated.statusCode).toBe(200);
    secrets.push(tokens.access_token, tokens.refresh_token, (rotated.json() as Tokens).refresh_token);
    expect(await count()).toBe(before);
  });

  it('a code presented again records code.replayed, and the grant is revoked', async () => {
    const person = await createPerson(t);
    const issued = await issueCode(t, { client: publicClient, person, scopes: ['identify'] });
    secrets.push(issued.code);
    const first = await postForm(t, '/api/oauth2/token', codeExchangeFields(publicClient, issued));
    expect(first.statusCode).toBe(200);
    secrets.push((first.json() as Tokens).access_token);
    const replay = await postForm(t, '/api/oauth2/token', codeExchangeFields(publicClient, issued), { headers: { 'x-request-id': 'req-replay' }, address: '198.51.100.40' });
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await rows({ requestId: 'req-replay' })).toEqual([
      expect.objectContaining({ action: 'code.replayed', actor_kind: 'anonymous', actor_id: null, application_id: publicClient.app.id, subject_user_id: person.id, address: '198.51.100.40' }),
    ]);
    const grant = await t.services.db.selectFrom('oauth_grants').select('revoked_at').where('id', '=', issued.grantId).executeTakeFirstOrThrow();
    expect(grant.revoked_at).not.toBeNull();
  });

  it('a rotated refresh token presented again after the grace window records refresh.reused, and the grant is revoked', async () => {
    const person = await createPerson(t);
    const tokens = await obtainTokens(t, publicClient, person, ['identify']);
    const form = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: publicClient.clientId };
    expect((await postForm(t, '/api/oauth2/token', form)).statusCode).toBe(200);
    t.clock.advance(31 * SECOND);
    const reuse = await postForm(t, '/api/oauth2/token', form, { headers: { 'x-request-id': 'req-reuse' }, address: '198.51.100.41' });
    expect(reuse.statusCode).toBe(400);
    secrets.push(tokens.refresh_token);
    expect(await rows({ requestId: 'req-reuse' })).toEqual([
      expect.objectContaining({ action: 'refresh.reused', actor_kind: 'anonymous', application_id: publicClient.app.id, subject_user_id: person.id, address: '198.51.100.41' }),
    ]);
    const grant = await t.services.db.selectFrom('oauth_grants').select('revoked_at').where('id', '=', tokens.grantId).executeTakeFirstOrThrow();
    expect(grant.revoked_at).not.toBeNull();
  });

  it('a wrong client secret at the token endpoint records client.auth_failed with the method, never the secret', async () => {
    const wrong = 'definitely-not-the-secret-0123456789';
    secrets.push(wrong);
    const post = await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: 'x', client_id: confidential.clientId, client_secret: wrong }, { headers: { 'x-request-id': 'req-client-post' }, address: '198.51.100.42' });
    expect(post.statusCode).toBe(401);
    const basic = await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: 'x' }, { headers: { 'x-request-id': 'req-client-basic', authorization: basicAuth(confidential.clientId, wrong) } });
    expect(basic.statusCode).toBe(401);
    expect(await rows({ requestId: 'req-client-post' })).toEqual([
      expect.objectContaining({ action: 'client.auth_failed', actor_kind: 'anonymous', application_id: confidential.app.id, target_id: confidential.app.id, address: '198.51.100.42', options: JSON.stringify({ method: 'client_secret_post' }) }),
    ]);
    expect(await rows({ requestId: 'req-client-basic' })).toEqual([expect.objectContaining({ action: 'client.auth_failed', application_id: confidential.app.id, options: JSON.stringify({ method: 'client_secret_basic' }) })]);
  });

  it('an unknown client at the revocation endpoint records client.auth_failed naming no application', async () => {
    const res = await postForm(t, '/api/oauth2/token/revoke', { token: 'whatever', client_id: '123456789012345678', client_secret: 'some-guess' }, { headers: { 'x-request-id': 'req-revoke-unknown' } });
    expect(res.statusCode).toBe(401);
    expect(await rows({ requestId: 'req-revoke-unknown' })).toEqual([expect.objectContaining({ action: 'client.auth_failed', application_id: null, target_id: null, options: JSON.stringify({ method: 'client_secret_post' }) })]);
  });

  it('a confidential client that sends no secret is refused without a record (it guessed nothing)', async () => {
    const res = await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: 'x', client_id: confidential.clientId }, { headers: { 'x-request-id': 'req-client-none' } });
    expect(res.statusCode).toBe(401);
    expect(await rows({ requestId: 'req-client-none' })).toEqual([]);
  });
});

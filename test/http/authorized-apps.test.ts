import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/core/clock.js';
import { issueSecret } from '../../src/core/secrets.js';
import type { Application } from '../../src/modules/applications/applications.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';
import { answerConsent, authorizePath, createApp, location, requestFor, signedIn } from './authorize.fixtures.js';

/** Settings → Authorized apps (issue #3; OAUTH-CHECKLIST A18, F7). */
describe('Settings → Authorized apps', () => {
  let t: TestApp;
  let owner: Person;
  let reader: Application;
  let mailer: Application;
  let agent: PageAgent;
  let person: Person;

  beforeAll(async () => {
    t = await createTestApp();
    ({ person: owner } = await signedIn(t, 'alice'));
    ({ app: reader } = await createApp(t, owner, { name: 'Acme Reader' }));
    ({ app: mailer } = await createApp(t, owner, { name: 'Mailer', redirectUris: ['https://mailer.example/cb'] }));
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ({ agent, person } = await signedIn(t));
  });

  async function authorize(app: Application, scope: string, as = agent): Promise<void> {
    const res = await answerConsent(as, authorizePath(requestFor(app, { scope, prompt: 'consent' })), 'authorize');
    expect(location(res).searchParams.has('code')).toBe(true);
  }

  /** Gives the person's latest grant of `app` a live access token and refresh token, as the token endpoint would. */
  async function mintTokens(app: Application, userId = person.id): Promise<{ access: string; refresh: string }> {
    const grant = await t.services.db
      .selectFrom('oauth_grants')
      .select(['id', 'scopes'])
      .where('user_id', '=', userId)
      .where('application_id', '=', app.id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const now = t.clock.now();
    const access = issueSecret(t.services.random, 'accessToken');
    const refresh = issueSecret(t.services.random, 'refreshToken');
    const common = { grant_id: String(grant.id), application_id: app.id, user_id: userId, scopes: grant.scopes, created_at: now };
    await t.services.db.insertInto('oauth_access_tokens').values({ ...common, token_hash: access.hash, expires_at: now + HOUR }).execute();
    await t.services.db.insertInto('oauth_refresh_tokens').values({ ...common, token_hash: refresh.hash, expires_at: now + 30 * 24 * HOUR, used_at: null, successor_hash: null }).execute();
    return { access: access.hash, refresh: refresh.hash };
  }

  async function tokenCount(table: 'oauth_access_tokens' | 'oauth_refresh_tokens', userId: string, app: Application): Promise<number> {
    const list = await t.services.db.selectFrom(table).select('token_hash').where('user_id', '=', userId).where('application_id', '=', app.id).execute();
    return list.length;
  }

  async function deauthorize(app: Application, as = agent): Promise<Awaited<ReturnType<PageAgent['postRaw']>>> {
    const page = await as.get('/settings/authorized-apps');
    return as.postRaw(`/settings/authorized-apps/${app.id}/deauthorize`, { _csrf: csrfTokenIn(page.body) as string });
  }

  it('a signed-out person is sent to sign in and back', async () => {
    const res = await new PageAgent(t.app).get('/settings/authorized-apps');
    expect(res.statusCode).toBe(303);
    expect(location(res).pathname).toBe('/login');
    expect(location(res).searchParams.get('next')).toBe('/settings/authorized-apps');
  });

  it('with nothing authorized, the page says so', async () => {
    const res = await agent.get('/settings/authorized-apps');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('You have not authorized any apps.');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('A18: each authorized app is listed once with its owner, every scope granted in plain words, and the date', async () => {
    await authorize(reader, 'identify');
    t.clock.advance(HOUR);
    await authorize(reader, 'email');
    await authorize(mailer, 'email');
    const res = await agent.get('/settings/authorized-apps');
    expect(res.statusCode).toBe(200);
    expect(res.body.match(/<h2>Acme Reader<\/h2>/g)).toHaveLength(1);
    expect(res.body).toContain('<h2>Mailer</h2>');
    const readerCard = res.body.slice(res.body.indexOf('<h2>Acme Reader</h2>'), res.body.indexOf('<h2>Mailer</h2>'));
    expect(readerCard).toContain('Made by @alice');
    expect(readerCard).toContain('Know your name, username and avatar');
    expect(readerCard).toContain('Know your e-mail address');
    expect(readerCard).toMatch(/Authorized <time datetime="2026-11-2\dT[0-9:.]+Z">2026-11-2\d<\/time>/);
    expect(readerCard).toContain(`href="/settings/authorized-apps/${reader.id}/deauthorize"`);
    expect(readerCard).toContain('Deauthorize Acme Reader');
  });

  it("another person's authorizations are not listed", async () => {
    const { agent: bob } = await signedIn(t);
    await authorize(reader, 'identify', bob);
    const res = await agent.get('/settings/authorized-apps');
    expect(res.body).not.toContain('<h2>Acme Reader</h2>');
  });

  it('Deauthorize ends every token of the app at once, forgets the consent, and the next request shows the screen again', async () => {
    await authorize(reader, 'identify');
    const first = await mintTokens(reader);
    await authorize(reader, 'identify email');
    await mintTokens(reader);
    expect(await tokenCount('oauth_access_tokens', person.id, reader)).toBe(2);

    const res = await deauthorize(reader);
    expect(res.statusCode).toBe(303);
    expect(res.headers['location']).toBe('/settings/authorized-apps?removed=1');

    expect(await tokenCount('oauth_access_tokens', person.id, reader)).toBe(0);
    expect(await tokenCount('oauth_refresh_tokens', person.id, reader)).toBe(0);
    const gone = await t.services.db.selectFrom('oauth_access_tokens').select('token_hash').where('token_hash', '=', first.access).execute();
    expect(gone).toEqual([]);
    const grants = await t.services.db.selectFrom('oauth_grants').select('revoked_at').where('user_id', '=', person.id).where('application_id', '=', reader.id).execute();
    expect(grants.length).toBe(2);
    for (const g of grants) expect(Number(g.revoked_at)).toBe(t.clock.now());
    const unusedCodes = await t.services.db.selectFrom('oauth_codes').select('code_hash').where('user_id', '=', person.id).where('used_at', 'is', null).execute();
    expect(unusedCodes).toEqual([]);
    const consent = await t.services.db.selectFrom('oauth_consents').selectAll().where('user_id', '=', person.id).execute();
    expect(consent).toEqual([]);

    const page = await agent.get('/settings/authorized-apps?removed=1');
    expect(page.body).toContain('Access removed.');
    expect(page.body).not.toContain('<h2>Acme Reader</h2>');

    const again = await agent.get(authorizePath(requestFor(reader, { scope: 'identify' })));
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('Acme Reader wants to access your');
    const silent = await agent.get(authorizePath(requestFor(reader, { scope: 'identify', prompt: 'none' })));
    expect(location(silent).searchParams.get('error')).toBe('consent_required');
  });

  it("Deauthorize leaves the person's other apps, and other people's grants of the same app, alone", async () => {
    await authorize(reader, 'identify');
    await mintTokens(reader);
    await authorize(mailer, 'email');
    await mintTokens(mailer);
    const { agent: bob, person: bobPerson } = await signedIn(t);
    await authorize(reader, 'identify', bob);
    await mintTokens(reader, bobPerson.id);

    await deauthorize(reader);
    expect(await tokenCount('oauth_access_tokens', person.id, reader)).toBe(0);
    expect(await tokenCount('oauth_access_tokens', person.id, mailer)).toBe(1);
    expect(await tokenCount('oauth_access_tokens', bobPerson.id, reader)).toBe(1);
    expect((await agent.get('/settings/authorized-apps')).body).toContain('<h2>Mailer</h2>');
  });

  it('Deauthorize without a CSRF token answers 403 and changes nothing', async () => {
    await authorize(reader, 'identify');
    await mintTokens(reader);
    const res = await agent.postRaw(`/settings/authorized-apps/${reader.id}/deauthorize`, {});
    expect(res.statusCode).toBe(403);
    expect(await tokenCount('oauth_access_tokens', person.id, reader)).toBe(1);
  });

  it('Deauthorize of an app never authorized, or a malformed id, changes nothing and returns to the list', async () => {
    await authorize(reader, 'identify');
    const page = await agent.get('/settings/authorized-apps');
    const token = csrfTokenIn(page.body) as string;
    for (const id of [mailer.id, '123', 'not-an-id']) {
      const res = await agent.postRaw(`/settings/authorized-apps/${id}/deauthorize`, { _csrf: token });
      expect(res.statusCode).toBe(303);
    }
    expect((await agent.get('/settings/authorized-apps')).body).toContain('<h2>Acme Reader</h2>');
  });
});

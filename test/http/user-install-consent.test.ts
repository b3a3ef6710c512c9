import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/modules/applications/applications.js';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { postForm } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { authorizePath, consentFields, createApp, freshPkce, location, signedIn } from './authorize.fixtures.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf, personActingOf } from '../support/acting.js';

const REDIRECT = 'https://dm.example/callback';

/**
 * applications.commands without bot (SPEC §5.2, issue #4): a user install for the signed-in
 * person, with no server picker, recorded once; through the code flow a code is issued as usual.
 */
describe('user install consent', () => {
  let t: TestApp;
  let app: Application;
  let agent: PageAgent;
  let person: Person;

  beforeAll(async () => {
    t = await createTestApp();
    const { person: maker } = await signedIn(t, 'dmmaker');
    ({ app } = await createApp(t, maker, { name: 'Reminder', redirectUris: [REDIRECT] }));
    await enableBot(t.services, actingOf(OPERATOR), app.id);
    ({ agent, person } = await signedIn(t, 'robin'));
    // robin owns a server, which must not be offered: a user install has no picker.
    await createServer(t.services, personActingOf(person.id), { name: 'Robin Hood Inc' });
  });
  afterAll(async () => t.close());

  async function installs(userId = person.id) {
    return t.services.db.selectFrom('user_installs').selectAll().where('application_id', '=', app.id).where('user_id', '=', userId).execute();
  }

  it('the screen explains what the app will be able to do, direct messages included, with no server picker', async () => {
    const page = await agent.get(authorizePath({ client_id: app.id, scope: 'applications.commands', permissions: '8' }));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Add Reminder to your account</h1>');
    expect(page.body).toContain('Send you direct messages');
    expect(page.body).toContain('Let you use its commands');
    expect(page.body).not.toContain('<select');
    expect(page.body).not.toContain('Robin Hood Inc');
    expect(page.body).not.toContain('name="permission"');
    expect(page.body).toContain('value="authorize"');
  });

  it('Authorize records the user install once, however often it is repeated, and confirms it', async () => {
    const path = authorizePath({ client_id: app.id, scope: 'applications.commands' });
    for (let i = 0; i < 2; i += 1) {
      const page = await agent.get(path);
      const res = await agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'authorize' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('<h1>Reminder was added to your account</h1>');
    }
    expect(await installs()).toHaveLength(1);
    // No bot joined any server and no grant was made.
    expect(await t.services.db.selectFrom('server_installs').select('server_id').where('application_id', '=', app.id).execute()).toEqual([]);
    expect(await t.services.db.selectFrom('oauth_grants').select('id').where('application_id', '=', app.id).where('user_id', '=', person.id).execute()).toEqual([]);
  });

  it('Cancel installs nothing', async () => {
    const other = await signedIn(t);
    const page = await other.agent.get(authorizePath({ client_id: app.id, scope: 'applications.commands' }));
    const res = await other.agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'cancel' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Reminder was not added');
    expect(await installs(other.person.id)).toEqual([]);
  });

  it('with response_type=code (and identify) a code is issued as usual, the install is recorded, and the tokens carry both scopes; prompt=none does not skip the screen', async () => {
    const other = await signedIn(t);
    const pkce = freshPkce();
    const path = authorizePath({
      client_id: app.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'identify applications.commands',
      state: 'u1',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      prompt: 'none',
    });
    const page = await other.agent.get(path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Send you direct messages');
    expect(page.body).toContain('Know your name, username and avatar');
    const res = await other.agent.postRaw('/app/oauth2/authorize', { ...consentFields(page.body), decision: 'authorize' });
    const to = location(res);
    expect([...to.searchParams.keys()]).toEqual(['code', 'state', 'iss']);
    expect(await installs(other.person.id)).toHaveLength(1);
    const token = await postForm(t, '/api/oauth2/token', { grant_type: 'authorization_code', code: to.searchParams.get('code') as string, redirect_uri: REDIRECT, client_id: app.id, code_verifier: pkce.verifier });
    expect(token.json()).toMatchObject({ scope: 'identify applications.commands' });
    expect(token.json()).not.toHaveProperty('server');
  });

  it('a request without response_type that asks for more than installs is the code flow, and is refused as such', async () => {
    const res = await agent.get(authorizePath({ client_id: app.id, scope: 'identify applications.commands', redirect_uri: REDIRECT }));
    expect(location(res).searchParams.get('error')).toBe('invalid_request');
  });
});

import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE, SECOND } from '../../src/core/clock.js';
import { setAdministrator } from '../../src/modules/accounts/people-admin.service.js';
import { findApplication } from '../../src/modules/applications/applications.repository.js';
import { getPersonById, getPersonByUsername } from '../../src/modules/directory/people.service.js';
import { getServer } from '../../src/modules/directory/servers.service.js';
import { operatorActing } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, runCommand } from '../support/directory-fixtures.js';
import { given } from '../support/given.js';
import { PageAgent } from '../support/page-agent.js';

const PASSWORD = 'correct horse battery';

/** The code an authenticator app with this secret shows at the test clock's time. */
function codeAt(t: TestApp, secret: string): string {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: t.clock.now() });
}

async function register(t: TestApp, username: string): Promise<{ agent: PageAgent; id: string }> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  const person = await getPersonByUsername(t.services, username);
  if (!person) throw new Error('not registered');
  return { agent, id: person.id };
}

/** Turns TOTP on through Settings → Security; the secret. */
async function enrolTotp(t: TestApp, agent: PageAgent): Promise<string> {
  const enrol = await agent.submit('/settings/security', '/settings/security/totp', {});
  const secret = /<code class="secret">([^<]+)<\/code>/.exec(enrol.body)?.[1]?.replace(/\s/g, '');
  if (!secret) throw new Error('no secret on the enrolment page');
  const confirmed = await agent.submit('/settings/security', '/settings/security/totp/confirm', { code: codeAt(t, secret) });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  // The confirming code cannot be used again: the next sign-in waits for the next step.
  t.clock.advance(30 * SECOND);
  return secret;
}

/** Signs in through the password page and the second step, as the gate's "Sign in again" does. */
async function signInWithSecondFactor(t: TestApp, username: string, secret: string, agent = new PageAgent(t.app)): Promise<PageAgent> {
  const password = await agent.submit('/login?next=%2Fadmin', '/login?next=%2Fadmin', { username, password: PASSWORD, next: '/admin' });
  expect(password.statusCode, password.body).toBe(303);
  const second = await agent.submit(location(password), '/login/second-factor', { code: codeAt(t, secret), next: '/admin' });
  expect(second.statusCode, second.body).toBe(303);
  expect(location(second)).toBe('/admin');
  t.clock.advance(30 * SECOND);
  return agent;
}

/** An administrator with TOTP, signed in with it just now. */
async function signedInAdmin(t: TestApp, username: string): Promise<{ agent: PageAgent; id: string; secret: string }> {
  const { agent: first, id } = await register(t, username);
  await setAdministrator(t.services, operatorActing(t.clock.now()), id, true);
  const secret = await enrolTotp(t, first);
  return { agent: await signInWithSecondFactor(t, username, secret), id, secret };
}

describe('Admin pages: the gate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('sends someone signed out to sign in, and tells a person who is not an administrator that the pages are for administrators (403)', async () => {
    const anonymous = await new PageAgent(t.app).get('/admin/people');
    expect(anonymous.statusCode).toBe(303);
    expect(location(anonymous)).toBe('/login?next=%2Fadmin%2Fpeople');
    const { agent } = await given.signedIn(t);
    const refused = await agent.get('/admin');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Administrators only');
    expect(refused.body).toContain('Only the administrators of this instance can open these pages.');
  });

  it('asks an administrator without a second factor to enrol one first, with a link to Settings → Security', async () => {
    const { agent, id } = await register(t, 'admin.nofactor');
    await setAdministrator(t.services, operatorActing(t.clock.now()), id, true);
    const refused = await agent.get('/admin');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Enrol a second factor first');
    expect(refused.body).toContain('href="/settings/security"');
  });

  it('asks an administrator whose session did not use the second factor, or signed in over 30 minutes ago, to sign in again, and lets them in after', async () => {
    const { agent, id } = await register(t, 'admin.reauth');
    await setAdministrator(t.services, operatorActing(t.clock.now()), id, true);
    const secret = await enrolTotp(t, agent);
    const refused = await agent.get('/admin/people?q=x');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Sign in again to continue');
    expect(refused.body).toContain('href="/login?next=%2Fadmin%2Fpeople%3Fq%3Dx&amp;login_hint=admin.reauth"');
    await signInWithSecondFactor(t, 'admin.reauth', secret, agent);
    expect((await agent.get('/admin')).statusCode).toBe(200);
    t.clock.advance(31 * MINUTE);
    const stale = await agent.get('/admin');
    expect(stale.statusCode).toBe(403);
    expect(stale.body).toContain('Sign in again to continue');
    // A form posted after the sign-in grew old changes nothing either.
    const { person } = await given.signedIn(t);
    const token = await csrfFrom(agent, '/settings/profile');
    const post = await agent.postRaw(`/admin/people/${person.id}/disable`, { _csrf: token, reason: '' });
    expect(post.statusCode).toBe(403);
    expect((await getPersonById(t.services, person.id))?.disabledAt).toBeNull();
  });

  it('shows the Admin link in the top bar to administrators only', async () => {
    const { agent } = await signedInAdmin(t, 'admin.menu');
    expect((await agent.get('/settings/profile')).body).toContain('<a href="/admin">Admin</a>');
    const { agent: someone } = await given.signedIn(t);
    expect((await someone.get('/settings/profile')).body).not.toContain('href="/admin"');
  });
});

describe('Admin pages: people', () => {
  let t: TestApp;
  let admin: PageAgent;
  let adminId: string;
  beforeAll(async () => {
    t = await createTestApp();
    ({ agent: admin, id: adminId } = await signedInAdmin(t, 'root.admin'));
  });
  afterAll(async () => t.close());

  it('finds people by username, name or e-mail, newest first, and filters administrators', async () => {
    await given.person(t, { username: 'searched.one', name: 'Ada Searched', email: 'ada@searched.example' });
    await given.person(t, { username: 'searched.two', name: 'Bea Searched', email: 'bea@other.example' });
    const byName = await admin.get('/admin/people?q=searched');
    expect(byName.statusCode).toBe(200);
    expect(byName.body.indexOf('@searched.two')).toBeGreaterThan(-1);
    expect(byName.body.indexOf('@searched.two')).toBeLessThan(byName.body.indexOf('@searched.one'));
    const byEmail = await admin.get('/admin/people?q=ada%40searched');
    expect(byEmail.body).toContain('@searched.one');
    expect(byEmail.body).not.toContain('@searched.two');
    const admins = await admin.get('/admin/people?admins=1');
    expect(admins.body).toContain('@root.admin');
    expect(admins.body).not.toContain('@searched.one');
    const bad = await admin.get('/admin/people?page=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('role="alert"');
  });

  it('answers an unknown or malformed person id with the admin area’s 404 page', async () => {
    for (const id of ['123456789012345678', 'nope']) {
      const res = await admin.get(`/admin/people/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('Person not found');
    }
    const token = await csrfFrom(admin, '/admin');
    expect((await admin.postRaw('/admin/people/123456789012345678/disable', { _csrf: token })).statusCode).toBe(404);
  });

  it('a person’s page shows their servers, apps, sessions and recent security events', async () => {
    const { agent, person } = await given.signedIn(t, { username: 'shown.person' });
    await given.server(t, { owner: person, name: 'Shown Server' });
    await given.confidentialApp(t, { owner: person, name: 'Shown App' });
    await agent.get('/');
    const res = await admin.get(`/admin/people/${person.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Shown Server');
    expect(res.body).toContain('Shown App');
    expect(res.body).toContain('signed in');
    expect(res.body).toContain('Recent security events');
  });

  it('disables a person after a confirmation that counts what ends, with the reason kept; enabling restores the account', async () => {
    const { agent, person } = await given.signedIn(t, { username: 'to.disable' });
    const confirm = await admin.get(`/admin/people/${person.id}/disable`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Disable @to.disable?');
    expect(confirm.body).toContain('ends their 1 session');
    const done = await admin.submit(`/admin/people/${person.id}/disable`, `/admin/people/${person.id}/disable`, { reason: 'spam' });
    expect(done.statusCode, done.body).toBe(303);
    expect((await getPersonById(t.services, person.id))?.disabledAt).not.toBeNull();
    const shown = await admin.get(location(done));
    expect(shown.body).toContain('reason: spam');
    // Their session ended with it.
    expect((await agent.get('/settings/profile')).statusCode).toBe(303);
    const enabled = await admin.submit(`/admin/people/${person.id}`, `/admin/people/${person.id}/enable`, {});
    expect(enabled.statusCode).toBe(303);
    expect((await getPersonById(t.services, person.id))?.disabledAt).toBeNull();
  });

  it('refuses a form without its CSRF token and changes nothing', async () => {
    const { person } = await given.signedIn(t);
    const res = await admin.postRaw(`/admin/people/${person.id}/disable`, { reason: 'no token' });
    expect(res.statusCode).toBe(403);
    expect((await getPersonById(t.services, person.id))?.disabledAt).toBeNull();
  });

  it('refuses to disable or delete the administrator themselves (the last administrator stays)', async () => {
    const disable = await admin.submit(`/admin/people/${adminId}/disable`, `/admin/people/${adminId}/disable`, { reason: '' });
    expect(disable.statusCode).toBe(400);
    expect(disable.body).toContain('You cannot disable your own account.');
    const del = await admin.submit(`/admin/people/${adminId}/delete`, `/admin/people/${adminId}/delete`, {});
    expect(del.statusCode).toBe(400);
    expect((await getPersonById(t.services, adminId))?.disabledAt).toBeNull();
  });

  it('ends every session of a person', async () => {
    const { agent, person } = await given.signedIn(t);
    const confirm = await admin.get(`/admin/people/${person.id}/end-sessions`);
    expect(confirm.body).toContain('1 session');
    const done = await admin.submit(`/admin/people/${person.id}/end-sessions`, `/admin/people/${person.id}/end-sessions`, {});
    expect(done.statusCode).toBe(303);
    expect((await agent.get('/settings/profile')).statusCode).toBe(303);
  });

  it('makes a one-time password reset link and shows it once', async () => {
    const { person } = await given.signedIn(t);
    const res = await admin.submit(`/admin/people/${person.id}/reset-password`, `/admin/people/${person.id}/reset-password`, {});
    expect(res.statusCode).toBe(200);
    const url = /data-reset-url>([^<]+)</.exec(res.body)?.[1];
    expect(url).toMatch(/^http:\/\/localhost:8080\/reset-password\?token=/);
    const page = await new PageAgent(t.app).get((url ?? '').replace('http://localhost:8080', '').replaceAll('&amp;', '&'));
    expect(page.statusCode).toBe(200);
  });

  it('removes a person’s second factor', async () => {
    const { agent, id } = await register(t, 'lost.phone');
    await enrolTotp(t, agent);
    const confirm = await admin.get(`/admin/people/${id}`);
    expect(confirm.body).toContain('Remove their second factor');
    const done = await admin.submit(`/admin/people/${id}/reset-second-factor`, `/admin/people/${id}/reset-second-factor`, {});
    expect(done.statusCode).toBe(303);
    const login = await new PageAgent(t.app).submit('/login', '/login', { username: 'lost.phone', password: PASSWORD });
    expect(location(login)).toBe('/');
  });

  it('deletes a person after transferring the servers they own to the member named', async () => {
    const owner = await given.person(t, { username: 'leaving.owner' });
    const heir = await given.person(t, { username: 'heir.member' });
    const server = await given.server(t, { owner, name: 'Inherited' });
    const url = `/admin/people/${owner.id}/delete`;
    const confirm = await admin.get(url);
    expect(confirm.body).toContain('Inherited');
    expect(confirm.body).toContain('name="transfer_to"');
    const notMember = await admin.submit(url, url, { transfer_to: 'heir.member' });
    expect(notMember.statusCode).toBe(400);
    expect(notMember.body).toContain('is not a member of this server');
    expect((await getPersonById(t.services, owner.id))?.username).toBe('leaving.owner');
    await runCommand(t, 'members add', ['--server', server.id, '--username', 'heir.member']);
    const done = await admin.submit(url, url, { transfer_to: 'heir.member' });
    expect(done.statusCode, done.body).toBe(303);
    expect((await getServer(t.services, server.id))?.ownerId).toBe(heir.id);
    expect((await admin.get(`/admin/people/${owner.id}`)).statusCode).toBe(404);
  });
});

describe('Admin pages: apps and servers', () => {
  let t: TestApp;
  let admin: PageAgent;
  beforeAll(async () => {
    // Open registration, so an app can register itself (RFC 7591) for the registered-app mark.
    t = await createTestApp({ env: { GATEHOUSE_CLIENT_REGISTRATION: 'open' } });
    ({ agent: admin } = await signedInAdmin(t, 'apps.admin'));
  });
  afterAll(async () => t.close());

  it('lists apps, disables one after a confirmation with its counts, enables and deletes it', async () => {
    const { client } = await given.bot(t, { name: 'Noisy Bot' });
    const id = client.app.id;
    expect((await admin.get('/admin/apps')).body).toContain('Noisy Bot');
    const confirm = await admin.get(`/admin/apps/${id}/disable`);
    expect(confirm.body).toContain('Disable Noisy Bot?');
    expect(confirm.body).toContain('0 servers');
    const disabled = await admin.submit(`/admin/apps/${id}/disable`, `/admin/apps/${id}/disable`, { reason: 'abuse' });
    expect(disabled.statusCode).toBe(303);
    expect((await findApplication(t.services.db, id))?.disabledAt).not.toBeNull();
    expect((await admin.get('/admin/apps?disabled=1')).body).toContain('Noisy Bot');
    expect((await admin.submit(`/admin/apps/${id}`, `/admin/apps/${id}/enable`, {})).statusCode).toBe(303);
    expect((await findApplication(t.services.db, id))?.disabledAt).toBeNull();
    const deleted = await admin.submit(`/admin/apps/${id}/delete`, `/admin/apps/${id}/delete`, {});
    expect(deleted.statusCode).toBe(303);
    const gone = await admin.get(`/admin/apps/${id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toContain('App not found');
  });

  it('marks an app that registered itself (RFC 7591) "Registered automatically, not reviewed" in the apps list and on its page, and no other app', async () => {
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/oauth2/register',
      payload: JSON.stringify({ client_name: 'Self Made Agent', redirect_uris: ['https://agent.example/cb'] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const id = (registered.json() as { client_id: string }).client_id;
    const reviewed = await given.publicApp(t, { name: 'Reviewed App' });
    const MARK = 'Registered automatically, not reviewed';
    const list = (await admin.get('/admin/apps')).body;
    const item = (appId: string) => new RegExp(`<li data-app="${appId}">[\\s\\S]*?</li>`).exec(list)?.[0] ?? '';
    expect(item(id)).toContain('Self Made Agent');
    expect(item(id)).toContain(MARK);
    expect(item(reviewed.clientId)).toContain('Reviewed App');
    expect(item(reviewed.clientId)).not.toContain(MARK);
    const appPage = await admin.get(`/admin/apps/${id}`);
    expect(appPage.statusCode).toBe(200);
    expect(appPage.body).toContain(MARK);
    expect((await admin.get(`/admin/apps/${reviewed.clientId}`)).body).not.toContain(MARK);
  });

  it('names an unknown owner in the apps and servers filters as a refusal, not an error', async () => {
    for (const path of ['/admin/apps?owner=nobody.here', '/admin/servers?owner=nobody.here']) {
      const res = await admin.get(path);
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('Nobody has that username.');
    }
  });

  it('transfers a server to a member, refusing someone who is not one, and deletes it after a confirmation with its counts', async () => {
    const server = await given.server(t, { name: 'Old Guild' });
    const member = await given.person(t, { username: 'guild.member' });
    await given.person(t, { username: 'outsider' });
    expect((await admin.get('/admin/servers')).body).toContain('Old Guild');
    const url = `/admin/servers/${server.id}/transfer`;
    const refused = await admin.submit(url, url, { to: 'outsider' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('not a member');
    await runCommand(t, 'members add', ['--server', server.id, '--username', 'guild.member']);
    expect((await admin.submit(url, url, { to: 'guild.member' })).statusCode).toBe(303);
    expect((await getServer(t.services, server.id))?.ownerId).toBe(member.id);
    const confirm = await admin.get(`/admin/servers/${server.id}/delete`);
    expect(confirm.body).toContain('Delete Old Guild?');
    expect(confirm.body).toContain('1 channel');
    const deleted = await admin.submit(`/admin/servers/${server.id}/delete`, `/admin/servers/${server.id}/delete`, {});
    expect(deleted.statusCode, deleted.body).toBe(303);
    expect(await getServer(t.services, server.id)).toBeUndefined();
    const gone = await admin.get(`/admin/servers/${server.id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toContain('Server not found');
  });
});

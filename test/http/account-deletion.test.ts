import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '../../src/core/clock.js';
import { confirmTotp, issueRecoveryCodesIfNone, secondFactorsChanged, startTotpEnrolment } from '../../src/modules/mfa/mfa.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { getPersonById } from '../../src/modules/directory/people.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { authorizedApps } from '../../src/modules/oauth/authorized-apps.service.js';
import { insertPasskey } from '../../src/modules/accounts/passkeys.repository.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given } from '../support/given.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';

const PASSWORD = 'correct horse battery';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

let counter = 0;
const fresh = () => `del${++counter}x${t.services.ids.next().slice(-6)}`;

async function register(username: string): Promise<{ agent: PageAgent; id: string }> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: `Name of ${username}`, email: '', password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  const row = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
  return { agent, id: String(row.id) };
}

async function personOf(id: string): Promise<Person> {
  const found = await getPersonById(t.services, id);
  if (!found) throw new Error(`no person ${id}`);
  return found;
}

async function signIn(username: string): Promise<{ statusCode: number; agent: PageAgent }> {
  const agent = new PageAgent(t.app);
  const page = await agent.get('/login');
  const res = await agent.postRaw('/login', { username, password: PASSWORD, _csrf: csrfTokenIn(page.body) ?? '' });
  return { statusCode: res.statusCode, agent };
}

const deleteWith = (agent: PageAgent, password: string, code?: string) => agent.submit('/settings/account', '/settings/account/delete', { password, ...(code === undefined ? {} : { code }) });

describe('Settings → Account → Delete account (issue #38 §5)', () => {
  it('shows what goes before asking for the password', async () => {
    const me = await register(fresh());
    const page = await me.agent.get('/settings/account');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Delete my account');
    expect(page.body).toContain('removes you from 0 servers');
    expect(page.body).toContain('href="/settings/account" class="active" aria-current="page">Account</a>');
  });

  it('refuses a wrong password beside the form and changes nothing', async () => {
    const username = fresh();
    const me = await register(username);
    const res = await deleteWith(me.agent, 'not my password at all');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Password does not match.');
    expect((await me.agent.get('/settings/profile')).statusCode).toBe(200);
    expect((await signIn(username)).statusCode).toBe(303);
  });

  it('refuses while the person owns a server, naming it, and changes nothing', async () => {
    const username = fresh();
    const me = await register(username);
    await given.server(t, { owner: await personOf(me.id), name: 'Still mine' });
    const page = await me.agent.get('/settings/account');
    expect(page.body).toContain('transfer or delete it first');
    expect(page.body).toContain('Still mine');
    expect(page.body).not.toContain('action="/settings/account/delete"');
    const res = await me.agent.postRaw('/settings/account/delete', { password: PASSWORD, _csrf: csrfTokenIn(page.body) ?? '' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('You own a server (Still mine): transfer or delete it first.');
    expect((await signIn(username)).statusCode).toBe(303);
  });

  it("ends the person's sessions, grants, apps and memberships, frees the username and records account.deleted", async () => {
    const username = fresh();
    const me = await register(username);
    const elsewhere = await signIn(username);
    const app = await given.confidentialApp(t, { owner: await personOf(me.id), name: 'My Tool' });
    const other = await given.confidentialApp(t, { name: 'Weather Station' });
    await given.code(t, { client: other, person: await personOf(me.id) });
    expect(await authorizedApps(t.services, me.id)).toHaveLength(1);
    const server = await given.server(t, { name: 'Joined' });
    await addMember(t.services, operatorActing(), server.id, me.id);
    // A passkey would still sign in to the row that stays as "Deleted account": it must go too.
    await insertPasskey(t.services.db, { credentialId: `cred-${username}`, userId: me.id, name: 'Laptop', publicKey: 'AQID', signCount: 0, transports: ['internal'], createdAt: t.clock.now() });
    // A passkey is a second factor: the deletion is confirmed with a recovery code of it.
    const codes = (await issueRecoveryCodesIfNone(t.services, t.services.db, me.id)) ?? [];
    await secondFactorsChanged(t.services.db, me.id);
    // The password alone is refused now.
    expect((await deleteWith(me.agent, PASSWORD)).statusCode).toBe(400);

    const res = await deleteWith(me.agent, PASSWORD, codes[0]);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('/?account=deleted');
    expect((await me.agent.get('/settings/profile')).statusCode).toBe(303);
    expect((await elsewhere.agent.get('/settings/profile')).statusCode).toBe(303);
    expect((await signIn(username)).statusCode).toBe(400);

    expect(await t.services.db.selectFrom('sessions').select('id_hash').where('user_id', '=', me.id).execute()).toHaveLength(0);
    expect(await t.services.db.selectFrom('passkeys').select('credential_id').where('user_id', '=', me.id).execute()).toHaveLength(0);
    expect(await t.services.db.selectFrom('mfa_recovery_codes').select('code_hash').where('user_id', '=', me.id).execute()).toHaveLength(0);
    expect(await t.services.db.selectFrom('applications').select('id').where('id', '=', app.app.id).execute()).toHaveLength(0);
    expect(await t.services.db.selectFrom('members').select('user_id').where('user_id', '=', me.id).execute()).toHaveLength(0);
    expect(await authorizedApps(t.services, me.id)).toHaveLength(0);
    const audit = await t.services.db.selectFrom('audit_events').select('action').where('action', '=', 'account.deleted').where('subject_user_id', '=', me.id).execute();
    expect(audit).toHaveLength(1);

    // The username is free again.
    await register(username);
  });

  it('keeps their messages, shown as by "Deleted account"', async () => {
    const username = fresh();
    const me = await register(username);
    const reader = await given.signedIn(t);
    const server = await given.server(t, { owner: reader.person, name: 'Chat' });
    await addMember(t.services, operatorActing(), server.id, me.id);
    const channelId = server.channels[0]?.id as string;
    await postMessage(t.services, personActingOf(me.id), channelId, 'hello from before');

    expect((await deleteWith(me.agent, PASSWORD)).statusCode).toBe(303);
    const view = await reader.agent.get(`/channels/${channelId}`);
    expect(view.statusCode).toBe(200);
    expect(view.body).toContain('hello from before');
    expect(view.body).toContain('Deleted account');
    expect(view.body).not.toContain(`Name of ${username}`);
  });

  it('with a second factor on, asks for a current code too: the password alone is refused, with the code it deletes', async () => {
    const username = fresh();
    const me = await register(username);
    const acting = personActingOf(me.id, t.clock.now());
    const { secret } = await startTotpEnrolment(t.services, acting);
    const codeNow = () => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: t.clock.now() });
    await confirmTotp(t.services, acting, codeNow());
    t.clock.advance(30 * SECOND);

    const page = await me.agent.get('/settings/account');
    expect(page.body).toContain('name="code"');
    const refused = await deleteWith(me.agent, PASSWORD);
    expect(refused.statusCode).toBe(400);
    expect((await me.agent.get('/settings/profile')).statusCode).toBe(200);

    t.clock.advance(30 * SECOND);
    const done = await me.agent.submit('/settings/account', '/settings/account/delete', { password: PASSWORD, code: codeNow() });
    expect(done.statusCode, done.body).toBe(303);
    expect((await me.agent.get('/settings/profile')).statusCode).toBe(303);
  });
});

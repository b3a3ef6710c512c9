import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUsageError, parseFlags } from '../../src/cli/command.js';
import { peopleCommands } from '../../src/cli/commands/people.js';
import { commands } from '../../src/cli/commands/index.js';
import { MINUTE } from '../../src/core/clock.js';
import { ApiError } from '../../src/core/errors.js';
import { applyConfiguredAdmins, requireAdmin } from '../../src/modules/accounts/people-admin.service.js';
import { startSession } from '../../src/modules/accounts/sessions.service.js';
import { confirmTotp, recordSessionMethods, startTotpEnrolment } from '../../src/modules/mfa/mfa.service.js';
import * as OTPAuth from 'otpauth';
import type { Person } from '../../src/modules/directory/people.js';
import { getPersonByUsername } from '../../src/modules/directory/people.service.js';
import { createInvite } from '../../src/modules/directory/invites.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given } from '../support/given.js';
import { getWithBearer, obtainTokens, postForm } from '../support/oauth-factory.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/**
 * Issue #39 (operators), people: `gatehouse people list|show|disable|enable|admin|delete`, what
 * "disabled" means for sign-in, sessions, OAuth grants and bots, and the last administrator.
 */

async function people(t: TestApp, verb: string, args: string[]): Promise<Record<string, unknown>> {
  const command = peopleCommands.find((c) => c.name === `people ${verb}`);
  if (!command) throw new Error(`no command people ${verb}`);
  const { flags } = parseFlags(args, command.flags);
  return command.run(t.services, flags);
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a refusal');
}

async function auditActions(t: TestApp, userId: string): Promise<Array<{ action: string; actor: string | null }>> {
  const rows = await t.services.db.selectFrom('audit_events').select(['action', 'actor_kind']).where('subject_user_id', '=', userId).orderBy('id').execute();
  return rows.map((r) => ({ action: r.action, actor: r.actor_kind }));
}

const PASSWORD = 'correct horse battery';

async function signUp(t: TestApp, username: string, address = '203.0.113.7'): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const page = await agent.get('/register');
  const res = await agent.postRaw('/register', { username, name: '', email: `${username}@example.org`, password: PASSWORD, _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-forwarded-for': address });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

async function signIn(t: TestApp, username: string): Promise<{ agent: PageAgent; status: number; body: string }> {
  const agent = new PageAgent(t.app);
  const page = await agent.get('/login');
  const res = await agent.postRaw('/login', { username, password: PASSWORD, _csrf: csrfTokenIn(page.body) ?? '' });
  return { agent, status: res.statusCode, body: res.body };
}

describe('issue #39: gatehouse people list and show', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
    await signUp(t, 'carol_list', '198.51.100.23');
    await signIn(t, 'carol_list');
    t.clock.advance(MINUTE);
    await people(t, 'create', ['--username', 'dave_list', '--password', PASSWORD, '--email', 'dave@corp.example']);
    t.clock.advance(MINUTE);
    await signUp(t, 'erin_list', '198.51.100.99');
  });
  afterAll(async () => t.close());

  it('lists people newest first with their sign-up address and time (none for the operator’s)', async () => {
    const listed = (await people(t, 'list', [])) as { people: Array<Record<string, unknown>>; next: string | null };
    expect(listed.people.map((p) => p['username'])).toEqual(['erin_list', 'dave_list', 'carol_list']);
    expect(listed.people[0]).toMatchObject({ signup_address: '198.51.100.99', admin: false, disabled: false });
    expect(listed.people[1]).toMatchObject({ signup_address: null, email: 'dave@corp.example' });
    expect(typeof listed.people[2]?.['created_at']).toBe('string');
    expect(listed.next).toBeNull();
  });

  it('searches by username, display name, e-mail and sign-up address, ignoring case; % and _ match only themselves', async () => {
    const usernames = async (query: string) => ((await people(t, 'list', ['--query', query])) as { people: Array<{ username: string }> }).people.map((p) => p.username);
    expect(await usernames('CAROL')).toEqual(['carol_list']);
    expect(await usernames('corp.example')).toEqual(['dave_list']);
    expect(await usernames('198.51.100.9')).toEqual(['erin_list']);
    expect(await usernames('%')).toEqual([]);
    expect(await usernames('l_i')).toEqual([]);
  });

  it('pages with --limit and --after (the previous page’s next) or --page', async () => {
    const first = (await people(t, 'list', ['--limit', '2'])) as { people: Array<{ username: string }>; next: string };
    expect(first.people.map((p) => p.username)).toEqual(['erin_list', 'dave_list']);
    const second = (await people(t, 'list', ['--limit', '2', '--after', first.next])) as { people: Array<{ username: string }>; next: string | null };
    expect(second.people.map((p) => p.username)).toEqual(['carol_list']);
    expect(second.next).toBeNull();
    const byPage = (await people(t, 'list', ['--limit', '2', '--page', '2'])) as { people: Array<{ username: string }> };
    expect(byPage.people.map((p) => p.username)).toEqual(['carol_list']);
  });

  it('refuses a bad limit, a bad cursor and a non-number page with a clear message', async () => {
    expect((await refusal(people(t, 'list', ['--limit', '0']))).message).toMatch(/Invalid Form Body|limit/);
    expect(await refusal(people(t, 'list', ['--limit', 'ten']))).toBeInstanceOf(CliUsageError);
    expect(await refusal(people(t, 'list', ['--after', 'nobody']))).toBeInstanceOf(ApiError);
  });

  it('show names an unknown person clearly and needs exactly one of --username and --id', async () => {
    const unknown = await refusal(people(t, 'show', ['--username', 'nobody_here']));
    expect(unknown).toBeInstanceOf(ApiError);
    expect(unknown.message).toBe('Unknown User');
    expect(await refusal(people(t, 'show', []))).toBeInstanceOf(CliUsageError);
  });

  it('show gives the account, servers, apps, sessions, grants and recent security events', async () => {
    const carol = await t.services.db.selectFrom('users').select('id').where('username_key', '=', 'carol_list').executeTakeFirstOrThrow();
    const shown = await people(t, 'show', ['--id', String(carol.id)]);
    expect(shown).toMatchObject({ username: 'carol_list', signup_address: '198.51.100.23', mfa_enabled: false, grants_in_force: 0, servers: [], apps: [] });
    expect((shown['sessions'] as unknown[]).length).toBe(2);
    expect((shown['recent_security_events'] as Array<{ action: string }>).map((e) => e.action)).toContain('signin.succeeded');
  });
});

describe('issue #39: a disabled person', () => {
  let t: TestApp;
  let mallory: Person;
  beforeAll(async () => {
    t = await createTestApp();
    await signUp(t, 'mallory');
    mallory = (await getPersonByUsername(t.services, 'mallory')) as Person;
  });
  afterAll(async () => t.close());

  it('refuses to disable without --yes when standard input is not a terminal, and changes nothing', async () => {
    const refused = await refusal(people(t, 'disable', ['--username', 'mallory']));
    expect(refused).toBeInstanceOf(CliUsageError);
    expect(refused.message).toContain('Disabling @mallory ends 1 session');
    expect(refused.message).toContain('--yes');
    expect((await signIn(t, 'mallory')).status).toBe(303);
  });

  it('loses every session, grant and bot at once, cannot sign in, and is told so clearly', async () => {
    const { agent } = await signIn(t, 'mallory');
    const client = await given.confidentialApp(t);
    const tokens = await obtainTokens(t, client, mallory);
    const bot = await given.bot(t, { owner: mallory });
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: bot.headers })).statusCode).toBe(200);

    const disabled = await people(t, 'disable', ['--username', 'mallory', '--reason', 'spam', '--yes']);
    expect(disabled).toMatchObject({ disabled: true, disabled_reason: 'spam', changed: true, revoked_apps: 1 });
    expect(disabled['ended_sessions']).toBeGreaterThanOrEqual(2);

    expect((await agent.get('/settings/profile')).statusCode).not.toBe(200);
    expect((await getWithBearer(t, '/api/v1/users/@me', tokens.access_token)).statusCode).toBe(401);
    const refresh = await postForm(t, '/api/oauth2/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.clientId, client_secret: client.clientSecret as string });
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/@me', headers: bot.headers })).statusCode).toBe(401);

    const again = await signIn(t, 'mallory');
    expect(again.status).toBe(403);
    expect(again.body).toContain('This account has been disabled by the operator');
    expect(again.body).not.toContain('spam');

    const actions = await auditActions(t, mallory.id);
    expect(actions).toContainEqual({ action: 'person.disabled', actor: 'operator' });
    expect(actions).toContainEqual({ action: 'session.ended', actor: 'operator' });
    expect(actions).toContainEqual({ action: 'grant.revoked', actor: 'operator' });
  });

  it('a second disable changes nothing and records nothing', async () => {
    const before = (await auditActions(t, mallory.id)).length;
    expect(await people(t, 'disable', ['--username', 'mallory'])).toMatchObject({ changed: false });
    expect((await auditActions(t, mallory.id)).length).toBe(before);
  });

  it('is listed with --disabled', async () => {
    const listed = (await people(t, 'list', ['--disabled'])) as { people: Array<{ username: string }> };
    expect(listed.people.map((p) => p.username)).toEqual(['mallory']);
  });

  it('enabled again, signs in; revoked grants stay revoked', async () => {
    expect(await people(t, 'enable', ['--username', 'mallory'])).toMatchObject({ disabled: false, changed: true });
    expect((await signIn(t, 'mallory')).status).toBe(303);
    expect(await auditActions(t, mallory.id)).toContainEqual({ action: 'person.enabled', actor: 'operator' });
    const shown = await people(t, 'show', ['--username', 'mallory']);
    expect(shown['grants_in_force']).toBe(0);
  });
});

describe('issue #39: administrators', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await given.person(t, { username: 'root_a' });
    await given.person(t, { username: 'root_b' });
  });
  afterAll(async () => t.close());

  it('people admin grants and --revoke removes, audited as the operator; granting twice changes nothing', async () => {
    expect(await people(t, 'admin', ['--username', 'root_a'])).toMatchObject({ admin: true, changed: true });
    expect(await people(t, 'admin', ['--username', 'root_a'])).toMatchObject({ admin: true, changed: false });
    expect(await people(t, 'admin', ['--username', 'root_b'])).toMatchObject({ admin: true, changed: true });
    expect(await people(t, 'admin', ['--username', 'root_b', '--revoke'])).toMatchObject({ admin: false, changed: true });
    const listed = (await people(t, 'list', ['--admins'])) as { people: Array<{ username: string }> };
    expect(listed.people.map((p) => p.username)).toEqual(['root_a']);
    const id = String(listed.people[0] && (listed.people[0] as unknown as { id: string }).id);
    expect(await auditActions(t, id)).toContainEqual({ action: 'person.admin_granted', actor: 'operator' });
  });

  it('the last administrator cannot be removed, disabled or deleted', async () => {
    for (const [verb, args] of [
      ['admin', ['--revoke']],
      ['disable', ['--yes']],
      ['delete', ['--yes']],
    ] as const) {
      const refused = await refusal(people(t, verb, ['--username', 'root_a', ...args]));
      expect(refused, verb).toBeInstanceOf(ApiError);
      expect(JSON.stringify((refused as ApiError).errors)).toContain('last administrator');
    }
    expect(await people(t, 'show', ['--username', 'root_a'])).toMatchObject({ admin: true, disabled: false });
  });

  it('GATEHOUSE_ADMINS makes the named people administrators once (a second start is a no-op) and reports unknown names', async () => {
    const first = await applyConfiguredAdmins(t.services, operatorActing(), ['root_b', 'ghost_person']);
    expect(first).toEqual({ granted: ['root_b'], unknown: ['ghost_person'] });
    const second = await applyConfiguredAdmins(t.services, operatorActing(), ['root_b']);
    expect(second).toEqual({ granted: [], unknown: [] });
  });

  it('requireAdmin: an administrator with a second factor, signed in with it recently; otherwise a reason the page can show', async () => {
    const plain = await given.person(t);
    const session = await startSession(t.services, personActingOf(plain.id), 'vitest');
    const notAdmin = await requireAdmin(t.services, personActingOf(plain.id), { token: session.token, signedInAt: t.clock.now() });
    expect(notAdmin).toMatchObject({ ok: false, why: 'not-admin' });

    const rootB = await t.services.db.selectFrom('users').select('id').where('username_key', '=', 'root_b').executeTakeFirstOrThrow();
    const adminId = String(rootB.id);
    const adminSession = await startSession(t.services, personActingOf(adminId), 'vitest');
    const noFactor = await requireAdmin(t.services, personActingOf(adminId), { token: adminSession.token, signedInAt: t.clock.now() });
    expect(noFactor).toMatchObject({ ok: false, why: 'no-second-factor' });
    expect((noFactor as { message: string }).message).toContain('second factor');
  });

  it('requireAdmin sends an administrator whose sign-in is old, or was without the second factor, to sign in again', async () => {
    const admin = await given.person(t, { username: 'root_c' });
    const adminId = admin.id;
    // An authenticator app enrolled through the service, as Settings → Security enrols it (issue #38 §4).
    const { secret } = await startTotpEnrolment(t.services, personActingOf(adminId));
    await confirmTotp(t.services, personActingOf(adminId), new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: t.clock.now() }));
    await people(t, 'admin', ['--username', 'root_c']);
    const session = await startSession(t.services, personActingOf(adminId), 'vitest');
    const passwordOnly = await requireAdmin(t.services, personActingOf(adminId), { token: session.token, signedInAt: t.clock.now() });
    expect(passwordOnly).toMatchObject({ ok: false, why: 'sign-in-again' });
    await t.services.db.transaction().execute((trx) => recordSessionMethods(trx, session.token, adminId, ['pwd', 'otp', 'mfa'], t.clock.now()));
    const ok = await requireAdmin(t.services, personActingOf(adminId), { token: session.token, signedInAt: t.clock.now() });
    expect(ok).toMatchObject({ ok: true });
    t.clock.advance(31 * MINUTE);
    const stale = await requireAdmin(t.services, personActingOf(adminId), { token: session.token, signedInAt: t.clock.now() - 31 * MINUTE });
    expect(stale).toMatchObject({ ok: false, why: 'sign-in-again' });
  });
});

describe('issue #39: gatehouse people delete', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('says what it removes, needs --yes off a terminal, and deletes through the account deletion (row kept as Deleted account)', async () => {
    const victim = await given.person(t, { username: 'leaving_person' });
    await given.confidentialApp(t, { owner: victim });
    const refused = await refusal(people(t, 'delete', ['--username', 'leaving_person']));
    expect(refused).toBeInstanceOf(CliUsageError);
    expect(refused.message).toContain('removes 1 app');
    const deleted = await people(t, 'delete', ['--username', 'leaving_person', '--yes']);
    expect(deleted).toMatchObject({ deleted: true, apps: 1 });
    expect(await refusal(people(t, 'show', ['--username', 'leaving_person']))).toBeInstanceOf(ApiError);
    expect(await auditActions(t, victim.id)).toContainEqual({ action: 'account.deleted', actor: 'operator' });
  });

  it('refuses while the person owns servers, naming them', async () => {
    const owner = await given.person(t, { username: 'server_owner' });
    await given.server(t, { owner, name: 'Kept' });
    const refused = await refusal(people(t, 'delete', ['--username', 'server_owner', '--yes']));
    expect(refused.message).toContain('owns 1 server: Kept');
  });

  it('--transfer-servers-to makes that member the owner of each server first, then deletes; a non-member is refused and nothing is deleted', async () => {
    const owner = await given.person(t, { username: 'moving_owner' });
    const heir = await given.person(t, { username: 'the_heir' });
    const server = await given.server(t, { owner, name: 'Handed on' });
    const notMember = await refusal(people(t, 'delete', ['--username', 'moving_owner', '--transfer-servers-to', 'the_heir', '--yes']));
    expect(notMember).toBeInstanceOf(ApiError);
    expect(JSON.stringify((notMember as ApiError).errors)).toContain('is not a member');
    expect(await people(t, 'show', ['--username', 'moving_owner'])).toMatchObject({ username: 'moving_owner' });
    await runCommandNamed(t, 'members add', ['--server', server.id, '--username', 'the_heir']);
    expect(await people(t, 'delete', ['--username', 'moving_owner', '--transfer-servers-to', 'the_heir', '--yes'])).toMatchObject({ deleted: true });
    const after = await t.services.db.selectFrom('servers').select('owner_id').where('id', '=', server.id).executeTakeFirstOrThrow();
    expect(String(after.owner_id)).toBe(heir.id);
  });
});

describe('issue #39: GATEHOUSE_SERVER_CREATION=admins and GATEHOUSE_APP_CREATION=admins', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_SERVER_CREATION: 'admins', GATEHOUSE_APP_CREATION: 'admins' } });
  });
  afterAll(async () => t.close());

  it('a person who is not an administrator is refused with a clear sentence on the pages, and nothing is created', async () => {
    const { agent, person } = await given.signedIn(t);
    const server = await agent.submit('/', '/servers', { name: 'Mine' });
    expect(server.statusCode).toBe(403);
    expect(server.body).toContain('On this instance only administrators can create servers.');
    const app = await agent.submit('/developers/applications', '/developers/applications', { name: 'My app', clientType: 'confidential' });
    expect(app.statusCode).toBe(403);
    expect(app.body).toContain('On this instance only administrators can create apps.');
    const owned = await t.services.db.selectFrom('servers').select('id').where('owner_id', '=', person.id).execute();
    expect(owned).toEqual([]);
  });

  it('an administrator may, and so may the operator', async () => {
    const { agent, person } = await given.signedIn(t);
    await people(t, 'admin', ['--id', person.id]);
    expect((await agent.submit('/', '/servers', { name: 'Admin’s' })).statusCode).toBe(303);
    expect((await agent.submit('/developers/applications', '/developers/applications', { name: 'Admin app', clientType: 'confidential' })).statusCode).toBe(303);
    const created = await given.server(t, { owner: await given.person(t) }).catch((error: unknown) => error);
    expect(created).toBeInstanceOf(ApiError);
    const byOperator = await runCommandNamed(t, 'servers create', ['--owner', person.username, '--name', 'By the operator']);
    expect(byOperator['name']).toBe('By the operator');
  });
});

async function runCommandNamed(t: TestApp, name: string, args: string[]): Promise<Record<string, unknown>> {
  const command = commands.find((c) => c.name === name);
  if (!command) throw new Error(`no command ${name}`);
  return command.run(t.services, parseFlags(args, command.flags).flags);
}

describe('issue #39: GATEHOUSE_SIGN_UPS', () => {
  async function registerWith(t: TestApp, path: string, fields: Record<string, string>): Promise<{ page: number; pageBody: string; post: number; postBody: string }> {
    const agent = new PageAgent(t.app);
    const page = await agent.get(path);
    const post = await agent.postRaw('/register', { name: '', email: '', password: PASSWORD, _csrf: csrfTokenIn(page.body) ?? '', ...fields });
    return { page: page.statusCode, pageBody: page.body, post: post.statusCode, postBody: post.body };
  }
  const count = async (t: TestApp, username: string) => (await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).execute()).length;

  it('closed: the sign-up page says only the operator creates accounts and creates none; the CLI still does', async () => {
    const t = await createTestApp({ env: { GATEHOUSE_SIGN_UPS: 'closed' } });
    try {
      const tried = await registerWith(t, '/register', { username: 'closed_try' });
      expect(tried.page).toBe(403);
      expect(tried.pageBody).toContain('created by its operator only');
      expect(tried.pageBody).not.toContain('name="password"');
      expect(tried.post).toBe(403);
      expect(await count(t, 'closed_try')).toBe(0);
      await people(t, 'create', ['--username', 'closed_cli', '--password', PASSWORD]);
      expect(await count(t, 'closed_cli')).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('invite: refused without an invite; allowed through a server invite link or once through an operator’s sign-up link', async () => {
    const t = await createTestApp({ env: { GATEHOUSE_SIGN_UPS: 'invite' } });
    try {
      const plain = await registerWith(t, '/register', { username: 'no_invite' });
      expect(plain.page).toBe(403);
      expect(plain.pageBody).toContain('you need an invite');
      expect(plain.post).toBe(403);
      expect(await count(t, 'no_invite')).toBe(0);

      const link = await people(t, 'invite', ['--email', 'new@example.org']);
      expect(String(link['signup_url'])).toMatch(/^http:\/\/localhost:8080\/register\?token=ghsu_/);
      const token = new URL(String(link['signup_url'])).searchParams.get('token') as string;
      const stored = await t.services.db.selectFrom('account_tokens').select('token_hash').where('purpose', '=', 'sign-up').execute();
      expect(stored.map((r) => r.token_hash)).not.toContain(token);
      const invited = await registerWith(t, `/register?token=${token}`, { username: 'by_link', token });
      expect(invited.page).toBe(200);
      expect(invited.pageBody).toContain('works once');
      expect(invited.post, invited.postBody).toBe(303);
      expect(await count(t, 'by_link')).toBe(1);
      const again = await registerWith(t, `/register?token=${token}`, { username: 'by_link_again', token });
      expect(again.page).toBe(403);
      expect(again.pageBody).toContain('has been used already');
      expect(again.post).toBe(403);
      expect(await count(t, 'by_link_again')).toBe(0);

      const owner = await given.person(t);
      const server = await given.server(t, { owner });
      const { code } = await createInvite(t.services, personActingOf(owner.id), server.id, {});
      const viaInvite = await registerWith(t, `/register?next=${encodeURIComponent(`/invite/${code}`)}`, { username: 'via_invite', next: `/invite/${code}` });
      expect(viaInvite.page).toBe(200);
      expect(viaInvite.post, viaInvite.postBody).toBe(303);
      expect(await count(t, 'via_invite')).toBe(1);
    } finally {
      await t.close();
    }
  });
});

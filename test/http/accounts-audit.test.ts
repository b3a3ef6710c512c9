import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { peopleCommands } from '../../src/cli/commands/people.js';
import { MINUTE } from '../../src/core/clock.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';

/**
 * Issue #37 §2: accounts emit their security events, and the audit log keeps them with who, from
 * where and in which request — through the real pages. No row holds a password or a session.
 */

const PASSWORD = 'correct horse battery';

interface AuditRow {
  action: string;
  actor_kind: string;
  actor_id: string | null;
  target_id: string | null;
  subject_user_id: string | null;
  address: string | null;
  request_id: string | null;
  reason: string | null;
  options: string | null;
}

describe('the audit log of accounts', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The addresses the audit rows keep are the forwarded ones, as behind the operator's proxy.
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => t.close());

  let counter = 0;
  const fresh = (prefix: string) => `${prefix}${++counter}x${t.services.ids.next().slice(-6)}`;

  async function rows(where: { action?: string; requestId?: string; subject?: string } = {}): Promise<AuditRow[]> {
    let query = t.services.db
      .selectFrom('audit_events')
      .select(['action', 'actor_kind', 'actor_id', 'target_id', 'subject_user_id', 'address', 'request_id', 'reason', 'options'])
      .orderBy('id', 'asc');
    if (where.action !== undefined) query = query.where('action', '=', where.action);
    if (where.requestId !== undefined) query = query.where('request_id', '=', where.requestId);
    if (where.subject !== undefined) query = query.where('subject_user_id', '=', where.subject);
    const found = await query.execute();
    return found.map((r) => ({ ...r, actor_id: r.actor_id === null ? null : String(r.actor_id), subject_user_id: r.subject_user_id === null ? null : String(r.subject_user_id) }));
  }

  async function registered(username: string): Promise<{ agent: PageAgent; id: string }> {
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD });
    expect(res.statusCode, res.body).toBe(303);
    const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username.toLowerCase()).executeTakeFirstOrThrow();
    return { agent, id: String(user.id) };
  }

  async function signIn(agent: PageAgent, username: string, password: string, headers: Record<string, string>) {
    const page = await agent.get('/login');
    return agent.postRaw('/login', { username, password, _csrf: csrfTokenIn(page.body) ?? '' }, headers);
  }

  /** No audit row anywhere holds this text (a password, a session cookie). */
  async function expectNowhere(secret: string): Promise<void> {
    const all = await t.services.db.selectFrom('audit_events').selectAll().execute();
    expect(JSON.stringify(all, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).not.toContain(secret);
  }

  it('signing up records person.created for the new person, by nobody yet, from the request', async () => {
    const username = fresh('newcomer');
    const agent = new PageAgent(t.app);
    const page = await agent.get('/register');
    const res = await agent.postRaw('/register', { username, name: '', email: '', password: PASSWORD, _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-request-id': 'req-signup-1', 'x-forwarded-for': '203.0.113.9' });
    expect(res.statusCode).toBe(303);
    const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
    expect(await rows({ requestId: 'req-signup-1' })).toEqual([
      expect.objectContaining({ action: 'person.created', actor_kind: 'anonymous', actor_id: null, target_id: String(user.id), address: '203.0.113.9' }),
    ]);
    await expectNowhere(PASSWORD);
  });

  it('`gatehouse people create` records person.created by the operator, with no address or request', async () => {
    const command = peopleCommands.find((c) => c.name === 'people create');
    const username = fresh('ops');
    const record = (await command?.run(t.services, parseFlags(['--username', username, '--password', PASSWORD], command.flags).flags)) as { id: string };
    const found = (await rows({ action: 'person.created' })).filter((r) => r.target_id === record.id);
    expect(found).toEqual([expect.objectContaining({ actor_kind: 'operator', actor_id: null, subject_user_id: record.id, address: null, request_id: null })]);
  });

  it('a sign-in records signin.succeeded for the person, with the request’s address and request id', async () => {
    const username = fresh('ada');
    const { id } = await registered(username);
    const res = await signIn(new PageAgent(t.app), username, PASSWORD, { 'x-request-id': 'req-signin-ok', 'x-forwarded-for': '198.51.100.7' });
    expect(res.statusCode).toBe(303);
    const found = await rows({ requestId: 'req-signin-ok' });
    expect(found).toEqual([
      expect.objectContaining({ action: 'signin.succeeded', actor_kind: 'person', actor_id: id, target_id: id, subject_user_id: id, address: '198.51.100.7', request_id: 'req-signin-ok' }),
    ]);
    await expectNowhere(PASSWORD);
    const cookie = res.cookies.find((c) => c.name === 'gh_session');
    expect(cookie?.value).toBeTruthy();
    await expectNowhere(cookie?.value as string);
  });

  it('a wrong password records signin.failed with why and the username tried, never the password', async () => {
    const username = fresh('bo');
    const { id } = await registered(username);
    const wrong = 'not the right password 42';
    const res = await signIn(new PageAgent(t.app), username, wrong, { 'x-request-id': 'req-signin-wrong', 'x-forwarded-for': '198.51.100.8' });
    expect(res.statusCode).toBe(400);
    const [row, ...more] = await rows({ requestId: 'req-signin-wrong' });
    expect(more).toEqual([]);
    expect(row).toMatchObject({ action: 'signin.failed', actor_kind: 'anonymous', target_id: id, subject_user_id: id, address: '198.51.100.8', reason: 'wrong-password' });
    expect(JSON.parse(row?.options ?? '{}')).toEqual({ username });
    await expectNowhere(wrong);
  });

  it('an unknown username records signin.failed as unknown-person, naming nobody', async () => {
    const res = await signIn(new PageAgent(t.app), 'nobody-by-this-name', 'whatever password 1', { 'x-request-id': 'req-signin-unknown' });
    expect(res.statusCode).toBe(400);
    const [row] = await rows({ requestId: 'req-signin-unknown' });
    expect(row).toMatchObject({ action: 'signin.failed', target_id: null, subject_user_id: null, reason: 'unknown-person' });
    expect(JSON.parse(row?.options ?? '{}')).toEqual({ username: 'nobody-by-this-name' });
    await expectNowhere('whatever password 1');
  });

  it('a throttled attempt records signin.failed as throttled, at most once a minute per address', async () => {
    const username = fresh('cy');
    await registered(username);
    const agent = new PageAgent(t.app);
    for (let i = 0; i < 5; i += 1) expect((await signIn(agent, username, `guess number ${i} x`, { 'x-forwarded-for': '192.0.2.50' })).statusCode).toBe(400);
    const res = await signIn(agent, username, PASSWORD, { 'x-request-id': 'req-signin-throttled', 'x-forwarded-for': '192.0.2.50' });
    expect(res.statusCode).toBe(429);
    const [row] = await rows({ requestId: 'req-signin-throttled' });
    expect(row).toMatchObject({ action: 'signin.failed', subject_user_id: null, address: '192.0.2.50', reason: 'throttled' });
    expect(JSON.parse(row?.options ?? '{}')).toEqual({ username });
    await expectNowhere(PASSWORD);
    // A flood of refusals from that address is one row a minute, not one per request.
    for (let i = 0; i < 3; i += 1) expect((await signIn(agent, username, PASSWORD, { 'x-request-id': 'req-signin-throttled-again', 'x-forwarded-for': '192.0.2.50' })).statusCode).toBe(429);
    expect(await rows({ requestId: 'req-signin-throttled-again' })).toEqual([]);
    t.clock.advance(MINUTE);
    expect((await signIn(agent, username, PASSWORD, { 'x-request-id': 'req-signin-throttled-later', 'x-forwarded-for': '192.0.2.50' })).statusCode).toBe(429);
    expect((await rows({ requestId: 'req-signin-throttled-later' })).map((r) => r.reason)).toEqual(['throttled']);
    t.clock.advance(16 * MINUTE);
  });

  it('signing out records session.ended as signed-out for the person', async () => {
    const username = fresh('di');
    const { agent, id } = await registered(username);
    const page = await agent.get('/settings/profile');
    const res = await agent.postRaw('/logout', { _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-request-id': 'req-signout' });
    expect(res.statusCode).toBe(303);
    const [row] = await rows({ requestId: 'req-signout' });
    expect(row).toMatchObject({ action: 'session.ended', actor_kind: 'person', actor_id: id, subject_user_id: id, reason: 'signed-out' });
  });

  it('a password change records password.changed and session.ended for the other sessions, in the request', async () => {
    const username = fresh('ed');
    const { agent, id } = await registered(username);
    // A second browser, signed in elsewhere: the change ends it.
    expect((await signIn(new PageAgent(t.app), username, PASSWORD, {})).statusCode).toBe(303);
    const next = 'another horse battery staple 37';
    const page = await agent.get('/settings/password');
    const res = await agent.postRaw(
      '/settings/password',
      { currentPassword: PASSWORD, newPassword: next, confirmPassword: next, _csrf: csrfTokenIn(page.body) ?? '' },
      { 'x-request-id': 'req-password', 'x-forwarded-for': '198.51.100.20' },
    );
    expect(res.statusCode).toBe(200);
    const found = await rows({ requestId: 'req-password' });
    expect(found.map((r) => [r.action, r.reason])).toEqual([
      ['password.changed', null],
      ['session.ended', 'password-changed'],
    ]);
    for (const row of found) expect(row).toMatchObject({ actor_kind: 'person', actor_id: id, subject_user_id: id, address: '198.51.100.20' });
    await expectNowhere(PASSWORD);
    await expectNowhere(next);
  });

  it('a refused password change (wrong current password) records no password.changed', async () => {
    const username = fresh('flo');
    const { agent, id } = await registered(username);
    const next = 'another horse battery staple 38';
    const page = await agent.get('/settings/password');
    const res = await agent.postRaw(
      '/settings/password',
      { currentPassword: 'wrong current password', newPassword: next, confirmPassword: next, _csrf: csrfTokenIn(page.body) ?? '' },
      { 'x-request-id': 'req-password-refused' },
    );
    expect(res.statusCode).toBe(400);
    expect(await rows({ requestId: 'req-password-refused' })).toEqual([]);
    expect((await rows({ subject: id })).map((r) => r.action)).not.toContain('password.changed');
  });

  it('a profile change is heard as profile.updated with the changed fields, and is not audited', async () => {
    const username = fresh('gus');
    const { agent, id } = await registered(username);
    const heard: unknown[] = [];
    const stop = t.services.bus.on(['profile.updated'], (event, acting) => heard.push({ event, actor: acting.actor }));
    try {
      const page = await agent.get('/settings/profile');
      const res = await agent.postRaw('/settings/profile', { name: 'Gus Renamed', email: '', avatarUrl: '', _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-request-id': 'req-profile' });
      expect(res.statusCode).toBe(303);
    } finally {
      stop();
    }
    expect(heard).toEqual([
      {
        event: { type: 'profile.updated', userId: id, changes: [{ key: 'name', old: username, new: 'Gus Renamed' }] },
        actor: { kind: 'person', id },
      },
    ]);
    expect(await rows({ requestId: 'req-profile' })).toEqual([]);
  });
});

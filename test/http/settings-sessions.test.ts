import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/core/clock.js';
import { deviceOf } from '../../src/modules/accounts/sessions.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';

const PASSWORD = 'correct horse battery';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('Settings → Sessions (issue #38 §5)', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The addresses are the forwarded ones, as behind the operator's proxy.
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => t.close());

  let counter = 0;
  const fresh = () => `sess${++counter}x${t.services.ids.next().slice(-6)}`;

  async function register(username: string): Promise<PageAgent> {
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD });
    expect(res.statusCode, res.body).toBe(303);
    return agent;
  }

  async function signIn(username: string, userAgent: string, address: string): Promise<PageAgent> {
    const agent = new PageAgent(t.app);
    const page = await agent.get('/login');
    const res = await agent.postRaw('/login', { username, password: PASSWORD, _csrf: csrfTokenIn(page.body) ?? '' }, { 'user-agent': userAgent, 'x-forwarded-for': address });
    expect(res.statusCode, res.body).toBe(303);
    return agent;
  }

  async function signedIn(agent: PageAgent): Promise<boolean> {
    return (await agent.get('/settings/profile')).statusCode === 200;
  }

  function cards(body: string): string[] {
    return [...body.matchAll(/<li class="card session[^"]*">([\s\S]*?)<\/li>/g)].map((m) => (m[1] ?? '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
  }

  async function sessionEndedRows(username: string): Promise<number> {
    const user = await t.services.db.selectFrom('users').select('id').where('username_key', '=', username).executeTakeFirstOrThrow();
    const rows = await t.services.db.selectFrom('audit_events').select('action').where('subject_user_id', '=', String(user.id)).where('action', '=', 'session.ended').execute();
    return rows.length;
  }

  it('lists each signed-in session with its device, address, sign-in time and last use, the current one marked', async () => {
    const username = fresh();
    await register(username);
    t.clock.advance(HOUR);
    await signIn(username, FIREFOX_LINUX, '203.0.113.7');
    t.clock.advance(2 * HOUR);
    const phone = await signIn(username, SAFARI_IPHONE, '198.51.100.20');

    const page = await phone.get('/settings/sessions');
    expect(page.statusCode).toBe(200);
    const listed = cards(page.body);
    expect(listed).toHaveLength(3);
    expect(listed[0]).toMatch(/^Safari on iOS This browser Address 198\.51\.100\.20 Signed in \d{4}-\d\d-\d\d \d\d:\d\d UTC Last used .* UTC Sign out to end this session\.$/);
    expect(listed[1]).toMatch(/^Firefox on Linux Address 203\.0\.113\.7 Signed in .* End session$/);
    expect(page.body).toContain('href="/settings/sessions" class="active" aria-current="page">Sessions</a>');
    expect(page.body).toContain('End all other sessions (2)');
  });

  it('records the address of a sign-in on the session', async () => {
    const username = fresh();
    await register(username);
    await signIn(username, CHROME_WINDOWS, '192.0.2.44');
    const rows = await t.services.db.selectFrom('sessions').innerJoin('users', 'users.id', 'sessions.user_id').select(['sessions.address', 'sessions.user_agent']).where('users.username_key', '=', username).execute();
    expect(rows.map((r) => r.address).sort()).toEqual(['127.0.0.1', '192.0.2.44']);
  });

  it('ends one other session: that browser is signed out, this one and the rest stay, and session.ended is recorded', async () => {
    const username = fresh();
    const first = await register(username);
    const laptop = await signIn(username, FIREFOX_LINUX, '203.0.113.7');
    const phone = await signIn(username, SAFARI_IPHONE, '198.51.100.20');
    const page = await phone.get('/settings/sessions');
    const laptopId = /Firefox on Linux[\s\S]*?name="session" value="([A-Za-z0-9_-]+)"/.exec(page.body)?.[1];
    expect(laptopId).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const res = await phone.submit('/settings/sessions', '/settings/sessions/end', { session: laptopId as string });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/settings/sessions?ended=1');
    expect(await signedIn(laptop)).toBe(false);
    expect(await signedIn(phone)).toBe(true);
    expect(await signedIn(first)).toBe(true);
    expect(await sessionEndedRows(username)).toBe(1);
    expect((await phone.get('/settings/sessions?ended=1')).body).toContain('One session was ended.');
  });

  it('ends all other sessions and keeps the current one', async () => {
    const username = fresh();
    const first = await register(username);
    const laptop = await signIn(username, FIREFOX_LINUX, '203.0.113.7');
    const phone = await signIn(username, SAFARI_IPHONE, '198.51.100.20');

    const res = await phone.submit('/settings/sessions', '/settings/sessions/end-others', {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/settings/sessions?ended=2');
    expect(await signedIn(first)).toBe(false);
    expect(await signedIn(laptop)).toBe(false);
    expect(await signedIn(phone)).toBe(true);
    const after = await phone.get('/settings/sessions');
    expect(cards(after.body)).toHaveLength(1);
    expect(after.body).toContain('You are signed in nowhere else.');
    expect(await sessionEndedRows(username)).toBe(1);
  });

  it("refuses someone else's session, an unknown one and the current one beside the list, and ends nothing", async () => {
    const mine = fresh();
    const theirs = fresh();
    const me = await register(mine);
    const them = await register(theirs);
    const other = await signIn(theirs, FIREFOX_LINUX, '203.0.113.9');
    const theirPage = await other.get('/settings/sessions');
    const theirId = /name="session" value="([A-Za-z0-9_-]+)"/.exec(theirPage.body)?.[1] as string;

    const foreign = await me.submit('/settings/sessions', '/settings/sessions/end', { session: theirId });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.body).toContain('That session has already ended.');
    expect(await signedIn(them)).toBe(true);

    const unknown = await me.submit('/settings/sessions', '/settings/sessions/end', { session: 'nonsense' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('That session has already ended.');

    const token = me.cookies.get('gh_session') as string;
    const { hashSecret } = await import('../../src/core/secrets.js');
    const current = await me.submit('/settings/sessions', '/settings/sessions/end', { session: hashSecret(token) });
    expect(current.statusCode).toBe(400);
    expect(current.body).toContain('This is the session you are using: sign out to end it.');
    expect(await signedIn(me)).toBe(true);
    expect(await sessionEndedRows(mine)).toBe(0);
  });

  it('needs a signed-in person and a CSRF token', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/settings/sessions' })).statusCode).toBe(303);
    const agent = await register(fresh());
    const res = await agent.postRaw('/settings/sessions/end-others', {});
    expect(res.statusCode).toBe(403);
  });
});

describe('a session device in a few words', () => {
  it('names the browser and the system', () => {
    expect(deviceOf(FIREFOX_LINUX)).toBe('Firefox on Linux');
    expect(deviceOf(SAFARI_IPHONE)).toBe('Safari on iOS');
    expect(deviceOf(CHROME_WINDOWS)).toBe('Chrome on Windows');
    expect(deviceOf('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0')).toBe('Edge on Windows');
    expect(deviceOf('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36')).toBe('Chrome on Android');
  });

  it('says so when there is none, and keeps an unknown client short', () => {
    expect(deviceOf(null)).toBe('Unknown device');
    expect(deviceOf('gatehouse-probe/1.0 (+ops)')).toBe('gatehouse-probe/1.0');
  });
});

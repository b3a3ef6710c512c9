import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, HOUR, MINUTE } from '../../src/core/clock.js';
import { hashSecret } from '../../src/core/secrets.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PageAgent } from '../support/page-agent.js';

const PASSWORD = 'correct horse battery';

async function register(t: TestApp, username: string): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

async function signIn(t: TestApp, username: string): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/login', '/login', { username, password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

async function isSignedIn(agent: PageAgent): Promise<boolean> {
  const res = await agent.get('/settings/profile');
  return res.statusCode === 200;
}

describe('session cookies over http', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await register(t, 'alice');
  });
  afterAll(async () => t.close());

  it('the session cookie is HttpOnly, SameSite=Lax, path /, not Secure, and lives as long as the idle timeout', async () => {
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/login', '/login', { username: 'alice', password: PASSWORD });
    const cookie = res.cookies.find((c) => c.name === 'gh_session');
    expect(cookie?.value).toMatch(/^ghs_[A-Za-z0-9_-]+$/);
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    expect(cookie?.path).toBe('/');
    expect(cookie?.secure).toBeFalsy();
    expect(cookie?.maxAge).toBe((7 * DAY) / 1000);
    expect(cookie?.value).toMatch(/^ghs_[A-Za-z0-9_-]{43}$/);
  });

  it('the session id is stored only as its SHA-256 hash', async () => {
    const agent = await signIn(t, 'alice');
    const token = agent.cookies.get('gh_session') as string;
    const rows = await t.services.db.selectFrom('sessions').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(token);
    expect(rows.some((row) => row.id_hash === hashSecret(token))).toBe(true);
  });

  it('a made-up session cookie is treated as signed out and cleared', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/settings/profile', headers: { cookie: 'gh_session=ghs_madeup' } });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fsettings%2Fprofile');
    const cleared = res.cookies.find((c) => c.name === 'gh_session');
    expect(cleared?.value).toBe('');
  });
});

describe('session cookies over https', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { GATEHOUSE_BASE_URL: 'https://gatehouse.test' } });
  });
  afterAll(async () => t.close());

  it('the session cookie is Secure with the __Host- prefix when the base URL is https', async () => {
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/register', '/register', { username: 'secure.sam', password: PASSWORD });
    expect(res.statusCode).toBe(303);
    const cookie = res.cookies.find((c) => c.name === '__Host-gh_session');
    expect(cookie?.value).toMatch(/^ghs_[A-Za-z0-9_-]+$/);
    expect(cookie?.secure).toBe(true);
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    expect(cookie?.path).toBe('/');
    expect(cookie?.domain).toBeUndefined();
    expect(res.cookies.find((c) => c.name === 'gh_session')).toBeUndefined();
    expect(await isSignedIn(agent)).toBe(true);
  });

  it('signing out clears the cookie with the same Secure attribute, so browsers accept it', async () => {
    const agent = new PageAgent(t.app);
    await agent.submit('/register', '/register', { username: 'secure.sue', password: PASSWORD });
    const res = await agent.submit('/settings/profile', '/logout', {});
    const cleared = res.cookies.find((c) => c.name === '__Host-gh_session');
    expect(cleared?.value).toBe('');
    expect(cleared?.secure).toBe(true);
    expect(await isSignedIn(agent)).toBe(false);
  });
});

describe('session expiry', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await register(t, 'idler');
  });
  afterAll(async () => t.close());

  it('a session unused for 7 days ends, its row is deleted, and its cookie is cleared', async () => {
    const early = await signIn(t, 'idler');
    t.clock.advance(7 * DAY - MINUTE);
    expect(await isSignedIn(early)).toBe(true);

    const agent = await signIn(t, 'idler');
    const token = agent.cookies.get('gh_session') as string;
    t.clock.advance(7 * DAY);
    const res = await agent.get('/settings/profile');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fsettings%2Fprofile');
    expect(res.cookies.find((c) => c.name === 'gh_session')?.value).toBe('');
    const rows = await t.services.db.selectFrom('sessions').select('id_hash').where('id_hash', '=', hashSecret(token)).execute();
    expect(rows).toHaveLength(0);
    const replay = await t.app.inject({ method: 'GET', url: '/login', headers: { cookie: `gh_session=${token}` } });
    expect(replay.body).not.toContain('You are signed in as');
  });

  it('using a session pushes its idle expiry forward and refreshes the cookie lifetime', async () => {
    const agent = await signIn(t, 'idler');
    for (let use = 0; use < 3; use += 1) {
      t.clock.advance(6 * DAY);
      const res = await agent.get('/settings/profile');
      expect(res.statusCode).toBe(200);
      const renewed = res.cookies.find((c) => c.name === 'gh_session');
      expect(renewed?.maxAge).toBe((7 * DAY) / 1000);
      expect(renewed?.httpOnly).toBe(true);
    }
  });

  it('a session ends 30 days after sign-in however often it is used', async () => {
    const agent = await signIn(t, 'idler');
    for (let i = 0; i < 4; i += 1) {
      t.clock.advance(6 * DAY);
      expect(await isSignedIn(agent)).toBe(true);
    }
    // Day 24: the cookie now lives only until the absolute end (6 days), not a further 7.
    t.clock.advance(5 * DAY + 23 * HOUR);
    const late = await agent.get('/settings/profile');
    expect(late.statusCode).toBe(200);
    expect(late.cookies.find((c) => c.name === 'gh_session')?.maxAge).toBe(HOUR / 1000);
    t.clock.advance(HOUR);
    expect(await isSignedIn(agent)).toBe(false);
  });
});

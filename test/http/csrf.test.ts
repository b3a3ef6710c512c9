import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';

const PASSWORD = 'correct horse battery';

async function register(t: TestApp, username: string): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

async function displayName(t: TestApp, username: string): Promise<string | undefined> {
  const row = await t.services.db.selectFrom('users').select('name').where('username_key', '=', username).executeTakeFirst();
  return row?.name;
}

async function tokenOf(agent: PageAgent): Promise<string> {
  const page = await agent.get('/settings/profile');
  return csrfTokenIn(page.body) as string;
}

describe('CSRF protection of state-changing forms', () => {
  let t: TestApp;
  let alice: PageAgent;
  let bob: PageAgent;
  beforeAll(async () => {
    t = await createTestApp();
    alice = await register(t, 'alice');
    bob = await register(t, 'bob');
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    const res = await alice.submit('/settings/profile', '/settings/profile', { name: 'Alice', avatarUrl: '', email: '' });
    expect(res.statusCode).toBe(303);
  });

  function expectRefused(res: { statusCode: number; body: string; headers: Record<string, unknown> }) {
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('Request refused');
  }

  it('a profile change with the page token and a same-site Origin goes through (the control case)', async () => {
    const res = await alice.postRaw('/settings/profile', { name: 'Changed', _csrf: await tokenOf(alice) }, { origin: 'http://localhost:8080' });
    expect(res.statusCode).toBe(303);
    expect(await displayName(t, 'alice')).toBe('Changed');
  });

  it('a POST without a token answers 403 and changes nothing', async () => {
    expectRefused(await alice.postRaw('/settings/profile', { name: 'Forged' }));
    expect(await displayName(t, 'alice')).toBe('Alice');
  });

  it('a POST with a wrong token answers 403 and changes nothing', async () => {
    const token = await tokenOf(alice);
    const wrong = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    expectRefused(await alice.postRaw('/settings/profile', { name: 'Forged', _csrf: wrong }));
    expectRefused(await alice.postRaw('/settings/profile', { name: 'Forged', _csrf: '' }));
    expect(await displayName(t, 'alice')).toBe('Alice');
  });

  it("a POST with another session's token answers 403 and changes nothing", async () => {
    const bobs = await tokenOf(bob);
    expectRefused(await alice.postRaw('/settings/profile', { name: 'Forged', _csrf: bobs }));
    expect(await displayName(t, 'alice')).toBe('Alice');
  });

  it('a token from before sign-in is not valid after it (tokens are bound to the session)', async () => {
    const agent = new PageAgent(t.app);
    const anonymous = csrfTokenIn((await agent.get('/login')).body) as string;
    await agent.postRaw('/login', { username: 'alice', password: PASSWORD, _csrf: anonymous });
    expect((await agent.get('/settings/profile')).statusCode).toBe(200);
    expectRefused(await agent.postRaw('/settings/profile', { name: 'Forged', _csrf: anonymous }));
    expect(await displayName(t, 'alice')).toBe('Alice');
  });

  it('a POST with a valid token but a cross-site Origin header answers 403 and changes nothing', async () => {
    expectRefused(await alice.postRaw('/settings/profile', { name: 'Forged', _csrf: await tokenOf(alice) }, { origin: 'https://evil.example' }));
    expectRefused(await alice.postRaw('/settings/profile', { name: 'Forged', _csrf: await tokenOf(alice) }, { origin: 'http://localhost:8081' }));
    expect(await displayName(t, 'alice')).toBe('Alice');
  });

  it('sign-out without a token answers 403 and the session stays', async () => {
    expectRefused(await alice.postRaw('/logout', {}));
    expect((await alice.get('/settings/profile')).statusCode).toBe(200);
  });

  it('a password change without a token answers 403 and the password stays', async () => {
    expectRefused(await alice.postRaw('/settings/password', { currentPassword: PASSWORD, newPassword: 'forged password', confirmPassword: 'forged password' }));
    const check = new PageAgent(t.app);
    const res = await check.submit('/login', '/login', { username: 'alice', password: PASSWORD });
    expect(res.statusCode).toBe(303);
  });

  it('sign-in without a token answers 403 and starts no session (no login CSRF)', async () => {
    const agent = new PageAgent(t.app);
    await agent.get('/login');
    const res = await agent.postRaw('/login', { username: 'alice', password: PASSWORD });
    expectRefused(res);
    expect(res.cookies.find((c) => c.name === 'gh_session')).toBeUndefined();
  });

  it('sign-up without a token answers 403 and creates nobody', async () => {
    const agent = new PageAgent(t.app);
    await agent.get('/register');
    expectRefused(await agent.postRaw('/register', { username: 'forged.user', password: PASSWORD }));
    expect(await displayName(t, 'forged.user')).toBeUndefined();
  });

  it('every form on the account pages carries the token', async () => {
    for (const url of ['/settings/profile', '/settings/password']) {
      const body = (await alice.get(url)).body;
      const forms = body.match(/<form method="post"/g) ?? [];
      // A hidden field, or (multipart forms: the token is checked before the streamed body is
      // read) the action URL's _csrf parameter.
      const tokens = body.match(/name="_csrf" value="[^"]+"|<form method="post" action="[^"]*[?&](?:amp;)?_csrf=[^"&]+/g) ?? [];
      expect(forms.length).toBeGreaterThan(0);
      expect(tokens.length).toBe(forms.length);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { peopleCommands } from '../../src/cli/commands/people.js';
import { MINUTE } from '../../src/core/clock.js';
import { ApiError } from '../../src/core/errors.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';
import { actingOf, ANONYMOUS } from '../support/acting.js';

const PASSWORD = 'correct horse battery';

async function countPeople(t: TestApp): Promise<number> {
  const row = await t.services.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function findUser(t: TestApp, username: string) {
  return t.services.db.selectFrom('users').selectAll().where('username_key', '=', username.toLowerCase()).executeTakeFirst();
}

async function register(t: TestApp, username: string, fields: Record<string, string> = {}): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD, ...fields });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

/** Signs in from `address` (the test app trusts X-Forwarded-For from inject's 127.0.0.1). */
async function login(agent: PageAgent, username: string, password: string, extra: { next?: string; address?: string } = {}) {
  const page = await agent.get('/login');
  const token = csrfTokenIn(page.body) ?? '';
  const headers: Record<string, string> = extra.address ? { 'x-forwarded-for': extra.address } : {};
  return agent.postRaw('/login', { username, password, _csrf: token, ...(extra.next !== undefined ? { next: extra.next } : {}) }, headers);
}

async function isSignedIn(agent: PageAgent): Promise<boolean> {
  const res = await agent.get('/settings/profile');
  return res.statusCode === 200;
}

describe('registration', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  async function refused(fields: Record<string, string>, message: string | RegExp) {
    const before = await countPeople(t);
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/register', '/register', { name: '', email: '', password: PASSWORD, ...fields });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toMatch(message);
    expect(res.cookies.find((c) => c.name === 'gh_session')).toBeUndefined();
    expect(await countPeople(t)).toBe(before);
    return res;
  }

  it('a sign-up creates the person, signs them in and goes to next', async () => {
    const agent = new PageAgent(t.app);
    const res = await agent.submit('/register?next=%2Fsettings%2Fprofile', '/register', {
      username: 'Newcomer',
      name: '  Nia Newcomer ',
      email: 'nia@example.com',
      password: PASSWORD,
      next: '/settings/profile',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/settings/profile');
    const profile = await agent.get('/settings/profile');
    expect(profile.statusCode).toBe(200);
    expect(profile.body).toContain('Nia Newcomer');
    expect(profile.body).toContain('@Newcomer');
    const row = await findUser(t, 'newcomer');
    expect(row?.email).toBe('nia@example.com');
    expect(row?.password_hash).toMatch(/^scrypt\$/);
    expect(row?.password_hash).not.toContain(PASSWORD);
  });

  it('the display name defaults to the username and the e-mail is optional', async () => {
    await register(t, 'plain.name');
    const row = await findUser(t, 'plain.name');
    expect(row?.name).toBe('plain.name');
    expect(row?.email).toBeNull();
  });

  it('usernames of 2 and 32 characters are accepted', async () => {
    await register(t, 'ab');
    await register(t, 'x'.repeat(32));
    expect(await findUser(t, 'ab')).toMatchObject({ username: 'ab' });
    expect(await findUser(t, 'x'.repeat(32))).toMatchObject({ username: 'x'.repeat(32) });
  });

  it('usernames of 1 and 33 characters are refused and nothing is created', async () => {
    await refused({ username: 'a' }, 'Must be between 2 and 32 characters long.');
    await refused({ username: 'y'.repeat(33) }, 'Must be between 2 and 32 characters long.');
    expect(await findUser(t, 'a')).toBeUndefined();
  });

  it.each(['al ice', 'alice!', 'al-ice', '.alice', 'alice.', 'al..ice', 'ålice', 'al@ice'])('the username %j is refused for its characters', async (username) => {
    await refused({ username }, 'Use only letters A–Z, digits, underscores (_) and periods (.)');
  });

  it('a username differing only in case from an existing one is taken', async () => {
    await register(t, 'CaseTaken');
    const res = await refused({ username: 'casetAKEN' }, 'Username is unavailable');
    expect(res.body).toContain('value="casetAKEN"');
  });

  it('two sign-ups of one name at once create one person; the other gets USERNAME_ALREADY_TAKEN', async () => {
    const results = await Promise.allSettled([
      registerPerson(t.services, actingOf(ANONYMOUS), { username: 'Racer', password: PASSWORD }),
      registerPerson(t.services, actingOf(ANONYMOUS), { username: 'racer', password: PASSWORD }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    const error = rejected?.reason as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.errors).toEqual({ username: { _errors: [expect.objectContaining({ code: 'USERNAME_ALREADY_TAKEN' })] } });
  });

  it('an empty username is refused', async () => {
    await refused({ username: '   ' }, 'Choose a username.');
  });

  it('a password of 7 characters is refused, of 8 accepted', async () => {
    await refused({ username: 'short.pw', password: '1234567' }, 'Must be between 8 and 256 characters long.');
    // Issue #21 §5: '12345678' itself is now refused as too common.
    await register(t, 'short.pw', { password: 'k3#vQ9!z' });
  });

  it.each([
    ['12345678', 'This is one of the most common passwords, which attackers try first. Choose another one.'],
    ['PassWord1', 'This is one of the most common passwords, which attackers try first. Choose another one.'],
    ['iloveyou', 'This is one of the most common passwords, which attackers try first. Choose another one.'],
    ['          ', 'Must not be only spaces.'],
    ['\u3000\u3000\u3000\u3000\u3000\u3000\u3000\u3000', 'Must not be only spaces.'],
    ['zzzzzzzzzz', 'Must not be one character repeated: it is among the first passwords attackers try.'],
  ])('issue #21 §5 (NIST SP 800-63B §5.1.1.2): the password %j is refused with a clear message', async (password, message) => {
    await refused({ username: 'common.pw', password }, message);
  });

  it('a password longer than 256 characters is refused', async () => {
    await refused({ username: 'long.pw', password: 'p'.repeat(257) }, 'Must be between 8 and 256 characters long.');
  });

  it.each(['not-an-email', 'a@b', 'two words@example.com', 'a@b@example.com', `${'e'.repeat(250)}@example.com`])('the e-mail %j is refused', async (email) => {
    await refused({ username: 'mail.test', email }, /Not a well formed email address|Must be 254 or fewer in length/);
  });

  it('a display name over 32 characters is refused', async () => {
    await refused({ username: 'long.name', name: 'n'.repeat(33) }, 'Must be between 1 and 32 characters long.');
  });

  it('every problem is reported at once, entered values are kept, and the password is never echoed', async () => {
    const res = await refused({ username: 'bad name', name: 'Bad <b>Name</b>', email: 'nope', password: 'short' }, 'Please correct the fields marked below.');
    expect(res.body).toContain('Use only letters');
    expect(res.body).toContain('Not a well formed email address.');
    expect(res.body).toContain('Must be between 8 and 256 characters long.');
    expect(res.body).toContain('value="bad name"');
    expect(res.body).toContain('value="Bad &lt;b&gt;Name&lt;/b&gt;"');
    expect(res.body).toContain('value="nope"');
    expect(res.body).not.toContain('value="short"');
  });

  it('the sign-up page links to sign-in keeping next', async () => {
    const res = await new PageAgent(t.app).get('/register?next=%2Fapp%2Foauth2%2Fauthorize%3Fclient_id%3D1');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('href="/login?next=%2Fapp%2Foauth2%2Fauthorize%3Fclient_id%3D1"');
    expect(res.body).toContain('name="next" value="/app/oauth2/authorize?client_id=1"');
  });
});

describe('sign-in and sign-out', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await register(t, 'alice');
    await register(t, 'bob');
  });
  afterAll(async () => t.close());

  it('the right password signs in and goes to next', async () => {
    const agent = new PageAgent(t.app);
    const res = await login(agent, 'alice', PASSWORD, { next: '/settings/profile' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/settings/profile');
    expect(await isSignedIn(agent)).toBe(true);
  });

  it('the username is matched ignoring case', async () => {
    const agent = new PageAgent(t.app);
    expect((await login(agent, 'ALICE', PASSWORD)).statusCode).toBe(303);
    expect(await isSignedIn(agent)).toBe(true);
  });

  it('a wrong password and an unknown username get the same answer, and no session', async () => {
    const wrong = await login(new PageAgent(t.app), 'alice', 'not the password');
    const unknown = await login(new PageAgent(t.app), 'nobody.here', 'not the password');
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('Incorrect username or password');
      expect(res.cookies.find((c) => c.name === 'gh_session')).toBeUndefined();
    }
    expect(unknown.body.replace(/nobody\.here/g, 'alice').replace(/value="[A-Za-z0-9_-]{43}"/g, '')).toBe(wrong.body.replace(/value="[A-Za-z0-9_-]{43}"/g, ''));
  });

  it('the sign-in form keeps the username but never the password', async () => {
    const res = await login(new PageAgent(t.app), 'alice', 'wrong-password-123');
    expect(res.body).toContain('value="alice"');
    expect(res.body).not.toContain('wrong-password-123');
  });

  it('signing out ends the session on the server and clears the cookie', async () => {
    const agent = new PageAgent(t.app);
    await login(agent, 'bob', PASSWORD);
    const stolen = agent.cookies.get('gh_session') as string;
    const page = await agent.get('/settings/profile');
    const res = await agent.postRaw('/logout', { _csrf: csrfTokenIn(page.body) as string });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/');
    const cleared = res.cookies.find((c) => c.name === 'gh_session');
    expect(cleared?.value).toBe('');
    expect(await isSignedIn(agent)).toBe(false);
    const replay = await t.app.inject({ method: 'GET', url: '/settings/profile', headers: { cookie: `gh_session=${stolen}` } });
    expect(replay.statusCode).toBe(303);
  });

  it('a signed-in person on the sign-in page is told so and can switch account; the old session ends', async () => {
    const agent = new PageAgent(t.app);
    await login(agent, 'alice', PASSWORD);
    const first = agent.cookies.get('gh_session') as string;
    const page = await agent.get('/login?next=%2Fsettings%2Fprofile');
    expect(page.body).toContain('You are signed in as');
    expect(page.body).toContain('@alice');
    expect(page.body).toContain('href="/settings/profile">Continue as @alice');
    const res = await agent.postRaw('/login', { username: 'bob', password: PASSWORD, next: '/settings/profile', _csrf: csrfTokenIn(page.body) as string });
    expect(res.statusCode).toBe(303);
    const second = agent.cookies.get('gh_session') as string;
    expect(second).not.toBe(first);
    expect((await agent.get('/settings/profile')).body).toContain('@bob');
    const old = await t.app.inject({ method: 'GET', url: '/settings/profile', headers: { cookie: `gh_session=${first}` } });
    expect(old.statusCode).toBe(303);
  });

  it('the sign-in page links to sign-up keeping next', async () => {
    const res = await new PageAgent(t.app).get('/login?next=%2Fapp%2Foauth2%2Fauthorize%3Fclient_id%3D1%26scope%3Didentify');
    expect(res.body).toContain('href="/register?next=%2Fapp%2Foauth2%2Fauthorize%3Fclient_id%3D1%26scope%3Didentify"');
    expect(res.body).toContain('name="next" value="/app/oauth2/authorize?client_id=1&amp;scope=identify"');
  });

  it('a same-site next is followed exactly', async () => {
    const next = '/app/oauth2/authorize?client_id=123&scope=identify%20email&state=xyz';
    const res = await login(new PageAgent(t.app), 'alice', PASSWORD, { next });
    expect(res.headers.location).toBe(next);
  });

  it.each(['//evil.example', 'https://evil.example', '/\\evil.example', '/\t/evil.example', '/\n/evil.example', 'evil.example', 'javascript:alert(1)'])(
    'next %j is refused and sign-in goes to /',
    async (next) => {
      const res = await login(new PageAgent(t.app), 'alice', PASSWORD, { next });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/');
    },
  );

  it('an off-site next in the sign-in link is not put in the form', async () => {
    const res = await new PageAgent(t.app).get('/login?next=%2F%2Fevil.example');
    expect(res.body).toContain('name="next" value="/"');
    expect(res.body).not.toContain('evil.example');
  });

  it('signed-out visitors of the settings are sent to sign-in and back', async () => {
    const res = await new PageAgent(t.app).get('/settings/profile');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fsettings%2Fprofile');
    const password = await new PageAgent(t.app).get('/settings/password');
    expect(password.headers.location).toBe('/login?next=%2Fsettings%2Fpassword');
  });
});

describe('sign-in throttling', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
    for (const name of ['target', 'sprayed', 'reset.me', 'ghost.twin', 'besieged']) await register(t, name);
  });
  afterAll(async () => t.close());

  it('after 5 failures for one account from one address, that address is refused even the correct password until the window ends', async () => {
    const address = '198.51.100.1';
    for (let i = 0; i < 5; i += 1) {
      const res = await login(new PageAgent(t.app), 'target', `wrong-${i}-password`, { address });
      expect(res.statusCode).toBe(400);
    }
    const agent = new PageAgent(t.app);
    const refused = await login(agent, 'TARGET', PASSWORD, { address });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(14 * 60);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
    expect(refused.body).toContain('Too many failed sign-in attempts. Try again in 15 minutes.');
    expect(refused.cookies.find((c) => c.name === 'gh_session')).toBeUndefined();
    expect(await isSignedIn(agent)).toBe(false);

    t.clock.advance(15 * MINUTE);
    const again = await login(agent, 'target', PASSWORD, { address });
    expect(again.statusCode).toBe(303);
    expect(await isSignedIn(agent)).toBe(true);
  });

  it('issue #21 §2: wrong passwords from anyone never refuse the owner\'s correct password from another address; the account slows down instead', async () => {
    // 5 wrong passwords from each of 6 addresses: each of them is now refused for this account...
    for (let a = 0; a < 6; a += 1) {
      for (let i = 0; i < 5; i += 1) expect((await login(new PageAgent(t.app), 'besieged', `wrong-${i}`, { address: `198.51.101.${a}` })).statusCode).toBe(400);
      expect((await login(new PageAgent(t.app), 'besieged', PASSWORD, { address: `198.51.101.${a}` })).statusCode).toBe(429);
    }
    // ...while the owner on a new address signs in, after the account's slowdown (30 failures: 0.5 s × 2^4).
    const before = t.clock.sleeps.length;
    const owner = new PageAgent(t.app);
    expect((await login(owner, 'besieged', PASSWORD, { address: '203.0.113.200' })).statusCode).toBe(303);
    expect(await isSignedIn(owner)).toBe(true);
    expect(t.clock.sleeps.slice(before)).toEqual([8000]);
  });

  it('after 20 failures from one address, sign-in from it is refused for every account, while other addresses still work', async () => {
    const address = '203.0.113.7';
    for (let i = 0; i < 20; i += 1) {
      const res = await login(new PageAgent(t.app), `nobody${i}`, 'wrong password', { address });
      expect(res.statusCode).toBe(400);
    }
    const refused = await login(new PageAgent(t.app), 'sprayed', PASSWORD, { address });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);

    const elsewhere = await login(new PageAgent(t.app), 'sprayed', PASSWORD, { address: '203.0.113.8' });
    expect(elsewhere.statusCode).toBe(303);

    t.clock.advance(15 * MINUTE);
    const later = await login(new PageAgent(t.app), 'sprayed', PASSWORD, { address });
    expect(later.statusCode).toBe(303);
  });

  it('the addresses of one IPv6 /64 are counted together', async () => {
    for (let i = 0; i < 20; i += 1) {
      const res = await login(new PageAgent(t.app), `v6nobody${i}`, 'wrong password', { address: `2001:db8:1:2::${(i + 1).toString(16)}` });
      expect(res.statusCode).toBe(400);
    }
    const refused = await login(new PageAgent(t.app), 'sprayed', PASSWORD, { address: '2001:db8:1:2:ffff::1' });
    expect(refused.statusCode).toBe(429);
    const otherBlock = await login(new PageAgent(t.app), 'sprayed', PASSWORD, { address: '2001:db8:1:3::1' });
    expect(otherBlock.statusCode).toBe(303);
  });

  it('a successful sign-in clears the account count', async () => {
    const address = '192.0.2.50';
    for (let i = 0; i < 4; i += 1) expect((await login(new PageAgent(t.app), 'reset.me', 'wrong password', { address })).statusCode).toBe(400);
    expect((await login(new PageAgent(t.app), 'reset.me', PASSWORD, { address })).statusCode).toBe(303);
    for (let i = 0; i < 4; i += 1) expect((await login(new PageAgent(t.app), 'reset.me', 'wrong password', { address })).statusCode).toBe(400);
    expect((await login(new PageAgent(t.app), 'reset.me', PASSWORD, { address })).statusCode).toBe(303);
  });

  it('an unknown username is throttled exactly like a known one', async () => {
    const statuses: number[][] = [[], []];
    for (let i = 0; i < 6; i += 1) {
      statuses[0]?.push((await login(new PageAgent(t.app), 'ghost.twin', 'wrong password', { address: '192.0.2.100' })).statusCode);
      statuses[1]?.push((await login(new PageAgent(t.app), 'ghost.absent', 'wrong password', { address: '192.0.2.110' })).statusCode);
    }
    expect(statuses[0]).toEqual([400, 400, 400, 400, 400, 429]);
    expect(statuses[1]).toEqual(statuses[0]);
  });
});

describe('issue #21 §2: sign-up flood', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1', GATEHOUSE_SIGN_UPS_PER_HOUR: '3' } });
  });
  afterAll(async () => t.close());

  const signUpFrom = async (username: string, address: string, password = PASSWORD) => {
    const agent = new PageAgent(t.app);
    const page = await agent.get('/register');
    return agent.postRaw('/register', { username, name: '', email: '', password, _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-forwarded-for': address });
  };

  it('sign-ups are limited per address per hour (GATEHOUSE_SIGN_UPS_PER_HOUR); refused ones are told when to retry, other addresses are not affected', async () => {
    // An invalid form does not count.
    expect((await signUpFrom('x', '192.0.2.1')).statusCode).toBe(400);
    for (let i = 0; i < 3; i += 1) expect((await signUpFrom(`flood${i}`, '192.0.2.1')).statusCode).toBe(303);
    const refused = await signUpFrom('flood3', '192.0.2.1');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many accounts were created from your network. Try again in 60 minutes.');
    expect((await signUpFrom('elsewhere', '192.0.2.2')).statusCode).toBe(303);
    t.clock.advance(60 * MINUTE);
    expect((await signUpFrom('flood3', '192.0.2.1')).statusCode).toBe(303);
  });
});

describe('profile settings', () => {
  let t: TestApp;
  let agent: PageAgent;
  beforeAll(async () => {
    t = await createTestApp();
    agent = await register(t, 'carol', { email: 'carol@example.com' });
  });
  afterAll(async () => t.close());

  it('the profile page shows the current values and the settings navigation', async () => {
    const res = await agent.get('/settings/profile');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('value="carol"');
    expect(res.body).toContain('value="carol@example.com"');
    expect(res.body).toContain('href="/settings/profile" class="active" aria-current="page"');
    expect(res.body).toContain('href="/settings/authorized-apps"');
  });

  it('display name, avatar URL and e-mail can be changed', async () => {
    const res = await agent.submit('/settings/profile', '/settings/profile', { name: 'Carol C.', avatarUrl: 'https://cdn.example/avatars/carol.png', email: 'c@example.org' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/settings/profile?saved=1');
    const page = await agent.get(res.headers.location as string);
    expect(page.body).toContain('Your profile has been saved.');
    expect(page.body).toContain('Signed in as <strong>Carol C.</strong>');
    expect(page.body).toContain('src="https://cdn.example/avatars/carol.png"');
    const row = await findUser(t, 'carol');
    expect(row).toMatchObject({ name: 'Carol C.', avatar_url: 'https://cdn.example/avatars/carol.png', email: 'c@example.org' });
  });

  it('emptying the fields restores the username as name and removes avatar and e-mail', async () => {
    const res = await agent.submit('/settings/profile', '/settings/profile', { name: ' ', avatarUrl: '', email: '' });
    expect(res.statusCode).toBe(303);
    const row = await findUser(t, 'carol');
    expect(row).toMatchObject({ name: 'carol', avatar_url: null, email: null });
  });

  it.each([
    [{ avatarUrl: 'http://cdn.example/a.png' }, 'Must be an https:// URL.'],
    [{ avatarUrl: 'javascript:alert(1)' }, 'Must be an https:// URL.'],
    [{ avatarUrl: 'not a url' }, 'Not a well formed URL.'],
    [{ avatarUrl: `https://cdn.example/${'a'.repeat(2048)}` }, 'Must be 2048 or fewer in length.'],
    [{ name: 'n'.repeat(33) }, 'Must be between 1 and 32 characters long.'],
    [{ name: 'Evil\u202eName' }, 'Must not contain control or invisible characters.'],
    [{ email: 'nope' }, 'Not a well formed email address.'],
  ])('bad input %j is refused with its message and nothing changes', async (fields, message) => {
    await agent.submit('/settings/profile', '/settings/profile', { name: 'Before', avatarUrl: 'https://cdn.example/before.png', email: 'before@example.com' });
    const res = await agent.submit('/settings/profile', '/settings/profile', { name: 'After', avatarUrl: '', email: 'after@example.com', ...fields });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(message);
    expect(res.body).toContain('Nothing was saved.');
    const row = await findUser(t, 'carol');
    expect(row).toMatchObject({ name: 'Before', avatar_url: 'https://cdn.example/before.png', email: 'before@example.com' });
  });
});

describe('password change', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('changing the password signs out every other session, keeps this one, and only the new password works', async () => {
    const here = await register(t, 'dave');
    const elsewhere = new PageAgent(t.app);
    await login(elsewhere, 'dave', PASSWORD);
    expect(await isSignedIn(elsewhere)).toBe(true);

    const res = await here.submit('/settings/password', '/settings/password', { currentPassword: PASSWORD, newPassword: 'a brand new secret', confirmPassword: 'a brand new secret' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Your password has been changed. One other session was signed out.');
    expect(await isSignedIn(here)).toBe(true);
    expect(await isSignedIn(elsewhere)).toBe(false);
    expect((await login(new PageAgent(t.app), 'dave', PASSWORD)).statusCode).toBe(400);
    expect((await login(new PageAgent(t.app), 'dave', 'a brand new secret')).statusCode).toBe(303);
  });

  it.each([
    [{ currentPassword: 'not my password', newPassword: 'another new one', confirmPassword: 'another new one' }, 'Password does not match.'],
    [{ currentPassword: PASSWORD, newPassword: 'short', confirmPassword: 'short' }, 'Must be between 8 and 256 characters long.'],
    [{ currentPassword: PASSWORD, newPassword: 'another new one', confirmPassword: 'another new on' }, 'The two new passwords do not match.'],
    [{ currentPassword: PASSWORD, newPassword: PASSWORD, confirmPassword: PASSWORD }, 'The new password must differ from the current one.'],
  ])('a refused change (%j) changes nothing and ends no session', async (fields, message) => {
    const username = `erin${Math.floor(Math.random() * 1e6)}`;
    const here = await register(t, username);
    const elsewhere = new PageAgent(t.app);
    await login(elsewhere, username, PASSWORD);
    const res = await here.submit('/settings/password', '/settings/password', fields);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(message);
    expect(res.body).not.toContain(PASSWORD);
    expect(await isSignedIn(elsewhere)).toBe(true);
    expect((await login(new PageAgent(t.app), username, PASSWORD)).statusCode).toBe(303);
  });
});

describe('gatehouse people create', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const command = peopleCommands.find((c) => c.name === 'people create');

  it('creates a person who can then sign in, and returns the record', async () => {
    const { flags } = parseFlags(['--username', 'operator', '--password', PASSWORD, '--email', 'ops@example.com', '--name', 'Ops'], command?.flags ?? {});
    const record = await command?.run(t.services, flags);
    expect(record).toEqual({ id: expect.stringMatching(/^\d+$/), username: 'operator', global_name: 'Ops', email: 'ops@example.com', created_at: new Date(t.clock.now()).toISOString() });
    expect((await login(new PageAgent(t.app), 'operator', PASSWORD)).statusCode).toBe(303);
  });

  it('refuses bad input with every field error and creates nothing', async () => {
    const before = await countPeople(t);
    const { flags } = parseFlags(['--username', 'x', '--password', 'short', '--email', 'bad'], command?.flags ?? {});
    const error = await command?.run(t.services, flags).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(Object.keys((error as ApiError).errors ?? {}).sort()).toEqual(['email', 'password', 'username']);
    expect(await countPeople(t)).toBe(before);
  });
});

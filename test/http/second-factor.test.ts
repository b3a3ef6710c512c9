import { Writable } from 'node:stream';
import * as OTPAuth from 'otpauth';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { peopleCommands } from '../../src/cli/commands/people.js';
import { ApiError } from '../../src/core/errors.js';
import { SECOND } from '../../src/core/clock.js';
import { loggerOptions } from '../../src/http/logging.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PageAgent } from '../support/page-agent.js';

const PASSWORD = 'correct horse battery';

async function register(t: TestApp, username: string): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: '', email: '', password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

/** The code an authenticator app with this secret shows at the test clock's time. */
function codeAt(t: TestApp, secret: string): string {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: t.clock.now() });
}

function secretOn(markup: string): string {
  const shown = /<code class="secret">([^<]+)<\/code>/.exec(markup)?.[1];
  if (!shown) throw new Error('no secret on the enrolment page');
  return shown.replace(/\s/g, '');
}

function recoveryCodesOn(markup: string): string[] {
  return [...markup.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1] as string);
}

/** Registers a person and turns TOTP on through Settings → Security; the secret and the recovery codes. */
async function enrolled(t: TestApp, username: string): Promise<{ agent: PageAgent; secret: string; codes: string[] }> {
  const agent = await register(t, username);
  const enrol = await agent.submit('/settings/security', '/settings/security/totp', {});
  expect(enrol.statusCode, enrol.body).toBe(200);
  expect(enrol.body).toContain('<svg');
  const secret = secretOn(enrol.body);
  const confirmed = await agent.submit('/settings/security', '/settings/security/totp/confirm', { code: codeAt(t, secret) });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  const codes = recoveryCodesOn(confirmed.body);
  expect(codes).toHaveLength(10);
  // The code used to confirm cannot be used again: the next sign-in waits for the next step.
  t.clock.advance(30 * SECOND);
  return { agent, secret, codes };
}

async function passwordStep(t: TestApp, username: string): Promise<{ agent: PageAgent; location: string }> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/login', '/login', { username, password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  return { agent, location: String(res.headers.location) };
}

async function signedIn(agent: PageAgent): Promise<boolean> {
  return (await agent.get('/settings/profile')).statusCode === 200;
}

describe('TOTP second factor', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('enrolment is confirmed with a code before it is on; a wrong confirming code changes nothing', async () => {
    const agent = await register(t, 'wrong.confirm');
    const enrol = await agent.submit('/settings/security', '/settings/security/totp', {});
    const refused = await agent.submit('/settings/security', '/settings/security/totp/confirm', { code: '000000' === codeAt(t, secretOn(enrol.body)) ? '111111' : '000000' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('That code is not right');
    const security = await agent.get('/settings/security');
    expect(security.body).toContain('Set up an authenticator app');
    const { location } = await passwordStep(t, 'wrong.confirm');
    expect(location).toBe('/');
  });

  it('the seed is stored sealed, never in the clear, and recovery codes only as hashes', async () => {
    const { secret, codes } = await enrolled(t, 'sealed.sue');
    const totpRows = await t.services.db.selectFrom('mfa_totp').selectAll().execute();
    const codeRows = await t.services.db.selectFrom('mfa_recovery_codes').selectAll().execute();
    const stored = JSON.stringify([totpRows, codeRows], (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    expect(stored).not.toContain(secret);
    for (const code of codes) expect(stored).not.toContain(code);
    const audit = JSON.stringify(await t.services.db.selectFrom('audit_events').selectAll().execute(), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    expect(audit).not.toContain(secret);
    for (const code of codes) expect(audit).not.toContain(code);
  });

  it('sign-in asks for the second factor after the password, and the password alone is no session', async () => {
    const { secret } = await enrolled(t, 'two.step');
    const { agent, location } = await passwordStep(t, 'two.step');
    expect(location).toBe('/login/second-factor');
    expect(await signedIn(agent)).toBe(false);
    const page = await agent.get('/login/second-factor');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('@two.step');
    const done = await agent.submit('/login/second-factor', '/login/second-factor', { code: codeAt(t, secret) });
    expect(done.statusCode, done.body).toBe(303);
    expect(await signedIn(agent)).toBe(true);
  });

  it('a wrong code is refused beside the form, and audited as signin.second_factor_failed', async () => {
    const { secret } = await enrolled(t, 'wrong.code');
    const { agent } = await passwordStep(t, 'wrong.code');
    const right = codeAt(t, secret);
    const wrong = right === '123456' ? '654321' : '123456';
    const refused = await agent.submit('/login/second-factor', '/login/second-factor', { code: wrong });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('That code is not right');
    expect(await signedIn(agent)).toBe(false);
    const rows = await t.services.db.selectFrom('audit_events').select('action').where('action', '=', 'signin.second_factor_failed').execute();
    expect(rows.length).toBeGreaterThan(0);
  });

  it('a code works once: replaying it in another sign-in is refused', async () => {
    const { secret } = await enrolled(t, 'replay.ray');
    const first = await passwordStep(t, 'replay.ray');
    const code = codeAt(t, secret);
    expect((await first.agent.submit('/login/second-factor', '/login/second-factor', { code })).statusCode).toBe(303);
    const second = await passwordStep(t, 'replay.ray');
    const replayed = await second.agent.submit('/login/second-factor', '/login/second-factor', { code });
    expect(replayed.statusCode).toBe(400);
    expect(await signedIn(second.agent)).toBe(false);
  });

  it('a recovery code signs in once, and is refused the second time', async () => {
    const { codes } = await enrolled(t, 'recover.rita');
    const code = codes[0] as string;
    const first = await passwordStep(t, 'recover.rita');
    expect((await first.agent.submit('/login/second-factor', '/login/second-factor', { code })).statusCode).toBe(303);
    expect(await signedIn(first.agent)).toBe(true);
    const second = await passwordStep(t, 'recover.rita');
    expect((await second.agent.submit('/login/second-factor', '/login/second-factor', { code })).statusCode).toBe(400);
    const used = await t.services.db.selectFrom('audit_events').select('action').where('action', '=', 'mfa.recovery_code_used').execute();
    expect(used).toHaveLength(1);
  });

  it('the sign-in methods of a session are forgotten once no session of that age can still exist', async () => {
    const { secret } = await enrolled(t, 'old.olga');
    const first = await passwordStep(t, 'old.olga');
    expect((await first.agent.submit('/login/second-factor', '/login/second-factor', { code: codeAt(t, secret) })).statusCode).toBe(303);
    const person = await t.services.db.selectFrom('users').select('id').where('username', '=', 'old.olga').executeTakeFirstOrThrow();
    const rows = () => t.services.db.selectFrom('mfa_session_methods').select('created_at').where('user_id', '=', String(person.id)).execute();
    expect(await rows()).toHaveLength(1);
    t.clock.advance(t.services.config.sessionMaxAgeMs + SECOND);
    const later = await passwordStep(t, 'old.olga');
    expect((await later.agent.submit('/login/second-factor', '/login/second-factor', { code: codeAt(t, secret) })).statusCode).toBe(303);
    expect(await rows()).toHaveLength(1);
  });

  it('a pending sign-in expires after five minutes', async () => {
    const { secret } = await enrolled(t, 'slow.sam');
    const { agent } = await passwordStep(t, 'slow.sam');
    await agent.get('/login/second-factor');
    t.clock.advance(5 * 60 * SECOND + SECOND);
    const late = await agent.postRaw('/login/second-factor', { code: codeAt(t, secret), _csrf: 'x' });
    expect([400, 403]).toContain(late.statusCode);
    expect(await signedIn(agent)).toBe(false);
  });

  it('the pending sign-in is bound to the browser: another browser without its cookie gets no session', async () => {
    await enrolled(t, 'bound.bo');
    await passwordStep(t, 'bound.bo');
    const other = new PageAgent(t.app);
    const page = await other.get('/login/second-factor');
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/login');
  });

  it('turning TOTP off asks for the password and a current code; a wrong password changes nothing', async () => {
    const { agent, secret } = await enrolled(t, 'remove.rob');
    const refused = await agent.submit('/settings/security/totp/remove', '/settings/security/totp/remove', { password: 'not the password', code: codeAt(t, secret) });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Password does not match.');
    expect((await passwordStep(t, 'remove.rob')).location).toBe('/login/second-factor');
    const removed = await agent.submit('/settings/security/totp/remove', '/settings/security/totp/remove', { password: PASSWORD, code: codeAt(t, secret) });
    expect(removed.statusCode, removed.body).toBe(303);
    expect((await passwordStep(t, 'remove.rob')).location).toBe('/');
  });

  it('regenerating recovery codes makes a new set of ten and ends the old set', async () => {
    const { agent, secret, codes } = await enrolled(t, 'regen.rae');
    const made = await agent.submit('/settings/security/recovery-codes', '/settings/security/recovery-codes', { password: PASSWORD, code: codeAt(t, secret) });
    expect(made.statusCode, made.body).toBe(200);
    const fresh = recoveryCodesOn(made.body);
    expect(fresh).toHaveLength(10);
    const old = await passwordStep(t, 'regen.rae');
    expect((await old.agent.submit('/login/second-factor', '/login/second-factor', { code: codes[1] as string })).statusCode).toBe(400);
    const next = await passwordStep(t, 'regen.rae');
    expect((await next.agent.submit('/login/second-factor', '/login/second-factor', { code: fresh[0] as string })).statusCode).toBe(303);
  });

  it('Settings → Security shows two-factor as on, and the person sees its events in their history', async () => {
    const { agent } = await enrolled(t, 'history.hal');
    const page = await agent.get('/settings/security');
    expect(page.body).toContain('Two-factor authentication');
    expect(page.body).toContain('10 unused recovery codes left');
    expect(page.body).toContain('Two-factor authentication was turned on');
  });

  it('`gatehouse people reset-mfa` removes the authenticator and the codes: the next sign-in asks for the password only, audited as mfa.reset_by_operator', async () => {
    await enrolled(t, 'lost.phone');
    const command = peopleCommands.find((c) => c.name === 'people reset-mfa');
    const { flags } = parseFlags(['--username', 'lost.phone'], command?.flags ?? {});
    const record = (await command?.run(t.services, flags)) as { id: string; removed: boolean };
    expect(record).toMatchObject({ username: 'lost.phone', removed: true });
    expect((await passwordStep(t, 'lost.phone')).location).toBe('/');
    expect(await t.services.db.selectFrom('mfa_recovery_codes').select('code_hash').where('user_id', '=', record.id).execute()).toEqual([]);
    const audited = await t.services.db.selectFrom('audit_events').select(['actor_kind', 'subject_user_id']).where('action', '=', 'mfa.reset_by_operator').execute();
    expect(audited).toEqual([expect.objectContaining({ actor_kind: 'operator' })]);
  });

  it('`gatehouse people reset-mfa` refuses an unknown username', async () => {
    const command = peopleCommands.find((c) => c.name === 'people reset-mfa');
    const { flags } = parseFlags(['--username', 'nobody.here'], command?.flags ?? {});
    await expect(command?.run(t.services, flags)).rejects.toBeInstanceOf(ApiError);
  });
});

describe('second-factor secrets stay out of the logs', () => {
  const lines: string[] = [];
  let t: TestApp;
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    t = await createTestApp({ logger: pino(loggerOptions('trace'), stream) });
  });
  afterAll(async () => t.close());

  it('the seed, the recovery codes and the pending sign-in cookie appear in no log line, at trace level', async () => {
    const { secret, codes } = await enrolled(t, 'quiet.quinn');
    const { agent } = await passwordStep(t, 'quiet.quinn');
    const pending = agent.cookies.get('gh_pending') as string;
    expect(pending).toBeTruthy();
    expect((await agent.submit('/login/second-factor', '/login/second-factor', { code: codes[0] as string })).statusCode).toBe(303);
    const wrong = await passwordStep(t, 'quiet.quinn');
    await wrong.agent.submit('/login/second-factor', '/login/second-factor', { code: codes[0] as string });
    const text = lines.join('');
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(pending);
    for (const code of codes) expect(text).not.toContain(code);
  });
});

describe('the second step is throttled like a password', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('wrong codes count against the account and address: a correct password does not reset them, and once five tries are spent that address is refused with 429', async () => {
    const { secret } = await enrolled(t, 'guessed.gus');
    const right = codeAt(t, secret);
    const wrong = right === '123456' ? '654321' : '123456';
    let refusedAfter: number | undefined;
    for (let i = 0; i < 5 && refusedAfter === undefined; i += 1) {
      const agent = new PageAgent(t.app);
      const password = await agent.submit('/login', '/login', { username: 'guessed.gus', password: PASSWORD });
      if (password.statusCode === 429) refusedAfter = i;
      else if ((await agent.submit('/login/second-factor', '/login/second-factor', { code: wrong })).statusCode === 429) refusedAfter = i;
    }
    // Each password and each code is one try of the (account, address) pair's five.
    expect(refusedAfter).toBeDefined();
    const agent = new PageAgent(t.app);
    const refused = await agent.submit('/login', '/login', { username: 'guessed.gus', password: PASSWORD });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });
});

import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { peopleCommands } from '../../src/cli/commands/people.js';
import { MINUTE } from '../../src/core/clock.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sendMailNow, startMailSink, type MailSink, type ReceivedMail } from '../support/mail-sink.js';
import { csrfTokenIn, PageAgent } from '../support/page-agent.js';

/** Issue #38 §3: "Forgot password?" and the operator's password commands, through real mail (the SMTP sink). */

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';
const ENV = { TRUST_PROXY: '127.0.0.1', GATEHOUSE_BASE_URL: 'https://gate.example', GATEHOUSE_SERVICE_NAME: 'Gatehouse Test', GATEHOUSE_MAIL_FROM: 'accounts@gate.example' };

let sink: MailSink;
let t: TestApp;
const logLines: string[] = [];

beforeAll(async () => {
  sink = await startMailSink();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: sink.url }, logger: pino({ level: 'debug' }, stream) });
});
afterAll(async () => {
  await t.close();
  await sink.stop();
});

let addressCounter = 0;
/** Each test asks from its own address, so the per-address throttle of one test does not reach another. */
function nextAddress(): string {
  addressCounter += 1;
  return `198.51.100.${addressCounter}`;
}

async function register(username: string, email: string): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: '', email, password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

async function forgot(email: string, address = nextAddress()) {
  const agent = new PageAgent(t.app);
  const page = await agent.get('/forgot-password');
  return agent.postRaw('/forgot-password', { email, _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-forwarded-for': address });
}

async function resetMail(address: string): Promise<ReceivedMail> {
  await sendMailNow(t.services);
  return sink.waitForMail((m) => m.to.includes(address) && /Reset/.test(m.subject));
}

function resetLink(mail: ReceivedMail): string {
  const match = /https:\/\/gate\.example(\/reset-password\?token=[A-Za-z0-9_%-]+)/.exec(mail.text);
  if (!match?.[1]) throw new Error(`no reset link in: ${mail.text}`);
  return match[1];
}

function tokenOf(link: string): string {
  return decodeURIComponent(new URL(link, 'https://x').searchParams.get('token') ?? '');
}

/** Posts the reset form of `link`, with a CSRF token from the sign-in page (a refused link's page has no form). */
async function setPassword(link: string, newPassword: string, confirmPassword = newPassword) {
  const agent = new PageAgent(t.app);
  const page = await agent.get('/login');
  return agent.postRaw('/reset-password', { token: tokenOf(link), newPassword, confirmPassword, _csrf: csrfTokenIn(page.body) ?? '' });
}

async function signIn(username: string, password: string) {
  const agent = new PageAgent(t.app);
  const page = await agent.get('/login');
  return agent.postRaw('/login', { username, password, _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-forwarded-for': nextAddress() });
}

async function sessionsOf(username: string): Promise<number> {
  const rows = await t.services.db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select('sessions.id_hash')
    .where('users.username_key', '=', username.toLowerCase())
    .execute();
  return rows.length;
}

describe('forgot password (issue #38 §3)', () => {
  it('the sign-in page links to "Forgot password?"', async () => {
    const page = await new PageAgent(t.app).get('/login');
    expect(page.body).toContain('href="/forgot-password"');
  });

  it('gives the same answer for a known and an unknown address, and mails only the known one', async () => {
    await register('rita', 'rita@example.org');
    const known = await forgot('rita@example.org');
    const unknown = await forgot('nobody@example.org');
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    const answer = (body: string) => /<p class="notice" role="status" id="reset-sent">[^<]*<\/p>/.exec(body)?.[0];
    expect(answer(known.body)).toBeDefined();
    expect(answer(known.body)).toBe(answer(unknown.body));
    await resetMail('rita@example.org');
    await sendMailNow(t.services);
    expect(sink.mails.some((m) => m.to.includes('nobody@example.org'))).toBe(false);
  });

  it('the link sets a new password (sign-up rules), ends every session, signs nobody in, and works once', async () => {
    const agent = await register('rolf', 'rolf@example.org');
    expect(await sessionsOf('rolf')).toBe(1);
    await forgot('ROLF@example.org');
    const link = resetLink(await resetMail('rolf@example.org'));
    const form = await new PageAgent(t.app).get(link);
    expect(form.statusCode, form.body).toBe(200);
    expect(form.body).toContain('@rolf');
    // Bad input: refused beside the form, nothing changes and the link still works.
    const short = await setPassword(link, 'short');
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('not changed');
    const mismatch = await setPassword(link, NEW_PASSWORD, 'something else entirely');
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.body).toContain('do not match');
    const done = await setPassword(link, NEW_PASSWORD);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.body).toContain('was changed');
    expect(done.headers['set-cookie'] ?? '').not.toMatch(/gatehouse_session|__Host-/);
    expect(await sessionsOf('rolf')).toBe(0);
    expect((await agent.get('/settings/profile')).statusCode).not.toBe(200);
    expect((await signIn('rolf', PASSWORD)).statusCode).toBe(400);
    expect((await signIn('rolf', NEW_PASSWORD)).statusCode).toBe(303);
    const again = await setPassword(link, 'yet another passphrase');
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('already used');
    const rows = await t.services.db.selectFrom('audit_events').select('action').where('action', 'in', ['password.reset_requested', 'password.reset']).execute();
    expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(['password.reset_requested', 'password.reset']));
  });

  it('a link older than 30 minutes is refused as expired; an unknown or a verification token as not valid', async () => {
    await register('olga', 'olga@example.org');
    await forgot('olga@example.org');
    const link = resetLink(await resetMail('olga@example.org'));
    t.clock.advance(30 * MINUTE + 1);
    const res = await setPassword(link, NEW_PASSWORD);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('expired');
    expect((await signIn('olga', PASSWORD)).statusCode).toBe(303);
    const made = await new PageAgent(t.app).get('/reset-password?token=ghpr_made-up');
    expect(made.statusCode).toBe(400);
    expect(made.body).toContain('not valid');
  });

  it('is throttled per typed e-mail address, known or not (429 with Retry-After), so an account gets at most three reset mails an hour', async () => {
    for (let i = 0; i < 3; i += 1) expect((await forgot('ghost@example.org')).statusCode).toBe(200);
    const fourth = await forgot('ghost@example.org');
    expect(fourth.statusCode).toBe(429);
    expect(fourth.headers['retry-after']).toBeDefined();

    await register('tess', 'tess@example.org');
    await register('tess2', 'Tess@Example.org');
    for (let i = 0; i < 3; i += 1) expect((await forgot(i % 2 ? 'tess@example.org' : 'TESS@example.org')).statusCode).toBe(200);
    await sendMailNow(t.services);
    const before = sink.mails.filter((m) => /Reset/.test(m.subject) && m.to.some((to) => to.toLowerCase() === 'tess@example.org')).length;
    expect(before).toBe(6);
    expect((await forgot('Tess@example.org')).statusCode).toBe(429);
    await sendMailNow(t.services);
    expect(sink.mails.filter((m) => /Reset/.test(m.subject) && m.to.some((to) => to.toLowerCase() === 'tess@example.org')).length).toBe(6);
  });

  it('is throttled per address of the requester', async () => {
    const address = nextAddress();
    for (let i = 0; i < 10; i += 1) expect((await forgot(`spray${i}@example.org`, address)).statusCode).toBe(200);
    expect((await forgot('spray-last@example.org', address)).statusCode).toBe(429);
  });

  it('no reset token reaches the log, the audit rows or the outbox in the clear', async () => {
    await register('lena', 'lena@example.org');
    await forgot('lena@example.org');
    const token = tokenOf(resetLink(await resetMail('lena@example.org')));
    expect(token.startsWith('ghpr_')).toBe(true);
    const text = (rows: unknown) => JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toContain(token);
    expect(text(await t.services.db.selectFrom('audit_events').selectAll().execute())).not.toContain(token);
    expect(text(await t.services.db.selectFrom('account_tokens').selectAll().execute())).not.toContain(token);
  });
});

describe('operator commands (issue #38 §3)', () => {
  it('gatehouse people reset-password prints a one-time reset_url that sets a new password', async () => {
    await register('opr', '');
    const command = peopleCommands.find((c) => c.name === 'people reset-password')!;
    const out = await command.run(t.services, parseFlags(['--username', 'opr'], command.flags).flags);
    const url = String(out['reset_url']);
    expect(url).toMatch(/^https:\/\/gate\.example\/reset-password\?token=ghpr_/);
    const link = url.replace('https://gate.example', '');
    expect((await setPassword(link, NEW_PASSWORD)).statusCode).toBe(200);
    expect((await signIn('opr', NEW_PASSWORD)).statusCode).toBe(303);
    expect((await setPassword(link, 'another passphrase here')).statusCode).toBe(400);
  });

  it('gatehouse people set-password sets the password with sign-up rules and ends every session', async () => {
    await register('ops', '');
    expect(await sessionsOf('ops')).toBe(1);
    const command = peopleCommands.find((c) => c.name === 'people set-password')!;
    await expect(command.run(t.services, parseFlags(['--username', 'ops', '--password', 'short'], command.flags).flags)).rejects.toThrow();
    const out = await command.run(t.services, parseFlags(['--username', 'ops', '--password', NEW_PASSWORD], command.flags).flags);
    expect(out).toMatchObject({ username: 'ops', ended_sessions: 1 });
    expect(await sessionsOf('ops')).toBe(0);
    expect((await signIn('ops', NEW_PASSWORD)).statusCode).toBe(303);
  });
});

describe('without SMTP (issue #38 §1)', () => {
  it('the forgot-password page says this server sends no e-mail and to ask the operator', async () => {
    const plain = await createTestApp();
    try {
      const page = await new PageAgent(plain.app).get('/forgot-password');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('sends no e-mail');
      expect(page.body).toContain('operator');
    } finally {
      await plain.close();
    }
  });
});

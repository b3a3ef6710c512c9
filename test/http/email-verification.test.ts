import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { peopleCommands } from '../../src/cli/commands/people.js';
import { HOUR } from '../../src/core/clock.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sendMailNow, startMailSink, type MailSink, type ReceivedMail } from '../support/mail-sink.js';
import { PageAgent } from '../support/page-agent.js';
import { createClient, getWithBearer, obtainTokens } from '../support/oauth-factory.js';
import { getPersonById } from '../../src/modules/directory/people.service.js';

/** Issue #38 §2: verified e-mail, through real mail (the SMTP sink). */

const PASSWORD = 'correct horse battery';
const ENV = { GATEHOUSE_BASE_URL: 'https://gate.example', GATEHOUSE_SERVICE_NAME: 'Gatehouse Test', GATEHOUSE_MAIL_FROM: 'accounts@gate.example' };

let sink: MailSink;
let t: TestApp;

beforeAll(async () => {
  sink = await startMailSink();
  t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: sink.url } });
});
afterAll(async () => {
  await t.close();
  await sink.stop();
});

async function mailTo(address: string, subject: RegExp): Promise<ReceivedMail> {
  await sendMailNow(t.services);
  return sink.waitForMail((m) => m.to.includes(address) && subject.test(m.subject));
}

/** The path of the link in a mail, e.g. /verify-email?token=… */
function linkIn(mail: ReceivedMail, path: string): string {
  const match = new RegExp(`https://gate\\.example(${path.replace('/', '\\/')}\\?token=[A-Za-z0-9_%-]+)`).exec(mail.text);
  if (!match?.[1]) throw new Error(`no ${path} link in: ${mail.text}`);
  return match[1];
}

async function register(username: string, email: string): Promise<PageAgent> {
  const agent = new PageAgent(t.app);
  const res = await agent.submit('/register', '/register', { username, name: '', email, password: PASSWORD });
  expect(res.statusCode, res.body).toBe(303);
  return agent;
}

async function user(username: string) {
  return t.services.db.selectFrom('users').selectAll().where('username_key', '=', username.toLowerCase()).executeTakeFirstOrThrow();
}

async function useLink(agent: PageAgent, link: string) {
  const token = decodeURIComponent(new URL(link, 'https://x').searchParams.get('token') ?? '');
  return agent.submit(link, '/verify-email', { token });
}

describe('verified e-mail (issue #38 §2)', () => {
  it('sign-up with an address mails a link; until it is used the address is shown as not verified; using it verifies it once', async () => {
    const agent = await register('vera', 'vera@example.org');
    expect(Number((await user('vera')).email_verified)).toBe(0);
    const profile = await agent.get('/settings/profile');
    expect(profile.body).toContain('not verified');
    const mail = await mailTo('vera@example.org', /Verify/);
    expect(mail.text).toContain('Gatehouse Test');
    const link = linkIn(mail, '/verify-email');
    // Opening the link changes nothing (a mail scanner may fetch it): the button does.
    const page = await agent.get(link);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('vera@example.org');
    expect(Number((await user('vera')).email_verified)).toBe(0);
    const done = await useLink(agent, link);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.body).toContain('verified');
    expect(Number((await user('vera')).email_verified)).toBe(1);
    // Single use: the same link again is refused with a clear page, and nothing changes.
    const again = await useLink(agent, link);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('already used');
    const security = await agent.get('/settings/security');
    expect(security.body).toContain('Your e-mail address was verified');
  });

  it('a link older than 24 hours is refused as expired, and the address stays unverified', async () => {
    const agent = await register('exp', 'exp@example.org');
    const link = linkIn(await mailTo('exp@example.org', /Verify/), '/verify-email');
    t.clock.advance(24 * HOUR + 1);
    const page = await agent.get(link);
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('expired');
    const res = await useLink(agent, link);
    expect(res.statusCode).toBe(400);
    expect(Number((await user('exp')).email_verified)).toBe(0);
  });

  it("a link opened while signed in as another person is refused as another account's, and an unknown token as not valid", async () => {
    await register('owner1', 'owner1@example.org');
    const link = linkIn(await mailTo('owner1@example.org', /Verify/), '/verify-email');
    const other = await register('other1', '');
    const res = await other.get(link);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('another account');
    const made = await other.get('/verify-email?token=ghev_not-a-real-token');
    expect(made.statusCode).toBe(400);
    expect(made.body).toContain('not valid');
    expect(Number((await user('owner1')).email_verified)).toBe(0);
  });

  it('changing a verified address takes effect only once the new one is verified, and the old address is told', async () => {
    const agent = await register('chan', 'old@example.org');
    await useLink(agent, linkIn(await mailTo('old@example.org', /Verify/), '/verify-email'));
    const save = await agent.submit('/settings/profile', '/settings/profile', { name: '', avatarUrl: '', email: 'new@example.org' });
    expect(save.statusCode, save.body).toBe(303);
    let row = await user('chan');
    expect(row.email).toBe('old@example.org');
    expect(Number(row.email_verified)).toBe(1);
    expect((await agent.get('/settings/profile')).body).toContain('Waiting for verification');
    const link = linkIn(await mailTo('new@example.org', /Verify/), '/verify-email');
    expect((await useLink(agent, link)).statusCode).toBe(200);
    row = await user('chan');
    expect(row.email).toBe('new@example.org');
    expect(Number(row.email_verified)).toBe(1);
    const told = await mailTo('old@example.org', /changed/);
    expect(told.text).toContain('new@example.org');
    const actions = (await t.services.db.selectFrom('audit_events').select('action').where('subject_user_id', '=', row.id).execute()).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(['email.verification_sent', 'email.verified', 'email.changed']));
  });

  it('a verified address gives `verified: true` on GET /api/v1/users/@me with the email scope', async () => {
    const agent = await register('apiv', 'apiv@example.org');
    const row = await user('apiv');
    const person = (await getPersonById(t.services, String(row.id)))!;
    const app = await createClient(t, { owner: person });
    const before = await obtainTokens(t, app, person, ['identify', 'email']);
    expect((await getWithBearer(t, '/api/v1/users/@me', before.access_token)).json()).toMatchObject({ email: 'apiv@example.org', verified: false });
    await useLink(agent, linkIn(await mailTo('apiv@example.org', /Verify/), '/verify-email'));
    expect((await getWithBearer(t, '/api/v1/users/@me', before.access_token)).json()).toMatchObject({ email: 'apiv@example.org', verified: true });
  });

  it('"Send the verification link again" mails a new link that replaces the older one, at most three an hour', async () => {
    const agent = await register('resend', 'resend@example.org');
    const first = linkIn(await mailTo('resend@example.org', /Verify/), '/verify-email');
    const again = await agent.submit('/settings/profile', '/settings/email/verify', {});
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('A new verification link was sent to resend@example.org');
    await sendMailNow(t.services);
    const links = sink.mails.filter((m) => m.to.includes('resend@example.org')).map((m) => linkIn(m, '/verify-email'));
    expect(links.length).toBe(2);
    // Only the newest link works: the first one was ended by the second.
    expect((await useLink(agent, first)).statusCode).toBe(400);
    expect((await agent.submit('/settings/profile', '/settings/email/verify', {})).statusCode).toBe(200);
    expect((await agent.submit('/settings/profile', '/settings/email/verify', {})).statusCode).toBe(200);
    const refused = await agent.submit('/settings/profile', '/settings/email/verify', {});
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('Too many verification links');
  });

  it('no verification token reaches the audit rows or the outbox in the clear', async () => {
    await register('quiet', 'quiet@example.org');
    const link = linkIn(await mailTo('quiet@example.org', /Verify/), '/verify-email');
    const token = decodeURIComponent(link.split('token=')[1] ?? '');
    const text = (rows: unknown) => JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    expect(token.startsWith('ghev_')).toBe(true);
    expect(text(await t.services.db.selectFrom('audit_events').selectAll().execute())).not.toContain(token);
    const stored = await t.services.db.selectFrom('account_tokens').selectAll().execute();
    expect(stored.length).toBeGreaterThan(0);
    expect(text(stored)).not.toContain(token);
    expect(text(await t.services.db.selectFrom('mail_outbox').selectAll().execute())).not.toContain(token);
  });

  it('gatehouse people verify-email --username marks the address verified', async () => {
    await register('opv', 'opv@example.org');
    const command = peopleCommands.find((c) => c.name === 'people verify-email')!;
    const out = await command.run(t.services, parseFlags(['--username', 'opv'], command.flags).flags);
    expect(out).toMatchObject({ username: 'opv', verified: true });
    expect(Number((await user('opv')).email_verified)).toBe(1);
  });
});

describe('without SMTP (issue #38 §1)', () => {
  it('the profile says this server sends no e-mail and to ask the operator', async () => {
    const plain = await createTestApp();
    try {
      const agent = new PageAgent(plain.app);
      expect((await agent.submit('/register', '/register', { username: 'nomail', name: '', email: 'n@example.org', password: PASSWORD })).statusCode).toBe(303);
      const page = await agent.get('/settings/profile');
      expect(page.body).toContain('sends no e-mail');
      expect(page.body).toContain('operator');
    } finally {
      await plain.close();
    }
  });
});

import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIL_MAX_ATTEMPTS, MAIL_RETRY_BASE_MS, MAIL_RETRY_CAP_MS } from '../../src/modules/mail/mail.js';
import { composeMail, queueMail } from '../../src/modules/mail/mail.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sendMailNow, startMailSink, type MailSink } from '../support/mail-sink.js';
import { freePort } from '../support/ports.js';
import { runCommand } from '../support/directory-fixtures.js';
import { CliUsageError } from '../../src/cli/command.js';

/**
 * Issue #38 §1: mail is queued in the database and sent over real SMTP (the `smtp-server` sink,
 * read back with mailparser) by a worker that retries, so a mail server that is down loses nothing.
 * The app's own worker runs too (every 5 s); assertions read the sink and the outbox, which say
 * the same whichever of the two senders took a mail.
 */

let sink: MailSink | undefined;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  await sink?.stop();
  t = undefined;
  sink = undefined;
});

const ENV = { GATEHOUSE_BASE_URL: 'https://gate.example', GATEHOUSE_SERVICE_NAME: 'Gatehouse Test', GATEHOUSE_MAIL_FROM: 'Gatehouse Test <accounts@gate.example>' };

function verification(app: TestApp, to = 'ada@example.org') {
  const content = composeMail({
    serviceName: app.config.serviceName,
    baseUrl: app.config.baseUrl,
    why: 'you asked to verify this address.',
    lines: ['Hello <ada>,', 'Confirm your address.'],
    link: { text: 'Verify my address', url: '/verify-email?token=ghev_secret-link-token' },
  });
  return { to, subject: 'Verify your address', ...content };
}

async function outbox(app: TestApp) {
  return app.services.db.selectFrom('mail_outbox').selectAll().orderBy('id').execute();
}

describe('mail over SMTP (issue #38 §1)', () => {
  it('a queued mail reaches the SMTP server with its subject, sender, recipient, text and HTML parts and an absolute link', async () => {
    sink = await startMailSink();
    t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: sink.url } });
    await queueMail(t.services, t.services.db, verification(t));
    await sendMailNow(t.services);
    const mail = await sink.waitForMail((m) => m.to.includes('ada@example.org'));
    expect(mail.subject).toBe('Verify your address');
    expect(mail.from).toBe('accounts@gate.example');
    expect(mail.envelopeFrom).toBe('accounts@gate.example');
    expect(mail.envelopeTo).toEqual(['ada@example.org']);
    // Plain text: the service's name, why it was sent, the link absolute on GATEHOUSE_BASE_URL.
    expect(mail.text).toContain('Gatehouse Test');
    expect(mail.text).toContain('You get this mail from Gatehouse Test (https://gate.example) because you asked to verify this address.');
    expect(mail.text).toContain('https://gate.example/verify-email?token=ghev_secret-link-token');
    // Simple HTML, the caller's text escaped.
    expect(mail.html).toContain('href="https://gate.example/verify-email?token=ghev_secret-link-token"');
    expect(mail.html).toContain('Hello &lt;ada&gt;,');
    expect(mail.html).not.toContain('<ada>');
    const [row] = await outbox(t);
    expect(row).toMatchObject({ status: 'sent', recipient: 'ada@example.org', subject: 'Verify your address', last_error: null });
    expect(Number(row?.sent_at)).toBe(t.clock.now());
  });

  it('authenticates with the user and password of GATEHOUSE_SMTP_URL', async () => {
    sink = await startMailSink({ credentials: { user: 'gatehouse', pass: 'p@ss word' } });
    t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: sink.url } });
    await queueMail(t.services, t.services.db, verification(t, 'bob@example.org'));
    await sendMailNow(t.services);
    expect((await sink.waitForMail((m) => m.to.includes('bob@example.org'))).user).toBe('gatehouse');
  });

  it('a mail is queued in the transaction of the change that sends it: rolled back, nothing is sent', async () => {
    sink = await startMailSink();
    t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: sink.url } });
    const app = t;
    await expect(
      app.services.db.transaction().execute(async (trx) => {
        await queueMail(app.services, trx, verification(app, 'rolled@example.org'));
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await queueMail(app.services, app.services.db, verification(app, 'kept@example.org'));
    await sendMailNow(app.services);
    await sink.waitForMail((m) => m.to.includes('kept@example.org'));
    expect((await outbox(app)).map((row) => row.recipient)).toEqual(['kept@example.org']);
    expect(sink.mails.map((m) => m.to[0])).toEqual(['kept@example.org']);
  });

  it('the body is sealed in the outbox and emptied once sent: a link in it is never stored in the clear', async () => {
    sink = await startMailSink();
    t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: sink.url } });
    await queueMail(t.services, t.services.db, verification(t));
    const [queued] = await outbox(t);
    expect(queued?.sealed_body).not.toBe('');
    expect(queued?.sealed_body).not.toContain('secret-link-token');
    expect(Buffer.from(queued?.sealed_body ?? '', 'base64').toString('latin1')).not.toContain('secret-link-token');
    await sendMailNow(t.services);
    await sink.waitForMail();
    const [sent] = await outbox(t);
    expect(sent).toMatchObject({ status: 'sent', sealed_body: '' });
  });

  it('the mail server down: the mail stays queued with the error and a later attempt, and is sent once the server is up', async () => {
    const port = await freePort();
    t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${port}` } });
    await queueMail(t.services, t.services.db, verification(t));
    await sendMailNow(t.services);
    const [waiting] = await outbox(t);
    expect(waiting).toMatchObject({ status: 'queued', sent_at: null, lease_holder: null });
    expect(Number(waiting?.attempts)).toBeGreaterThanOrEqual(1);
    expect(waiting?.last_error).toMatch(/ECONNREFUSED|connect/i);
    expect(Number(waiting?.next_attempt_at)).toBeGreaterThan(t.clock.now());
    expect(waiting?.sealed_body).not.toBe('');

    sink = await startMailSink({ port });
    // Not yet due: nothing is tried before the backoff is over.
    await sendMailNow(t.services);
    expect((await outbox(t))[0]).toMatchObject({ status: 'queued' });
    expect(sink.mails).toHaveLength(0);

    t.clock.advance(MAIL_RETRY_CAP_MS);
    await sendMailNow(t.services);
    const mail = await sink.waitForMail();
    expect(mail.subject).toBe('Verify your address');
    expect((await outbox(t))[0]).toMatchObject({ status: 'sent', sealed_body: '' });
  });

  it(`a mail that keeps failing is marked failed after ${MAIL_MAX_ATTEMPTS} attempts, its body kept sealed, and is not tried again; gatehouse mail retry sends it again`, async () => {
    const port = await freePort();
    t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${port}` } });
    await queueMail(t.services, t.services.db, verification(t));
    const waits: number[] = [];
    for (let round = 0; round < 2 * MAIL_MAX_ATTEMPTS; round += 1) {
      await sendMailNow(t.services);
      const [row] = await outbox(t);
      if (row?.status !== 'queued') break;
      waits.push(Number(row.next_attempt_at) - t.clock.now());
      t.clock.advance(MAIL_RETRY_CAP_MS);
    }
    const [row] = await outbox(t);
    expect(row).toMatchObject({ status: 'failed', sent_at: null });
    // Kept sealed for `gatehouse mail retry`: the link in it never in the clear.
    expect(row?.sealed_body).not.toBe('');
    expect(row?.sealed_body).not.toContain('ghev_secret-link-token');
    expect(Number(row?.attempts)).toBe(MAIL_MAX_ATTEMPTS);
    // Exponential backoff from 30 s, capped at an hour.
    expect(waits[0]).toBe(MAIL_RETRY_BASE_MS);
    expect(waits[1]).toBe(2 * MAIL_RETRY_BASE_MS);
    expect(Math.max(...waits)).toBe(MAIL_RETRY_CAP_MS);

    sink = await startMailSink({ port });
    t.clock.advance(MAIL_RETRY_CAP_MS);
    await sendMailNow(t.services);
    expect(sink.mails).toHaveLength(0);
    expect((await outbox(t))[0]).toMatchObject({ status: 'failed' });

    // Issue #38 §1: the operator puts it back in the queue; the worker sends it with its link.
    await expect(runCommand(t, 'mail retry', [])).rejects.toBeInstanceOf(CliUsageError);
    await expect(runCommand(t, 'mail retry', ['--id', '123456789012345678'])).rejects.toThrow();
    const retried = await runCommand(t, 'mail retry', ['--id', String(row?.id)]);
    expect(retried).toMatchObject({ requeued: 1, ids: [String(row?.id)] });
    expect((await outbox(t))[0]).toMatchObject({ status: 'queued' });
    expect(Number((await outbox(t))[0]?.attempts)).toBe(0);
    await sendMailNow(t.services);
    const mail = await sink.waitForMail();
    expect(mail.text).toContain('https://gate.example/verify-email?token=ghev_secret-link-token');
    expect((await outbox(t))[0]).toMatchObject({ status: 'sent', sealed_body: '' });
    // Sent mail is not failed: retrying it again is refused and changes nothing.
    const refusal = await runCommand(t, 'mail retry', ['--id', String(row?.id)]).catch((error: unknown) => error as { code?: number; errors?: unknown });
    expect(refusal).toMatchObject({ code: 50035 });
    expect(JSON.stringify((refusal as { errors?: unknown }).errors)).toContain('is sent: only failed mail is retried');
    expect(await runCommand(t, 'mail retry', ['--all-failed'])).toMatchObject({ requeued: 0 });
    const audit = await t.services.db.selectFrom('audit_events').select(['action', 'target_id']).where('action', '=', 'mail.requeued').execute();
    expect(audit.map((a) => String(a.target_id))).toEqual([String(row?.id)]);
  });

  it("the app's own worker sends queued mail by itself", async () => {
    sink = await startMailSink();
    t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: sink.url } });
    await queueMail(t.services, t.services.db, verification(t, 'worker@example.org'));
    // No sendMailNow: the worker's next round (within MAIL_POLL_MS) sends it.
    const mail = await sink.waitForMail((m) => m.to.includes('worker@example.org'), 20_000);
    expect(mail.subject).toBe('Verify your address');
  });
});

describe('a mail server that accepts and never answers (issue #38 §1)', () => {
  it('holds only the worker: meanwhile pages answer and more mail is queued', async () => {
    const sockets = new Set<Socket>();
    let hangingUp = false;
    const silent = createServer((socket) => {
      // Once the test is over, a later connection (the app's own worker's) is hung up at once.
      if (hangingUp) return socket.destroy();
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      t = await createTestApp({ env: { ...ENV, GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${port}` } });
      await queueMail(t.services, t.services.db, verification(t, 'first@example.org'));
      const sending = sendMailNow(t.services);
      while (sockets.size === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      // The worker is connected and waiting for a greeting that never comes.
      const page = await t.app.inject({ method: 'GET', url: '/login' });
      expect(page.statusCode).toBe(200);
      await queueMail(t.services, t.services.db, verification(t, 'second@example.org'));
      expect((await outbox(t)).map((row) => row.recipient)).toEqual(['first@example.org', 'second@example.org']);
      // The server hangs up: the attempt fails and the mail waits for the next one.
      for (const socket of sockets) socket.destroy();
      await sending;
      expect((await outbox(t)).map((row) => row.status)).toEqual(['queued', 'queued']);
    } finally {
      hangingUp = true;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

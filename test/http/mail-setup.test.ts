import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CliUsageError } from '../../src/cli/command.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { DAY } from '../../src/core/clock.js';
import { loggerOptions } from '../../src/http/logging.js';
import { composeMail, mailConfigured, queueMail } from '../../src/modules/mail/mail.service.js';
import { runMaintenance } from '../../src/storage/maintenance.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { sendMailNow } from '../support/mail-sink.js';
import { freePort } from '../support/ports.js';

/**
 * Issue #38 §1: a server without GATEHOUSE_SMTP_URL sends nothing and says so; `log:` writes each
 * mail to the log for development; the settings are validated without echoing a password;
 * `gatehouse mail list` shows the queue; the maintenance job prunes what was sent.
 */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function mailFor(app: TestApp, to: string) {
  const content = composeMail({ serviceName: app.config.serviceName, baseUrl: app.config.baseUrl, why: 'you asked to reset your password.', lines: ['Someone asked to reset your password.'], link: { text: 'Choose a new password', url: '/reset-password?token=ghpr_do-not-print' } });
  return { to, subject: 'Reset your password', ...content };
}

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, logger: pino(loggerOptions('info'), stream) };
}

describe('a server without GATEHOUSE_SMTP_URL (issue #38 §1)', () => {
  it('sends no e-mail: mailConfigured is false and queueMail queues nothing', async () => {
    t = await createTestApp();
    expect(t.config.smtpUrl).toBeUndefined();
    expect(mailConfigured(t.services)).toBe(false);
    await queueMail(t.services, t.services.db, mailFor(t, 'ada@example.org'));
    expect(await t.services.db.selectFrom('mail_outbox').selectAll().execute()).toEqual([]);
    expect(await sendMailNow(t.services)).toEqual({ sent: 0, retrying: 0, failed: 0 });
    const listed = await runCommand(t, 'mail list', []);
    expect(listed).toMatchObject({ count: 0, mails: [] });
    expect(String(listed['transport'])).toMatch(/^none/);
  });
});

describe('GATEHOUSE_SMTP_URL=log: (development)', () => {
  it('warns at start, then writes each mail with its absolute links to the log at info and counts it sent', async () => {
    const { lines, logger } = capturedLogger();
    t = await createTestApp({ env: { GATEHOUSE_SMTP_URL: 'log:', GATEHOUSE_BASE_URL: 'https://gate.example' }, logger });
    expect(mailConfigured(t.services)).toBe(true);
    const warning = lines.find((line) => line['level'] === 40 && String(line['msg']).includes('GATEHOUSE_SMTP_URL=log:'));
    expect(warning?.['msg']).toMatch(/not sent/);

    await queueMail(t.services, t.services.db, mailFor(t, 'ada@example.org'));
    await sendMailNow(t.services);
    const written = lines.find((line) => line['level'] === 30 && typeof line['mail'] === 'object');
    expect(written?.['mail']).toMatchObject({ to: 'ada@example.org', subject: 'Reset your password', links: ['https://gate.example/reset-password?token=ghpr_do-not-print', 'https://gate.example'] });
    expect(String((written?.['mail'] as { text: string }).text)).toContain('because you asked to reset your password.');
    expect(await t.services.db.selectFrom('mail_outbox').select('status').execute()).toEqual([{ status: 'sent' }]);
  });
});

describe('the SMTP password', () => {
  it('is never logged: the worker names its server without it at start, and a failed attempt does not carry it', async () => {
    const { lines, logger } = capturedLogger();
    const port = await freePort();
    t = await createTestApp({ env: { GATEHOUSE_SMTP_URL: `smtp://gatehouse:hunter2@127.0.0.1:${port}` }, logger });
    await queueMail(t.services, t.services.db, mailFor(t, 'ada@example.org'));
    await sendMailNow(t.services);
    const started = lines.find((line) => line['msg'] === 'mail worker started');
    expect(started?.['smtp']).toBe(`smtp://gatehouse:***@127.0.0.1:${port}`);
    expect(lines.some((line) => line['msg'] === 'mail not sent; will retry')).toBe(true);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
    expect(JSON.stringify(lines)).not.toContain('do-not-print');
  });
});

describe('mail settings', () => {
  it('accept smtp://, smtps:// and log:, and default the sender to no-reply at the base URL’s host', () => {
    expect(loadConfig({ GATEHOUSE_SMTP_URL: 'smtp://user:pw@mail.example:587' }).smtpUrl).toBe('smtp://user:pw@mail.example:587');
    expect(loadConfig({ GATEHOUSE_SMTP_URL: 'smtps://mail.example' }).smtpUrl).toBe('smtps://mail.example');
    expect(loadConfig({ GATEHOUSE_SMTP_URL: 'log:' }).smtpUrl).toBe('log:');
    expect(loadConfig({}).smtpUrl).toBeUndefined();
    expect(loadConfig({ GATEHOUSE_BASE_URL: 'https://gate.example/sub', GATEHOUSE_SERVICE_NAME: 'Acme Gate' }).mailFrom).toBe('Acme Gate <no-reply@gate.example>');
    expect(loadConfig({ GATEHOUSE_MAIL_FROM: 'accounts@acme.example' }).mailFrom).toBe('accounts@acme.example');
  });

  it('refuse another scheme or a bad sender, naming the scheme and never echoing the password', () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
    const [wrongScheme] = problems({ GATEHOUSE_SMTP_URL: 'http://user:hunter2@mail.example' });
    expect(wrongScheme).toMatch(/GATEHOUSE_SMTP_URL must be an smtp:\/\/.*"http:" URL/);
    expect(wrongScheme).not.toContain('hunter2');
    expect(problems({ GATEHOUSE_SMTP_URL: 'smtp://' })[0]).toMatch(/GATEHOUSE_SMTP_URL/);
    expect(problems({ GATEHOUSE_SMTP_URL: 'mail.example:25' })[0]).toMatch(/GATEHOUSE_SMTP_URL/);
    expect(problems({ GATEHOUSE_MAIL_FROM: 'not an address' })[0]).toMatch(/GATEHOUSE_MAIL_FROM must be an e-mail address/);
    expect(problems({ GATEHOUSE_MAIL_FROM: 'Acme <accounts@acme.example>\r\nBcc: x@y.example' })[0]).toMatch(/GATEHOUSE_MAIL_FROM/);
  });
});

describe('gatehouse mail list', () => {
  it('lists the queue newest first with status, attempts and last error, filtered by --status, without bodies or the SMTP password', async () => {
    const port = await freePort();
    t = await createTestApp({ env: { GATEHOUSE_SMTP_URL: `smtp://gatehouse:hunter2@127.0.0.1:${port}` } });
    await queueMail(t.services, t.services.db, mailFor(t, 'first@example.org'));
    await sendMailNow(t.services);
    await queueMail(t.services, t.services.db, mailFor(t, 'second@example.org'));

    const listed = await runCommand(t, 'mail list', []);
    const printed = JSON.stringify(listed);
    expect(printed).not.toContain('hunter2');
    expect(printed).not.toContain('do-not-print');
    expect(listed['transport']).toBe(`smtp://gatehouse:***@127.0.0.1:${port}`);
    const mails = listed['mails'] as Array<Record<string, unknown>>;
    expect(mails.map((m) => m['to'])).toEqual(['second@example.org', 'first@example.org']);
    expect(mails[1]).toMatchObject({ subject: 'Reset your password', status: 'queued', sent_at: null });
    expect(Number(mails[1]?.['attempts'])).toBeGreaterThanOrEqual(1);
    expect(String(mails[1]?.['last_error'])).toMatch(/ECONNREFUSED|connect/i);
    expect(mails[0]).toMatchObject({ status: 'queued', last_error: null, queued_at: new Date(t.clock.now()).toISOString() });

    expect(((await runCommand(t, 'mail list', ['--status', 'sent'])) as { count: number }).count).toBe(0);
    expect(((await runCommand(t, 'mail list', ['--status', 'queued', '--limit', '1'])) as { mails: Array<{ to: string }> }).mails.map((m) => m.to)).toEqual(['second@example.org']);
    await expect(runCommand(t, 'mail list', ['--status', 'lost'])).rejects.toBeInstanceOf(CliUsageError);
    await expect(runCommand(t, 'mail list', ['--limit', '0'])).rejects.toBeInstanceOf(CliUsageError);
  });
});

describe('the maintenance job and the outbox', () => {
  it('prunes mail sent more than 7 days ago and mail failed more than 30 days ago; keeps the rest', async () => {
    t = await createTestApp({ env: { GATEHOUSE_SMTP_URL: 'log:' } });
    const app = t;
    const now = app.clock.now();
    const rows: Array<[string, string, number]> = [
      ['sent-8-days@example.org', 'sent', now - 8 * DAY],
      ['sent-6-days@example.org', 'sent', now - 6 * DAY],
      ['failed-31-days@example.org', 'failed', now - 31 * DAY],
      ['failed-29-days@example.org', 'failed', now - 29 * DAY],
      ['queued-60-days@example.org', 'queued', now - 60 * DAY],
    ];
    for (const [to, status, at] of rows) {
      await queueMail(app.services, app.services.db, mailFor(app, to));
      await app.services.db
        .updateTable('mail_outbox')
        .set({ status, created_at: at, sent_at: status === 'sent' ? at : null })
        .where('recipient', '=', to)
        .execute();
    }
    const report = await runMaintenance({ db: app.services.db, dialect: app.services.dialect, clock: app.clock, logger: app.services.logger, messageRetentionDays: 0 }, 'maintenance-test');
    expect(report?.purged.mail_outbox).toBe(2);
    const left = (await app.services.db.selectFrom('mail_outbox').select('recipient').execute()).map((row) => row.recipient).sort();
    expect(left).toEqual(['failed-29-days@example.org', 'queued-60-days@example.org', 'sent-6-days@example.org']);
  });
});

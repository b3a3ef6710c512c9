import { afterEach, describe, expect, it } from 'vitest';
import { composeMail, queueMail } from '../../src/modules/mail/mail.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sendMailNow, startMailSink, type MailSink } from '../support/mail-sink.js';

let sink: MailSink | undefined;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  await sink?.stop();
  t = undefined;
  sink = undefined;
});

describe('Mail over SMTP (issue #38 §1)', () => {
  it('a queued mail reaches the SMTP server with its subject, sender, recipient, text and HTML parts and an absolute link', async () => {
    sink = await startMailSink();
    t = await createTestApp({ env: { GATEHOUSE_SMTP_URL: sink.url, GATEHOUSE_BASE_URL: 'https://gate.example', GATEHOUSE_SERVICE_NAME: 'Gatehouse Test', GATEHOUSE_MAIL_FROM: 'Gatehouse Test <accounts@gate.example>' } });
    const content = composeMail({ serviceName: 'Gatehouse Test', baseUrl: t.config.baseUrl, why: 'you asked to verify this address', lines: ['Hello <ada>,', 'Confirm your address.'], link: { text: 'Verify my address', url: '/verify-email?token=abc' } });
    await queueMail(t.services, t.services.db, { to: 'ada@example.org', subject: 'Verify your address', ...content });
    expect(await sendMailNow(t.services)).toEqual({ sent: 1, retrying: 0, failed: 0 });
    const mail = await sink.waitForMail((m) => m.to.includes('ada@example.org'));
    expect(mail.subject).toBe('Verify your address');
    expect(mail.from).toBe('accounts@gate.example');
    expect(mail.envelopeTo).toEqual(['ada@example.org']);
    expect(mail.text).toContain('https://gate.example/verify-email?token=abc');
    expect(mail.text).toContain('Gatehouse Test');
    expect(mail.text).toContain('you asked to verify this address');
    expect(mail.html).toContain('href="https://gate.example/verify-email?token=abc"');
    expect(mail.html).toContain('Hello &lt;ada&gt;,');
  });
});

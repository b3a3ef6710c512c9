import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueMail } from '../../src/modules/mail/mail.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/database.js';
import { sendMailNow, startMailSink, type MailSink } from '../support/mail-sink.js';

/**
 * Issue #38 §1: with several instances on one PostgreSQL database, each mail is sent once. Both
 * instances' workers run, and both are also made to send at the same moment; the claim's
 * FOR UPDATE SKIP LOCKED and the lease keep a mail to one sender. SQLite has one instance.
 */
const canRun = Boolean(TEST_DATABASE_URL);
if (!canRun) console.log('mail-instances: skipped: two instances need one shared database, TEST_DATABASE_URL (PostgreSQL)');

describe.skipIf(!canRun)('mail with two instances on one PostgreSQL database', () => {
  let sink: MailSink;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    sink = await startMailSink();
    const env = { GATEHOUSE_SMTP_URL: sink.url };
    a = await createTestApp({ env });
    b = await createTestApp({ env, sameDatabaseAs: a, clock: a.clock });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await sink?.stop();
  });

  it('each queued mail is sent once, whichever instance takes it', async () => {
    const count = 40;
    for (let i = 0; i < count; i += 1) {
      await queueMail(a.services, a.services.db, { to: `person${i}@example.org`, subject: `Mail ${i}`, text: `Mail number ${i}.`, html: `<p>Mail number ${i}.</p>` });
    }
    const [fromA, fromB] = await Promise.all([sendMailNow(a.services, 'instance a'), sendMailNow(b.services, 'instance b')]);
    // Each finished its own claims; a mail one of the app workers claimed may still be on its way.
    for (let round = 0; round < 100; round += 1) {
      const unsent = await a.services.db.selectFrom('mail_outbox').select('id').where('status', '!=', 'sent').execute();
      if (unsent.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await a.services.db.selectFrom('mail_outbox').select('status').where('status', '!=', 'sent').execute()).toEqual([]);
    const subjects = sink.mails.map((mail) => mail.subject).sort();
    expect(subjects).toEqual(Array.from({ length: count }, (_, i) => `Mail ${i}`).sort());
    expect(fromA.retrying + fromB.retrying + fromA.failed + fromB.failed).toBe(0);
  });
});

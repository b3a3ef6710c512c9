import { cliActing } from '../../core/acting.js';
import { describeMailTransport, listMail, retryFailedMail, type MailStatus } from '../../modules/mail/mail.service.js';
import { CliUsageError, type CliCommand } from '../command.js';

/** `gatehouse mail …` (issue #38 §1; docs/mail.md): the operator looks at the outbox and sends failed mail again. */

const STATUSES: readonly MailStatus[] = ['queued', 'sent', 'failed'];
const LIMIT_DEFAULT = 50;
const LIMIT_MAX = 1000;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export const mailCommands: CliCommand[] = [
  {
    name: 'mail list',
    summary: 'list the mail outbox, newest first: recipient, subject, status, attempts, next attempt and last error (never the bodies)',
    flags: {
      status: { description: `only mail with this status (${STATUSES.join(', ')})` },
      limit: { description: `how many, 1–${LIMIT_MAX} (default ${LIMIT_DEFAULT})` },
    },
    async run(services, flags) {
      const status = flags.string('status');
      if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) throw new CliUsageError(`--status must be one of ${STATUSES.join(', ')} (got "${status}")`);
      const limitText = flags.string('limit');
      const limit = limitText === undefined ? LIMIT_DEFAULT : Number(limitText);
      if (limitText !== undefined && (!/^\d+$/.test(limitText) || limit < 1 || limit > LIMIT_MAX)) throw new CliUsageError(`--limit must be a whole number from 1 to ${LIMIT_MAX} (got "${limitText}")`);
      const mails = await listMail(services, { ...(status !== undefined ? { status: status as MailStatus } : {}), limit });
      return {
        // Where mail goes, with the SMTP password left out (issue #38 §1).
        transport: describeMailTransport(services),
        count: mails.length,
        mails: mails.map((mail) => ({
          id: mail.id,
          to: mail.recipient,
          subject: mail.subject,
          status: mail.status,
          attempts: mail.attempts,
          queued_at: iso(mail.createdAt),
          next_attempt_at: mail.status === 'queued' ? iso(mail.nextAttemptAt) : null,
          sent_at: iso(mail.sentAt),
          last_error: mail.lastError,
        })),
      };
    },
  },
  {
    name: 'mail retry',
    summary: 'put failed mail back in the queue (attempts counted from zero); the mail worker sends it again',
    flags: {
      id: { description: 'the failed mail to retry (its id in gatehouse mail list)' },
      'all-failed': { description: 'every failed mail', boolean: true },
    },
    async run(services, flags) {
      const id = flags.string('id');
      const all = flags.bool('all-failed');
      if ((id === undefined) === !all) throw new CliUsageError('give either --id <id> or --all-failed');
      const ids = await retryFailedMail(services, cliActing(services.clock), id === undefined ? { allFailed: true } : { id });
      return {
        requeued: ids.length,
        ids,
        // Without SMTP no worker runs: the mail waits in the queue until one does.
        transport: describeMailTransport(services),
      };
    },
  },
];

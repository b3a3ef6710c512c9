import type { Kysely, Transaction } from 'kysely';
import nodemailer from 'nodemailer';
import { open, seal, sealingKey } from '../../core/sealed.js';
import { hasForbiddenControl } from '../../core/text.js';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { startOutboxWorker } from '../../storage/outbox.js';
import { MAIL_MAX_ATTEMPTS, linksOf, redactSmtpUrl, retryDelayMs, type MailContent } from './mail.js';
import { claimDueMail, findOutboxStatus, insertOutboxMail, listOutbox, markMailAttemptFailed, markMailSent, requeueFailedMail, type MailStatus, type OutboxEntry } from './mail.repository.js';
import type { Acting, Who } from '../../core/acting.js';
import { invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import { changing } from '../../events/event-bus.js';

export { composeMail } from './mail.js';
export type { MailStatus, OutboxEntry } from './mail.repository.js';

/**
 * Mail (issue #38 §1; docs/mail.md). A mail is queued in the outbox (mail_outbox) in the
 * caller's transaction, so it exists exactly when the change that sends it committed, and a worker
 * sends it later with retries: a page never waits on the mail server, and a server that is down
 * loses nothing.
 */

type MailDeps = Pick<Deps, 'config' | 'db' | 'clock' | 'random' | 'ids' | 'logger' | 'secrets'>;

export interface OutgoingMail extends MailContent {
  to: string;
  subject: string;
}

/** Whether this server sends e-mail at all (GATEHOUSE_SMTP_URL); pages say so when it does not. */
export function mailConfigured(deps: Pick<Deps, 'config'>): boolean {
  return deps.config.smtpUrl !== undefined;
}

const SEALING_PURPOSE = 'gatehouse mail outbox body';

/**
 * Queues `mail` with `db`, the caller's transaction (or the database for a mail that goes with no
 * change). Without GATEHOUSE_SMTP_URL nothing is queued: nothing would ever send it, and its link
 * would have expired by the time an operator configured a server.
 */
export async function queueMail(deps: MailDeps, db: Kysely<Database> | Transaction<Database>, mail: OutgoingMail): Promise<void> {
  // A line break in a header would let text inject headers (RFC 5322 §2.2); callers pass checked
  // addresses, so this is a programming error, not bad input.
  if (/[\r\n]/.test(mail.to) || /[\r\n]/.test(mail.subject) || hasForbiddenControl(mail.to) || hasForbiddenControl(mail.subject)) {
    throw new Error('queueMail: the recipient and subject must be single lines');
  }
  if (!mailConfigured(deps)) {
    deps.logger.debug('no mail queued: GATEHOUSE_SMTP_URL is not set');
    return;
  }
  const id = deps.ids.next();
  // Issue #38, bad input and abuse: a mail may carry a reset or verification link, so its body is
  // sealed at rest with the server secret and bound to its row.
  const sealedBody = seal(sealingKey(deps.secrets[0], SEALING_PURPOSE), deps.random.bytes(12), JSON.stringify({ text: mail.text, html: mail.html }), id);
  await insertOutboxMail(db, { id, recipient: mail.to, subject: mail.subject, sealedBody, now: deps.clock.now() });
}

function openBody(deps: Pick<Deps, 'secrets'>, id: string, sealed: string): MailContent | undefined {
  for (const secret of deps.secrets) {
    const plain = open(sealingKey(secret, SEALING_PURPOSE), sealed, id);
    if (plain !== undefined) return JSON.parse(plain) as MailContent;
  }
  return undefined;
}

/** One message on its way out, as a transport sends it. */
export interface MailMessage extends OutgoingMail {
  from: string;
}

/** Where mail goes: an SMTP server, or the log (GATEHOUSE_SMTP_URL=log:). */
export interface MailTransport {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** SMTP timeouts: a mail server that hangs costs the worker, never a page, and only this long. */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/** The transport GATEHOUSE_SMTP_URL names; undefined without one. */
export function createMailTransport(deps: Pick<Deps, 'config' | 'logger'>): MailTransport | undefined {
  const smtpUrl = deps.config.smtpUrl;
  if (smtpUrl === undefined) return undefined;
  if (smtpUrl === 'log:') {
    return {
      async send(message) {
        // Development only (docs/mail.md): the links are what a developer needs to follow.
        deps.logger.info({ mail: { from: message.from, to: message.to, subject: message.subject, links: linksOf(message.text), text: message.text } }, `mail to ${message.to}: ${message.subject}`);
      },
      close() {},
    };
  }
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const transporter = nodemailer.createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    // smtps: TLS from the first byte; smtp: STARTTLS whenever the server offers it (nodemailer's default).
    secure,
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    // Never nodemailer's own logger: it would print the AUTH exchange.
    logger: false,
    debug: false,
  });
  return {
    async send(message) {
      await transporter.sendMail({ from: message.from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    },
    close() {
      transporter.close();
    },
  };
}

/** How long a claimed mail is this sender's: longer than the SMTP timeouts add up to. */
export const MAIL_LEASE_MS = 5 * 60_000;
const CLAIM_BATCH = 20;

export interface SendReport {
  sent: number;
  retrying: number;
  failed: number;
}

/** A failure's reason as stored and logged: the server's answer or the error, one line, short. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').slice(0, 500);
}

/**
 * Sends the mail that is due, one claimed batch after another until none is left; what fails goes
 * back to the queue with a longer wait, or is marked failed after MAIL_MAX_ATTEMPTS attempts.
 * `holder` names this sender in the leases (an instance's worker, or a test's).
 */
export async function sendQueuedMail(deps: MailDeps, transport: MailTransport, holder: string): Promise<SendReport> {
  const report: SendReport = { sent: 0, retrying: 0, failed: 0 };
  for (;;) {
    const now = deps.clock.now();
    const batch = await claimDueMail(deps.db, holder, now, now + MAIL_LEASE_MS, CLAIM_BATCH);
    for (const mail of batch) {
      const body = openBody(deps, mail.id, mail.sealedBody);
      let failure: string | undefined;
      if (body === undefined) {
        // Sealed under a secret this server no longer has: no retry can open it.
        failure = 'the body does not open with the server secrets (GATEHOUSE_SECRET changed)';
      } else {
        try {
          await transport.send({ from: deps.config.mailFrom, to: mail.recipient, subject: mail.subject, text: body.text, html: body.html });
        } catch (error) {
          failure = reasonOf(error);
        }
      }
      if (failure === undefined) {
        await markMailSent(deps.db, mail.id, holder, deps.clock.now());
        report.sent += 1;
        continue;
      }
      const giveUp = body === undefined || mail.attempts >= MAIL_MAX_ATTEMPTS;
      await markMailAttemptFailed(deps.db, mail.id, holder, { error: failure, giveUp, unreadable: body === undefined, nextAttemptAt: deps.clock.now() + retryDelayMs(mail.attempts) });
      if (giveUp) report.failed += 1;
      else report.retrying += 1;
      // The recipient is personal data, the reason is the server's: neither is a secret.
      deps.logger[giveUp ? 'error' : 'warn']({ mailId: mail.id, attempts: mail.attempts, reason: failure }, giveUp ? 'mail failed for good' : 'mail not sent; will retry');
    }
    if (batch.length < CLAIM_BATCH) return report;
  }
}

export interface MailWorker {
  /** Runs a round now (or waits for the running one and runs another); resolves with what it sent. */
  sendNow(): Promise<SendReport>;
  stop(): Promise<void>;
}

/** How often the worker looks for due mail; a queued mail waits at most about this long. */
export const MAIL_POLL_MS = 5_000;

/**
 * Starts this instance's mail worker when GATEHOUSE_SMTP_URL is set (undefined otherwise): an
 * unref'd interval, so it never keeps the process alive, and never more than one round at a time.
 */
export function startMailWorker(deps: MailDeps, holder: string, options: { intervalMs?: number; transport?: MailTransport } = {}): MailWorker | undefined {
  const transport = options.transport ?? createMailTransport(deps);
  if (transport === undefined) return undefined;
  const smtpUrl = deps.config.smtpUrl ?? '';
  if (smtpUrl === 'log:') deps.logger.warn('GATEHOUSE_SMTP_URL=log: mail is written to this log, links included, and not sent: for development only');
  else deps.logger.info({ smtp: redactSmtpUrl(smtpUrl), from: deps.config.mailFrom }, 'mail worker started');

  const worker = startOutboxWorker(() => sendQueuedMail(deps, transport, holder), {
    intervalMs: options.intervalMs ?? MAIL_POLL_MS,
    onError: (error) => deps.logger.warn({ err: error }, 'mail worker round failed; next round retries'),
  });
  return {
    sendNow: worker.runNow,
    async stop() {
      await worker.stop();
      transport.close();
    },
  };
}

/** Where mail goes, fit to print: `none`, `log:`, or the SMTP URL without its password. */
export function describeMailTransport(deps: Pick<Deps, 'config'>): string {
  const smtpUrl = deps.config.smtpUrl;
  return smtpUrl === undefined ? 'none (GATEHOUSE_SMTP_URL is not set: no mail is sent)' : smtpUrl === 'log:' ? 'log: (written to the log, not sent)' : redactSmtpUrl(smtpUrl);
}

/** `gatehouse mail list`: the queue, newest first, without the bodies. */
export async function listMail(deps: Pick<Deps, 'db'>, filter: { status?: MailStatus; limit?: number }): Promise<OutboxEntry[]> {
  return listOutbox(deps.db, { ...(filter.status ? { status: filter.status } : {}), limit: filter.limit ?? 100 });
}

/**
 * `gatehouse mail retry` (docs/mail.md): failed mail goes back to the queue with a fresh count of
 * attempts, and the worker sends it as it sends any queued mail. One mail by id (refused with the
 * reason when it is unknown, not failed, or its body was emptied as unreadable), or every failed
 * mail. mail.requeued is audited. Links in the mail are those it was made with: a password reset
 * link older than 30 minutes no longer works when it arrives.
 */
export async function retryFailedMail(deps: Pick<Deps, 'db' | 'clock' | 'bus'>, acting: Acting<Who>, target: { id: string } | { allFailed: true }): Promise<string[]> {
  if ('id' in target) {
    const found = isSnowflake(target.id) ? await findOutboxStatus(deps.db, target.id) : undefined;
    if (!found) throw invalidField(['id'], 'UNKNOWN_MAIL', `No mail has the id "${target.id}" (gatehouse mail list shows them).`);
    if (found.status !== 'failed') throw invalidField(['id'], 'MAIL_NOT_FAILED', `Mail ${target.id} is ${found.status}: only failed mail is retried.`);
    if (!found.hasBody) throw invalidField(['id'], 'MAIL_BODY_GONE', `Mail ${target.id} cannot be sent again: its body did not open with the server secrets and was emptied.`);
  }
  return changing(deps, acting, async (trx, emit) => {
    const ids = await requeueFailedMail(trx, target, deps.clock.now());
    if (ids.length > 0) emit({ type: 'mail.requeued', count: ids.length, mailId: 'id' in target ? target.id : null });
    return ids;
  });
}

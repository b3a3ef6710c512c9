import type { Kysely, Transaction } from 'kysely';
import { claimDueRows } from '../../storage/outbox.js';
import type { Database } from '../../storage/database.js';
import { toId, toNum, toNumOrNull } from '../../storage/types.js';

export type MailStatus = 'queued' | 'sent' | 'failed';

export interface NewOutboxMail {
  id: string;
  recipient: string;
  subject: string;
  sealedBody: string;
  now: number;
}

export async function insertOutboxMail(db: Kysely<Database> | Transaction<Database>, mail: NewOutboxMail): Promise<void> {
  await db
    .insertInto('mail_outbox')
    .values({
      id: mail.id,
      recipient: mail.recipient,
      subject: mail.subject,
      sealed_body: mail.sealedBody,
      status: 'queued',
      attempts: 0,
      next_attempt_at: mail.now,
      lease_holder: null,
      lease_until: null,
      last_error: null,
      created_at: mail.now,
      sent_at: null,
    })
    .execute();
}

export interface ClaimedMail {
  id: string;
  recipient: string;
  subject: string;
  sealedBody: string;
  /** Including this one. */
  attempts: number;
}

/**
 * Claims up to `limit` due mails for `holder` until `leaseUntil`, counting the attempt, in one
 * statement (storage/outbox.ts: FOR UPDATE SKIP LOCKED on PostgreSQL, and the lease keeps a
 * claimed row away from the others until it expires).
 */
export async function claimDueMail(db: Kysely<Database>, holder: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedMail[]> {
  const rows = await claimDueRows(db, 'mail_outbox', holder, now, leaseUntil, limit);
  return rows.map((row) => ({ id: toId(row.id), recipient: row.recipient, subject: row.subject, sealedBody: row.sealed_body, attempts: toNum(row.attempts) }));
}

/** Sent: the body (which may hold a single-use link) is emptied. False when the lease was lost. */
export async function markMailSent(db: Kysely<Database>, id: string, holder: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('mail_outbox')
    .set({ status: 'sent', sent_at: now, sealed_body: '', lease_holder: null, lease_until: null, last_error: null })
    .where('id', '=', id)
    .where('lease_holder', '=', holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A failed attempt: back to the queue for `nextAttemptAt`, or `failed` for good. A failed mail
 * keeps its sealed body so that `gatehouse mail retry` can send it again, unless it does not open
 * (`unreadable`: sealed under a secret the server no longer has), which is emptied.
 */
export async function markMailAttemptFailed(
  db: Kysely<Database>,
  id: string,
  holder: string,
  outcome: { error: string; giveUp: boolean; unreadable: boolean; nextAttemptAt: number },
): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set(
      outcome.giveUp
        ? { status: 'failed', ...(outcome.unreadable ? { sealed_body: '' } : {}), last_error: outcome.error, lease_holder: null, lease_until: null }
        : { status: 'queued', next_attempt_at: outcome.nextAttemptAt, last_error: outcome.error, lease_holder: null, lease_until: null },
    )
    .where('id', '=', id)
    .where('lease_holder', '=', holder)
    .execute();
}

export interface OutboxEntry {
  id: string;
  recipient: string;
  subject: string;
  status: MailStatus;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  sentAt: number | null;
}

/** The queue for `gatehouse mail list`, newest first; never the bodies. */
export async function listOutbox(db: Kysely<Database>, filter: { status?: MailStatus; limit: number }): Promise<OutboxEntry[]> {
  let query = db
    .selectFrom('mail_outbox')
    .select(['id', 'recipient', 'subject', 'status', 'attempts', 'next_attempt_at', 'last_error', 'created_at', 'sent_at'])
    .orderBy('id', 'desc')
    .limit(filter.limit);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: toId(row.id),
    recipient: row.recipient,
    subject: row.subject,
    status: row.status as MailStatus,
    attempts: toNum(row.attempts),
    nextAttemptAt: toNum(row.next_attempt_at),
    lastError: row.last_error,
    createdAt: toNum(row.created_at),
    sentAt: toNumOrNull(row.sent_at),
  }));
}

/**
 * Puts failed mail back in the queue, due now with its attempts counted from zero: one mail by id,
 * or every failed one. Only mail whose body is still there (not emptied as unreadable). The ids
 * re-queued.
 */
export async function requeueFailedMail(db: Kysely<Database> | Transaction<Database>, target: { id: string } | { allFailed: true }, now: number): Promise<string[]> {
  let query = db
    .updateTable('mail_outbox')
    .set({ status: 'queued', attempts: 0, next_attempt_at: now, lease_holder: null, lease_until: null })
    .where('status', '=', 'failed')
    .where('sealed_body', '<>', '');
  if ('id' in target) query = query.where('id', '=', target.id);
  const rows = await query.returning('id').execute();
  return rows.map((row) => toId(row.id));
}

/** One mail's status and whether its body is still there, for a refusal that says why. */
export async function findOutboxStatus(db: Kysely<Database>, id: string): Promise<{ status: MailStatus; hasBody: boolean } | undefined> {
  const row = await db.selectFrom('mail_outbox').select(['status', 'sealed_body']).where('id', '=', id).executeTakeFirst();
  return row ? { status: row.status as MailStatus, hasBody: row.sealed_body !== '' } : undefined;
}

import type { DbId, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * The mail outbox (issue #38 §1; docs/mail.md): every mail the service sends is a row,
 * inserted in the transaction of the change that sends it and delivered later by the mail worker
 * (mail.service.ts), so a page never waits on the mail server and one that is down loses nothing.
 */
export interface MailOutboxTable {
  /** A snowflake: the queue's order. */
  id: DbId;
  recipient: string;
  subject: string;
  /**
   * The text and HTML parts, JSON sealed with the server secret and bound to the row's id: a mail
   * may carry a single-use link (issue #38, "no secret … stored in the clear"). Emptied once the
   * mail is sent or given up on.
   */
  sealed_body: string;
  /** queued (waiting or retrying), sent, or failed (given up after MAIL_MAX_ATTEMPTS). */
  status: string;
  attempts: DbInt;
  /** When the worker may next try it (exponential backoff after a failure). */
  next_attempt_at: DbInt;
  /** The instance sending it and until when: another instance takes it over only after this. */
  lease_holder: string | null;
  lease_until: DbIntNullable;
  /** The last failure's reason (the SMTP server's answer or the connection error), never a credential. */
  last_error: string | null;
  created_at: DbInt;
  sent_at: DbIntNullable;
}

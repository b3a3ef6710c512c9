import type { DbId, DbIdNullable, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * The audit log (issue #37 §5; docs/audit-log.md): one row per security-relevant domain event,
 * written in the commit of the change it records (events/event-bus.ts), kept for
 * GATEHOUSE_AUDIT_RETENTION_DAYS and purged by the maintenance job. Ids are snowflakes, so the
 * newest-first order and Discord's `before`/`after` are the id's order.
 */
export interface AuditEventsTable {
  id: DbId;
  /** The domain event's type (`role.created`, `signin.failed`, …). */
  action: string;
  /** Discord's audit-log action type where one exists (ROLE_CREATE = 30, …); null otherwise. */
  action_type: DbIntNullable;
  /** The server whose audit log shows it; null for instance-wide events. */
  server_id: DbIdNullable;
  /** person, bot, operator, webhook or anonymous. */
  actor_kind: string;
  /** The person's or bot account's user id, or the webhook's id; null for the operator and nobody. */
  actor_id: DbIdNullable;
  /** The application the event concerns (the bot's, the OAuth client's), when one does. */
  application_id: DbIdNullable;
  /** What was acted on: a role, channel, member, webhook id, or an invite code. */
  target_id: string | null;
  /** The person the event is about, for their own security page (sign-ins, apps authorized, password changes). */
  subject_user_id: DbIdNullable;
  address: string | null;
  request_id: string | null;
  /** The bot's X-Audit-Log-Reason, or the service's own reason (why a sign-in failed). */
  reason: string | null;
  /** Discord's `changes`, JSON: [{ key, old_value?, new_value? }]. */
  changes: string | null;
  /** Discord's `options` and other details, JSON object of strings. */
  options: string | null;
  created_at: DbInt;
}

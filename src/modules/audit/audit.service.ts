import type { Acting, Who } from '../../core/acting.js';
import type { Deps } from '../../deps.js';
import type { DomainEvent } from '../../events/domain-events.js';
import type { Writer } from '../../events/event-bus.js';
import { AUDITED_EVENTS, auditEntryOf, type AuditEntry } from './audit.js';
import { insertAuditRows, type NewAuditRow } from './audit.repository.js';

/**
 * Subscribes the audit log to the domain events (issue #37 §5): each kept event becomes one row,
 * written with the change's own transaction (events/event-bus.ts `changing`), or right after an
 * acknowledged change or refusal (`emitted`). Called once per process by app.ts and by the CLI.
 */
export function recordAuditLog(deps: Pick<Deps, 'bus' | 'ids'>): void {
  // Once per bus: a test that builds two apps on one services object must not record twice.
  if (subscribed.has(deps.bus)) return;
  subscribed.add(deps.bus);
  deps.bus.record(AUDITED_EVENTS, (db: Writer, acting: Acting<Who>, events: readonly DomainEvent[]) => {
    const rows: NewAuditRow[] = [];
    for (const event of events) {
      const entry = auditEntryOf(event, acting);
      if (entry !== undefined) rows.push(rowOf(deps.ids.next(), acting.at, entry));
    }
    return insertAuditRows(db, rows);
  });
}

const subscribed = new WeakSet<object>();

function rowOf(id: string, at: number, entry: AuditEntry): NewAuditRow {
  return {
    id,
    action: entry.action,
    action_type: entry.actionType,
    server_id: entry.serverId,
    actor_kind: entry.actorKind,
    actor_id: entry.actorId,
    application_id: entry.applicationId,
    target_id: entry.targetId,
    subject_user_id: entry.subjectUserId,
    address: entry.address,
    request_id: entry.requestId,
    reason: entry.reason,
    changes: entry.changes === null ? null : JSON.stringify(entry.changes.map((c) => ({ key: c.key, ...('old' in c ? { old_value: c.old } : {}), ...('new' in c ? { new_value: c.new } : {}) }))),
    options: entry.options === null ? null : JSON.stringify(entry.options),
    created_at: at,
  };
}

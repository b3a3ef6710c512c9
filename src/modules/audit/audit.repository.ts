import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { onPostgres } from '../../storage/dialect-of.js';
import { batched } from '../../storage/postgres-batch.js';
import { toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import type { AuditRow } from './audit.js';
import type { AuditEventsTable } from './audit.table.js';

type Db = Kysely<Database> | Transaction<Database>;

export type { AuditRow };

export type NewAuditRow = Insertable<AuditEventsTable>;

/**
 * Writes audit rows. Inside a transaction, in it (the change's commit). Outside one (an event of a
 * change already acknowledged, or of a refusal that changed nothing): on SQLite a plain insert,
 * which joins this turn's write group; on PostgreSQL the rows of one event-loop turn go out as one
 * statement (storage/postgres-batch.ts), so a burst of refused sign-ins is one insert per turn.
 */
export async function insertAuditRows(db: Db, rows: readonly NewAuditRow[]): Promise<void> {
  if (rows.length === 0) return;
  if (db.isTransaction || !onPostgres(db)) {
    await db.insertInto('audit_events').values([...rows]).execute();
    return;
  }
  await Promise.all(rows.map(writerOf(db)));
}

const writers = new WeakMap<Kysely<Database>, (row: NewAuditRow) => Promise<unknown>>();
function writerOf(db: Kysely<Database>): (row: NewAuditRow) => Promise<unknown> {
  let writer = writers.get(db);
  if (writer === undefined) {
    writer = batched<NewAuditRow, true>(async (rows) => {
      await db.insertInto('audit_events').values([...rows]).execute();
      return rows.map(() => true);
    });
    writers.set(db, writer);
  }
  return writer;
}

/** Filters of a read; every one optional. `before`/`after` are entry ids (snowflakes: time order). */
export interface AuditQuery {
  serverId?: string;
  /** Entries done by this user (person or bot account). */
  actorId?: string;
  /** Entries done by, or about, this person. */
  personId?: string;
  /** Entries about this person (their own security events). */
  subjectUserId?: string;
  applicationId?: string;
  actions?: readonly string[];
  actionType?: number;
  /** Only entries with a Discord action type (the API's log). */
  discordOnly?: boolean;
  before?: string;
  after?: string;
  since?: number;
  limit: number;
}

/**
 * Entries matching `query`, newest first; with `after` alone, the oldest after it first, as
 * Discord answers (then reversed to newest first by the caller if it wants).
 */
export async function listAuditRows(db: Db, query: AuditQuery): Promise<AuditRow[]> {
  let select = db.selectFrom('audit_events').selectAll();
  if (query.serverId !== undefined) select = select.where('server_id', '=', query.serverId);
  if (query.actorId !== undefined) select = select.where('actor_id', '=', query.actorId);
  if (query.personId !== undefined) {
    const personId = query.personId;
    select = select.where((eb) => eb.or([eb('actor_id', '=', personId), eb('subject_user_id', '=', personId)]));
  }
  if (query.subjectUserId !== undefined) select = select.where('subject_user_id', '=', query.subjectUserId);
  if (query.applicationId !== undefined) select = select.where('application_id', '=', query.applicationId);
  if (query.actions !== undefined && query.actions.length > 0) select = select.where('action', 'in', [...query.actions]);
  if (query.actionType !== undefined) select = select.where('action_type', '=', query.actionType);
  if (query.discordOnly) select = select.where('action_type', 'is not', null);
  if (query.before !== undefined) select = select.where('id', '<', query.before);
  if (query.after !== undefined) select = select.where('id', '>', query.after);
  if (query.since !== undefined) select = select.where('created_at', '>=', query.since);
  const ascending = query.after !== undefined && query.before === undefined;
  const rows = await select.orderBy('id', ascending ? 'asc' : 'desc').limit(query.limit).execute();
  return rows.map(toAuditRow);
}

function toAuditRow(row: Selectable<AuditEventsTable>): AuditRow {
  return {
    id: toId(row.id),
    action: row.action,
    actionType: toNumOrNull(row.action_type),
    serverId: toIdOrNull(row.server_id),
    actorKind: row.actor_kind,
    actorId: toIdOrNull(row.actor_id),
    applicationId: toIdOrNull(row.application_id),
    targetId: row.target_id,
    subjectUserId: toIdOrNull(row.subject_user_id),
    address: row.address,
    requestId: row.request_id,
    reason: row.reason,
    changes: row.changes,
    options: row.options,
    createdAt: toNum(row.created_at),
  };
}

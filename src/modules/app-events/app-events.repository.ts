import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { claimDueRows } from '../../storage/outbox.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toId, toNum, toNumOrNull } from '../../storage/types.js';
import type { AppEndpoints, Delivery, DeliveryKind, DeliveryOutcome, EventWebhooksStatus } from './app-events.js';

type Db = Kysely<Database> | Transaction<Database>;

function parseTypes(text: string): string[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

const ENDPOINT_COLUMNS = [
  'application_id',
  'public_key',
  'sealed_private_key',
  'interactions_endpoint_url',
  'event_webhooks_url',
  'event_webhooks_status',
  'event_webhooks_types',
  'event_webhooks_disabled_reason',
] as const;

type EndpointRow = {
  application_id: string | bigint;
  public_key: string;
  sealed_private_key: string;
  interactions_endpoint_url: string | null;
  event_webhooks_url: string | null;
  event_webhooks_status: number | bigint | string;
  event_webhooks_types: string;
  event_webhooks_disabled_reason: string | null;
};

function endpointsOf(row: EndpointRow): AppEndpoints {
  return {
    applicationId: toId(row.application_id),
    publicKey: row.public_key,
    sealedPrivateKey: row.sealed_private_key,
    interactionsEndpointUrl: row.interactions_endpoint_url,
    eventWebhooksUrl: row.event_webhooks_url,
    eventWebhooksStatus: toNum(row.event_webhooks_status) as EventWebhooksStatus,
    eventWebhooksTypes: parseTypes(row.event_webhooks_types),
    eventWebhooksDisabledReason: row.event_webhooks_disabled_reason,
  };
}

// Read for every interaction sent (docs/performance.md, Interactions): compiled once.
const endpointsByApp = prepareQuery<{ applicationId: string }>()((db, v) => db.selectFrom('app_endpoints').select(ENDPOINT_COLUMNS).where('application_id', '=', v.applicationId));

export async function findAppEndpoints(db: Db, applicationId: string): Promise<AppEndpoints | undefined> {
  const row = await firstRow(endpointsByApp(db, { applicationId }));
  return row ? endpointsOf(row) : undefined;
}

/**
 * The apps among `applicationIds` whose event webhooks are enabled (the recorder's one read per
 * change). An app the operator disabled has none: issue #39, its events are not delivered while it
 * is disabled, and not held for later either (it could not act on them).
 */
export async function findEnabledEventEndpoints(db: Db, applicationIds: readonly string[]): Promise<AppEndpoints[]> {
  if (applicationIds.length === 0) return [];
  const rows = await db
    .selectFrom('app_endpoints')
    .innerJoin('applications', 'applications.id', 'app_endpoints.application_id')
    .select(ENDPOINT_COLUMNS.map((c) => `app_endpoints.${c}` as const))
    .where('app_endpoints.application_id', 'in', applicationIds)
    .where('app_endpoints.event_webhooks_status', '=', 2)
    .where('applications.disabled_at', 'is', null)
    .execute();
  return rows.map(endpointsOf);
}

/** Stores a new key pair unless the app has one already (two first uses at once keep the first). */
export async function insertAppKeysIfMissing(db: Db, keys: { applicationId: string; publicKey: string; sealedPrivateKey: string; now: number }): Promise<void> {
  await db
    .insertInto('app_endpoints')
    .values({ application_id: keys.applicationId, public_key: keys.publicKey, sealed_private_key: keys.sealedPrivateKey, event_webhooks_status: 1, event_webhooks_types: '[]', updated_at: keys.now })
    .onConflict((oc) => oc.column('application_id').doNothing())
    .execute();
}

export async function updateInteractionsEndpointUrl(db: Db, applicationId: string, url: string | null, now: number): Promise<void> {
  await db.updateTable('app_endpoints').set({ interactions_endpoint_url: url, updated_at: now }).where('application_id', '=', applicationId).execute();
}

export async function updateEventWebhooks(db: Db, applicationId: string, settings: { url: string | null; status: EventWebhooksStatus; types: readonly string[]; disabledReason: string | null }, now: number): Promise<void> {
  await db
    .updateTable('app_endpoints')
    .set({
      event_webhooks_url: settings.url,
      event_webhooks_status: settings.status,
      event_webhooks_types: JSON.stringify(settings.types),
      event_webhooks_disabled_reason: settings.disabledReason,
      updated_at: now,
    })
    .where('application_id', '=', applicationId)
    .execute();
}

/** The server turns an endpoint off (status 3) with its reason, unless its owner changed it meanwhile (still enabled, same URL). */
export async function disableFailingEventWebhooks(db: Db, applicationId: string, url: string, reason: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('app_endpoints')
    .set({ event_webhooks_status: 3, event_webhooks_disabled_reason: reason, updated_at: now })
    .where('application_id', '=', applicationId)
    .where('event_webhooks_status', '=', 2)
    .where('event_webhooks_url', '=', url)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// --- The outbox ---------------------------------------------------------------------------------

export interface NewAppEvent {
  id: string;
  applicationId: string;
  eventType: string;
  data: string;
  eventAt: number;
}

export async function insertAppEvents(db: Db, events: readonly NewAppEvent[], now: number): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('app_event_outbox')
    .values(
      events.map((e) => ({
        id: e.id,
        application_id: e.applicationId,
        event_type: e.eventType,
        data: e.data,
        event_at: e.eventAt,
        status: 'queued',
        attempts: 0,
        next_attempt_at: now,
        lease_holder: null,
        lease_until: null,
        last_error: null,
        created_at: now,
      })),
    )
    .execute();
}

export interface ClaimedAppEvent {
  id: string;
  applicationId: string;
  eventType: string;
  data: string;
  eventAt: number;
  /** Including this one. */
  attempts: number;
  createdAt: number;
}

export async function claimDueAppEvents(db: Kysely<Database>, holder: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedAppEvent[]> {
  const rows = await claimDueRows(db, 'app_event_outbox', holder, now, leaseUntil, limit);
  return rows.map((row) => ({
    id: toId(row.id),
    applicationId: toId(row.application_id),
    eventType: row.event_type,
    data: row.data,
    eventAt: toNum(row.event_at),
    attempts: toNum(row.attempts),
    createdAt: toNum(row.created_at),
  }));
}

/** Delivered or dropped: the row goes (the delivery log keeps the outcome). False when the lease was lost. */
export async function deleteClaimedAppEvent(db: Kysely<Database>, id: string, holder: string): Promise<boolean> {
  const result = await db.deleteFrom('app_event_outbox').where('id', '=', id).where('lease_holder', '=', holder).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function rescheduleAppEvent(db: Kysely<Database>, id: string, holder: string, nextAttemptAt: number, error: string): Promise<void> {
  await db
    .updateTable('app_event_outbox')
    .set({ next_attempt_at: nextAttemptAt, last_error: error, lease_holder: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_holder', '=', holder)
    .execute();
}

/** The queued events of an app whose endpoint was turned off (or that was disabled): dropped, their types returned for the log. */
export async function deleteQueuedAppEventsOf(db: Db, applicationId: string): Promise<string[]> {
  const rows = await db.deleteFrom('app_event_outbox').where('application_id', '=', applicationId).returning('event_type').execute();
  return rows.map((r) => r.event_type);
}

// --- The delivery log ---------------------------------------------------------------------------

/** Issue #40 §3: the log keeps the last 100 entries of each app. */
export const DELIVERY_LOG_SIZE = 100;

/** A delivery log row's columns. */
function deliveryRow(entry: Delivery) {
  return {
    id: entry.id,
    application_id: entry.applicationId,
    kind: entry.kind,
    event_type: entry.eventType,
    outcome: entry.outcome,
    http_status: entry.httpStatus,
    latency_ms: entry.latencyMs,
    next_retry_at: entry.nextRetryAt,
    error: entry.error,
    created_at: entry.createdAt,
  };
}

// One entry per interaction sent (docs/performance.md, Interactions): compiled once.
const insertDeliveryRow = prepareQuery<Delivery>()((db, v) => db.insertInto('app_deliveries').values(deliveryRow(v)));

// The app's 100th newest id; with fewer entries the subquery is NULL and `id < NULL` keeps all.
const trimDeliveryLog = prepareQuery<{ applicationId: string }>()((db, v) =>
  db
    .deleteFrom('app_deliveries')
    .where('application_id', '=', v.applicationId)
    .where('id', '<', (eb) => eb.selectFrom('app_deliveries').select('id').where('application_id', '=', v.applicationId).orderBy('id', 'desc').limit(1).offset(DELIVERY_LOG_SIZE - 1)),
);

/** Appends one entry and forgets the app's entries older than its last DELIVERY_LOG_SIZE. */
export async function insertDelivery(db: Db, entry: Delivery): Promise<void> {
  await insertDeliveryRow(db, entry);
  await trimDeliveryLog(db, { applicationId: entry.applicationId });
}

/**
 * Appends `entries` in one statement, then forgets each of their apps' entries older than its
 * last DELIVERY_LOG_SIZE with one statement per app (the worker logs a batch of deliveries at
 * once: docs/performance.md, "Interactions and app events").
 */
export async function insertDeliveries(db: Db, entries: readonly Delivery[]): Promise<void> {
  if (entries.length === 0) return;
  await db.insertInto('app_deliveries').values(entries.map(deliveryRow)).execute();
  for (const applicationId of new Set(entries.map((e) => e.applicationId))) await trimDeliveryLog(db, { applicationId });
}

/** Delivered: the claimed rows go in one statement (rows whose lease was lost stay). */
export async function deleteClaimedAppEvents(db: Kysely<Database>, ids: readonly string[], holder: string): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('app_event_outbox').where('id', 'in', ids).where('lease_holder', '=', holder).execute();
}

export async function listDeliveries(db: Kysely<Database>, applicationId: string, limit: number): Promise<Delivery[]> {
  const rows = await db.selectFrom('app_deliveries').selectAll().where('application_id', '=', applicationId).orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: toId(row.id),
    applicationId: toId(row.application_id),
    kind: row.kind as DeliveryKind,
    eventType: row.event_type,
    outcome: row.outcome as DeliveryOutcome,
    httpStatus: toNumOrNull(row.http_status),
    latencyMs: toNumOrNull(row.latency_ms),
    nextRetryAt: toNumOrNull(row.next_retry_at),
    error: row.error,
    createdAt: toNum(row.created_at),
  }));
}

import type { Kysely } from 'kysely';

/**
 * Issue #40 §1, §3: what Gatehouse sends to apps. app_endpoints holds one row per app that has a
 * signing key (made on first use): the Ed25519 key pair, the interactions endpoint URL and the
 * event webhooks settings. app_event_outbox holds the app events waiting to be delivered (a row
 * goes once delivered or dropped); app_deliveries the delivery log the portal shows (the last
 * 100 per app). Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('app_endpoints')
    .addColumn('application_id', 'bigint', (c) => c.primaryKey().references('applications.id').onDelete('cascade'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('sealed_private_key', 'text', (c) => c.notNull())
    .addColumn('interactions_endpoint_url', 'text')
    .addColumn('event_webhooks_url', 'text')
    .addColumn('event_webhooks_status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('event_webhooks_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('event_webhooks_disabled_reason', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('app_event_outbox')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('event_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_holder', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('app_event_outbox_due').on('app_event_outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('app_event_outbox_app').on('app_event_outbox').column('application_id').execute();
  await db.schema
    .createTable('app_deliveries')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('latency_ms', 'integer')
    .addColumn('next_retry_at', 'bigint')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('app_deliveries_app').on('app_deliveries').columns(['application_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('app_deliveries').execute();
  await db.schema.dropTable('app_event_outbox').execute();
  await db.schema.dropTable('app_endpoints').execute();
}

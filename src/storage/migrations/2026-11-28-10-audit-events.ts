import type { Kysely } from 'kysely';

/**
 * The audit log (issue #37 §5): audit_events, one row per recorded domain event. Indexed for the
 * four ways it is read: a server's log newest first (by id), a person's own security events, the
 * operator's filters by actor and by app, and the maintenance job's purge by age. No foreign keys:
 * an entry outlives the role, webhook, server or person it names, as Discord's does. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('action_type', 'integer')
    .addColumn('server_id', 'bigint')
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'bigint')
    .addColumn('application_id', 'bigint')
    .addColumn('target_id', 'text')
    .addColumn('subject_user_id', 'bigint')
    .addColumn('address', 'text')
    .addColumn('request_id', 'text')
    .addColumn('reason', 'text')
    .addColumn('changes', 'text')
    .addColumn('options', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_server').on('audit_events').columns(['server_id', 'id']).execute();
  await db.schema.createIndex('audit_events_subject').on('audit_events').columns(['subject_user_id', 'id']).execute();
  await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['actor_id', 'id']).execute();
  await db.schema.createIndex('audit_events_application').on('audit_events').columns(['application_id', 'id']).execute();
  await db.schema.createIndex('audit_events_created').on('audit_events').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}

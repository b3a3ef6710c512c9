import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Issue #42 §1: files. `attachments` holds each file's metadata (one row per file of a message;
 * no foreign key to messages, which are partitioned on PostgreSQL: the maintenance job removes the
 * files of messages that are gone, modules/files/files.service.ts). `file_chunks` is the
 * database blob store (GATEHOUSE_FILE_STORE=postgres): a file's bytes in numbered chunks, so that
 * no statement carries one giant value. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? sql`bytea` : sql`blob`;
  await db.schema
    .createTable('attachments')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('message_id', 'bigint', (c) => c.notNull())
    .addColumn('channel_id', 'bigint', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('content_type', 'text')
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('description', 'text')
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('attachments_message').on('attachments').column('message_id').execute();
  await db.schema.createIndex('attachments_created').on('attachments').column('created_at').execute();
  await db.schema
    .createTable('file_chunks')
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', bytes, (c) => c.notNull())
    .addPrimaryKeyConstraint('file_chunks_pk', ['storage_key', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('file_chunks').execute();
  await db.schema.dropTable('attachments').execute();
}

import type { Kysely } from 'kysely';

/**
 * Issue #41 §3: client ID metadata documents (draft-ietf-oauth-client-id-metadata-document). A
 * `client_id` that is a URL becomes an application owned by the system owner of registered
 * applications (migration 2026-11-29-80), so codes, tokens and grants refer to it as to any app;
 * `client_metadata_documents` maps the URL to that application and goes with it (ON DELETE CASCADE).
 * `fetched_at`: when the document was last read (the operator's view; freshness is per instance).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('client_metadata_documents')
    .addColumn('url', 'text', (c) => c.primaryKey())
    .addColumn('application_id', 'bigint', (c) => c.notNull().unique().references('applications.id').onDelete('cascade'))
    .addColumn('fetched_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('client_metadata_documents').execute();
}

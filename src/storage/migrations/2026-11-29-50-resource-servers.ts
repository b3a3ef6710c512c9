import type { Kysely } from 'kysely';

/**
 * Issue #41 §1: resource servers (APIs an application serves; RFC 8707 audiences) and the audience
 * of each authorization and token: `resource_server_id` is null for Gatehouse's own API. A grant
 * names its resource server with ON DELETE CASCADE, so removing a resource server ends its
 * authorizations and their tokens. `app_only` marks an access token that speaks for its
 * application alone (client credentials, RFC 6749 §4.4): its `user_id` is the app's owner, who
 * answers for it, and introspection names the client as its subject; such a grant (one per app
 * and resource server, `app_only` 1) is nobody's authorization and is listed to no one. Frozen
 * once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('resource_servers')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('application_id', 'bigint', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('identifier', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('access_token_format', 'text', (c) => c.notNull().defaultTo('opaque'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('resource_servers_application').on('resource_servers').column('application_id').execute();
  await db.schema
    .alterTable('oauth_grants')
    .addColumn('resource_server_id', 'bigint', (c) => c.references('resource_servers.id').onDelete('cascade'))
    .execute();
  await db.schema.alterTable('oauth_grants').addColumn('app_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('oauth_grants_resource_server').on('oauth_grants').columns(['resource_server_id', 'application_id']).execute();
  await db.schema.alterTable('oauth_access_tokens').addColumn('resource_server_id', 'bigint').execute();
  await db.schema.alterTable('oauth_access_tokens').addColumn('app_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('oauth_refresh_tokens').addColumn('resource_server_id', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_refresh_tokens').dropColumn('resource_server_id').execute();
  await db.schema.alterTable('oauth_access_tokens').dropColumn('app_only').execute();
  await db.schema.alterTable('oauth_access_tokens').dropColumn('resource_server_id').execute();
  await db.schema.dropIndex('oauth_grants_resource_server').execute();
  await db.schema.alterTable('oauth_grants').dropColumn('app_only').execute();
  await db.schema.alterTable('oauth_grants').dropColumn('resource_server_id').execute();
  await db.schema.dropTable('resource_servers').execute();
}

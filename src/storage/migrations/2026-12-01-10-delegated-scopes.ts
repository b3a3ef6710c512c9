import type { Kysely } from 'kysely';

/**
 * Issue #41, RFC 8693 token exchange: the Gatehouse scopes a resource server may use on behalf of
 * the person who authorized a token for it ("delegated scopes"), and, on each authorization, the
 * ones the person saw and approved on the consent screen. Space-separated scope names; empty: none.
 * The grant keeps its own copy, so a resource server that delegates more later gets nothing the
 * person never saw. Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('resource_servers').addColumn('delegated_scopes', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('oauth_grants').addColumn('delegated_scopes', 'text', (c) => c.notNull().defaultTo('')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_grants').dropColumn('delegated_scopes').execute();
  await db.schema.alterTable('resource_servers').dropColumn('delegated_scopes').execute();
}

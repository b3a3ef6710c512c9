import type { Kysely } from 'kysely';

/**
 * Issue #23 (integrations). `webhook_github_secrets`: the optional GitHub secret of a webhook,
 * kept apart from `webhooks` so the execute path's row (DESIGN §5) does not grow; deleted with
 * its webhook. `oauth_grants.webhook_channel_id`: the channel chosen on the consent screen of a
 * `webhook.incoming` authorization, where the code exchange creates the webhook. Frozen once
 * released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_github_secrets')
    .addColumn('webhook_id', 'bigint', (c) => c.primaryKey().references('webhooks.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('oauth_grants').addColumn('webhook_channel_id', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_grants').dropColumn('webhook_channel_id').execute();
  await db.schema.dropTable('webhook_github_secrets').execute();
}

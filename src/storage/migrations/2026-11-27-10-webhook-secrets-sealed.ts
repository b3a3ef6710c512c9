import { sql, type Kysely } from 'kysely';

/**
 * Issue #36 §2: a webhook's GitHub secret moves onto its row, sealed, and signed deliveries are
 * remembered so that a replay posts nothing.
 *
 * - `webhooks.github_secret_sealed`: the secret sealed with the server secret (core/sealed.ts), or
 *   null when the webhook has none. On the row because every route of the webhook URL must know
 *   whether one is set (a webhook with a secret takes only signed deliveries), and the row is what
 *   each of those routes already reads (DESIGN §5: no extra round trip).
 * - Migrations never see the server secret (GATEHOUSE_SECRET stays out of the database and out of
 *   `gatehouse migrate`), so the secrets of `webhook_github_secrets` are carried over as
 *   `plain:<secret>` and sealed when the app starts (compat-execute.service.ts
 *   sealPlainGithubSecrets), or else at first use (githubSecretOf); that table goes.
 * - `webhook_github_deliveries`: the X-GitHub-Delivery id and body hash of each signed delivery
 *   received, kept until `expires_at` (the replay window) and then pruned by storage/maintenance.ts.
 *
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('github_secret_sealed', 'text').execute();
  await sql`update webhooks set github_secret_sealed = (select 'plain:' || s.secret from webhook_github_secrets s where s.webhook_id = webhooks.id)
    where exists (select 1 from webhook_github_secrets s where s.webhook_id = webhooks.id)`.execute(db);
  await db.schema.dropTable('webhook_github_secrets').execute();

  await db.schema
    .createTable('webhook_github_deliveries')
    .addColumn('webhook_id', 'bigint', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('body_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_github_deliveries_pk', ['webhook_id', 'delivery_id'])
    .execute();
  // The same signed body under another delivery id is a replay too: the id is not signed.
  await db.schema.createIndex('webhook_github_deliveries_body').on('webhook_github_deliveries').columns(['webhook_id', 'body_hash']).unique().execute();
  await db.schema.createIndex('webhook_github_deliveries_expires').on('webhook_github_deliveries').column('expires_at').execute();
}

/** Sealed secrets cannot be opened without the server secret: only those still in plain text come back. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_github_deliveries').execute();
  await db.schema
    .createTable('webhook_github_secrets')
    .addColumn('webhook_id', 'bigint', (c) => c.primaryKey().references('webhooks.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into webhook_github_secrets (webhook_id, secret, updated_at)
    select id, substr(github_secret_sealed, 7), created_at from webhooks where github_secret_sealed like 'plain:%'`.execute(db);
  await db.schema.alterTable('webhooks').dropColumn('github_secret_sealed').execute();
}

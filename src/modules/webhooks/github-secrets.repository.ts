import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The GitHub secret of a webhook, or undefined when none is set (issue #23). */
export async function findGithubSecret(db: Db, webhookId: string): Promise<string | undefined> {
  const row = await db.selectFrom('webhook_github_secrets').select('secret').where('webhook_id', '=', webhookId).executeTakeFirst();
  return row?.secret;
}

/** Sets or replaces a webhook's GitHub secret. */
export async function saveGithubSecret(db: Db, webhookId: string, secret: string, now: number): Promise<void> {
  await db
    .insertInto('webhook_github_secrets')
    .values({ webhook_id: webhookId, secret, updated_at: now })
    .onConflict((oc) => oc.column('webhook_id').doUpdateSet({ secret, updated_at: now }))
    .execute();
}

export async function deleteGithubSecret(db: Db, webhookId: string): Promise<void> {
  await db.deleteFrom('webhook_github_secrets').where('webhook_id', '=', webhookId).execute();
}

/** Which of a server's webhooks have a GitHub secret, for the Integrations pages. */
export async function webhooksWithGithubSecret(db: Db, serverId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('webhook_github_secrets')
    .innerJoin('webhooks', 'webhooks.id', 'webhook_github_secrets.webhook_id')
    .select('webhook_github_secrets.webhook_id')
    .where('webhooks.server_id', '=', serverId)
    .execute();
  return new Set(rows.map((r) => toId(r.webhook_id)));
}

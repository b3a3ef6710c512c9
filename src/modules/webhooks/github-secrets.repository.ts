import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * A webhook's GitHub secret, as stored: sealed (core/sealed.ts), `plain:<secret>` when set before
 * sealing, or undefined when none is set (issue #23, issue #36 §2).
 */
export async function findStoredGithubSecret(db: Db, webhookId: string): Promise<string | undefined> {
  const row = await db.selectFrom('webhooks').select('github_secret_sealed').where('id', '=', webhookId).executeTakeFirst();
  return row?.github_secret_sealed ?? undefined;
}

/** Sets (a sealed value) or removes (null) a webhook's GitHub secret. */
export async function saveGithubSecret(db: Db, webhookId: string, sealed: string | null): Promise<void> {
  await db.updateTable('webhooks').set({ github_secret_sealed: sealed }).where('id', '=', webhookId).execute();
}

/**
 * Replaces the stored value only if it is still `previous` (sealing a plain or an old-key value on
 * first use), so a secret changed meanwhile on another instance is never overwritten.
 */
export async function resealGithubSecret(db: Db, webhookId: string, previous: string, sealed: string): Promise<void> {
  await db.updateTable('webhooks').set({ github_secret_sealed: sealed }).where('id', '=', webhookId).where('github_secret_sealed', '=', previous).execute();
}

/** Webhooks whose GitHub secret is still in plain text (`plain:<secret>`, migration 2026-11-27-10). */
export async function plainGithubSecrets(db: Db): Promise<{ id: string; githubSecretSealed: string }[]> {
  const rows = await db.selectFrom('webhooks').select(['id', 'github_secret_sealed']).where('github_secret_sealed', 'like', 'plain:%').execute();
  return rows.map((r) => ({ id: toId(r.id), githubSecretSealed: r.github_secret_sealed ?? '' }));
}

/** Which of a server's webhooks have a GitHub secret, for the Integrations pages. */
export async function webhooksWithGithubSecret(db: Db, serverId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('webhooks').select('id').where('server_id', '=', serverId).where('github_secret_sealed', 'is not', null).execute();
  return new Set(rows.map((r) => toId(r.id)));
}

/**
 * Records a signed delivery; false, with nothing written, when this webhook already received the
 * same delivery id or the same body (issue #36 §2: a replay). One statement, so two instances
 * receiving the same delivery at once record it once.
 */
export async function recordGithubDelivery(db: Db, delivery: { webhookId: string; deliveryId: string; bodyHash: string; expiresAt: number }): Promise<boolean> {
  const result = await db
    .insertInto('webhook_github_deliveries')
    .values({ webhook_id: delivery.webhookId, delivery_id: delivery.deliveryId, body_hash: delivery.bodyHash, expires_at: delivery.expiresAt })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** Forgets a delivery whose message could not be posted, so that GitHub's "Redeliver" can post it. */
export async function forgetGithubDelivery(db: Db, webhookId: string, deliveryId: string): Promise<void> {
  await db.deleteFrom('webhook_github_deliveries').where('webhook_id', '=', webhookId).where('delivery_id', '=', deliveryId).execute();
}

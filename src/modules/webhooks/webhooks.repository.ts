import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toBool, toId, toIdOrNull, toNum } from '../../storage/types.js';
import { WEBHOOKS_PER_CHANNEL, type Webhook, type WebhookWithCreator } from './webhooks.js';
import type { WebhooksTable } from './webhooks.table.js';
import { hotLookup } from '../../storage/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

function toWebhook(row: Selectable<WebhooksTable>): Webhook {
  return {
    id: toId(row.id),
    tokenHash: row.token_hash,
    serverId: toId(row.server_id),
    channelId: toId(row.channel_id),
    name: row.name,
    avatarUrl: row.avatar_url,
    applicationId: toIdOrNull(row.application_id),
    creatorId: toId(row.creator_id),
    createdAt: toNum(row.created_at),
    githubSecretSealed: row.github_secret_sealed,
  };
}

/** Runs `work` in a transaction, or in the caller's when `db` already is one. */
async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  return db.transaction().execute(work);
}

/**
 * Inserts a webhook unless its channel already has 10 (SPEC §8). One conditional UPDATE on the
 * channel's counter decides, atomically on both databases (PostgreSQL re-checks the WHERE after
 * waiting for the row lock; SQLite serialises writers), so racing creations never exceed the limit.
 * Returns false, with nothing written, when the channel is full or does not exist.
 */
export async function insertWebhookCounted(db: Db, webhook: Webhook): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const counted = await trx
      .updateTable('channels')
      .set({ webhook_count: sql<number>`webhook_count + 1` })
      .where('id', '=', webhook.channelId)
      .where('webhook_count', '<', WEBHOOKS_PER_CHANNEL)
      .executeTakeFirst();
    if (counted.numUpdatedRows === 0n) return false;
    await trx
      .insertInto('webhooks')
      .values({
        id: webhook.id,
        token_hash: webhook.tokenHash,
        server_id: webhook.serverId,
        channel_id: webhook.channelId,
        name: webhook.name,
        avatar_url: webhook.avatarUrl,
        application_id: webhook.applicationId,
        creator_id: webhook.creatorId,
        created_at: webhook.createdAt,
      })
      .execute();
    return true;
  });
}

// DESIGN §5: the lookup of every webhook URL request (storage/prepared.ts hotLookup).
const webhookById = hotLookup({ table: 'webhooks', key: 'id', convert: toWebhook });

/** The webhook, shared and frozen; undefined when there is none or `id` is not a snowflake. */
export function findWebhook(db: Db, id: string): Promise<Webhook | undefined> {
  if (!/^\d{1,20}$/.test(id)) return Promise.resolve(undefined);
  return webhookById(db, id);
}

/** Changes a webhook's name, avatar or token hash; false when it no longer exists. */
export async function updateWebhook(db: Db, id: string, changes: { name?: string; avatarUrl?: string | null; tokenHash?: string }): Promise<boolean> {
  const set: { name?: string; avatar_url?: string | null; token_hash?: string } = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.avatarUrl !== undefined) set.avatar_url = changes.avatarUrl;
  if (changes.tokenHash !== undefined) set.token_hash = changes.tokenHash;
  if (Object.keys(set).length === 0) return (await findWebhook(db, id)) !== undefined;
  const result = await db.updateTable('webhooks').set(set).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Deletes a webhook and frees its slot in the channel's counter, together. Its messages stay in
 * the channel (SPEC §2.8). False when it was already gone (then the counter is left alone).
 */
export async function deleteWebhook(db: Db, id: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const row = await trx.deleteFrom('webhooks').where('id', '=', id).returning(['channel_id']).executeTakeFirst();
    if (!row) return false;
    await trx
      .updateTable('channels')
      .set({ webhook_count: sql<number>`webhook_count - 1` })
      .where('id', '=', toId(row.channel_id))
      .where('webhook_count', '>', 0)
      .execute();
    return true;
  });
}

/** A channel's webhooks, oldest first. */
export async function listChannelWebhooks(db: Db, channelId: string): Promise<Webhook[]> {
  const rows = await db.selectFrom('webhooks').selectAll().where('channel_id', '=', channelId).orderBy('id').execute();
  return rows.map(toWebhook);
}

/** A server's webhooks over all its channels, oldest first. */
export async function listServerWebhooks(db: Db, serverId: string): Promise<Webhook[]> {
  const rows = await db.selectFrom('webhooks').selectAll().where('server_id', '=', serverId).orderBy('id').execute();
  return rows.map(toWebhook);
}

/** A server's webhooks (or one channel's) with their creators' names, in one query, oldest first. */
export async function listWebhooksWithCreators(db: Db, scope: { serverId: string; channelId?: string }): Promise<WebhookWithCreator[]> {
  let query = db
    .selectFrom('webhooks')
    .leftJoin('users', 'users.id', 'webhooks.creator_id')
    .selectAll('webhooks')
    .select(['users.name as creator_name', 'users.bot as creator_bot'])
    .where('webhooks.server_id', '=', scope.serverId);
  if (scope.channelId !== undefined) query = query.where('webhooks.channel_id', '=', scope.channelId);
  const rows = await query.orderBy('webhooks.id').execute();
  return rows.map((row) => ({
    ...toWebhook(row),
    creatorName: row.creator_name ?? null,
    creatorIsBot: row.creator_bot === null ? false : toBool(row.creator_bot),
  }));
}

/**
 * The webhooks an application's `webhook.incoming` authorizations created (issue #39): its
 * application_id with a person as creator; those its bot created carry the bot's account instead.
 */
export async function listIncomingWebhooksOfApplication(db: Db, applicationId: string, botUserId: string | null): Promise<Webhook[]> {
  let query = db.selectFrom('webhooks').selectAll().where('application_id', '=', applicationId);
  if (botUserId !== null) query = query.where('creator_id', '!=', botUserId);
  const rows = await query.orderBy('id').execute();
  return rows.map(toWebhook);
}

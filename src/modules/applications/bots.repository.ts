import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import type { Application } from './applications.js';
import { toApplication } from './applications.repository.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The application whose bot token hashes to `hash`: one lookup on applications_bot_token_idx
 * (DESIGN §5: bot requests are a hot path). Undefined when no bot has that token, and (issue #39)
 * while the app's owner is disabled: the owner is joined in the same statement, not read after.
 */
export async function findApplicationByBotTokenHash(db: Db, hash: string): Promise<Application | undefined> {
  const row = await db
    .selectFrom('applications')
    .innerJoin('users as owner', 'owner.id', 'applications.owner_id')
    .selectAll('applications')
    .where('applications.bot_token_hash', '=', hash)
    .where('applications.bot_user_id', 'is not', null)
    .where('owner.disabled_at', 'is', null)
    .executeTakeFirst();
  return row ? toApplication(row) : undefined;
}

/**
 * Attaches a bot account and its token hash to an application that has none yet, in one UPDATE
 * guarded by `bot_user_id IS NULL`, so two "Add bot" clicks cannot both succeed. False when the
 * application is gone or already has a bot.
 */
export async function attachBot(db: Db, appId: string, botUserId: string, tokenHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('applications')
    .set({ bot_user_id: botUserId, bot_token_hash: tokenHash, updated_at: now })
    .where('id', '=', appId)
    .where('bot_user_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Replaces a bot's token hash in one statement: the old token stops authenticating the moment
 * this returns (issue #4: "the old token stops working at once"). False when the app has no bot.
 */
export async function replaceBotTokenHash(db: Db, appId: string, tokenHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('applications')
    .set({ bot_token_hash: tokenHash, updated_at: now })
    .where('id', '=', appId)
    .where('bot_user_id', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** True when `userId` is one of the two people of the direct-message channel `channelId`. */
export async function isDmParticipant(db: Db, channelId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('dm_channels')
    .select('channel_id')
    .where('channel_id', '=', channelId)
    .where((eb) => eb.or([eb('user_low', '=', userId), eb('user_high', '=', userId)]))
    .executeTakeFirst();
  return row !== undefined;
}

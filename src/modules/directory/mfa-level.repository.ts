import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The person a bot account answers to under a server's MFA level (issue #38 §4: "bots they own
 * acting with elevated permissions, as Discord does"): its application's owner. Undefined for a
 * person's account, or a bot whose application is gone.
 */
export async function findBotOwnerId(db: Db, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .innerJoin('applications', 'applications.id', 'users.application_id')
    .select('applications.owner_id')
    .where('users.id', '=', userId)
    .where('users.bot', '=', 1)
    .executeTakeFirst();
  return row ? toId(row.owner_id) : undefined;
}

/** Whether the account is a bot's (bots have no second factor of their own: their owner's counts). */
export async function isBotAccount(db: Db, userId: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('bot').where('id', '=', userId).executeTakeFirst();
  return row !== undefined && Number(row.bot) === 1;
}

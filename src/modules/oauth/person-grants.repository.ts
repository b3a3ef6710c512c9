import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId } from '../../storage/types.js';
import { revokeAllGrantsOf } from './grants.repository.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Issue #39: ends every grant a person gave any app (the operator disabled them), with
 * revokeAllGrantsOf per app: tokens deleted, unused codes spent, grants revoked, consents
 * forgotten (so enabling the account restores none of them). Returns the apps that had a grant in
 * force, one grant.revoked each.
 */
export async function revokeEveryGrantOfPerson(db: Db, userId: string, now: number): Promise<string[]> {
  const rows = await db.selectFrom('oauth_grants').select('application_id').distinct().where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
  const ended: string[] = [];
  for (const row of rows) {
    const applicationId = toId(row.application_id);
    if ((await revokeAllGrantsOf(db, userId, applicationId, now)) > 0) ended.push(applicationId);
  }
  // Consents without a grant in force (every token expired) are forgotten too.
  await db.deleteFrom('oauth_consents').where('user_id', '=', userId).execute();
  return ended;
}

/** How many grants the person has in force (the operator's counts before a disable). */
export async function countGrantsOfPerson(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('oauth_grants')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

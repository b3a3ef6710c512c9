import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toIdOrNull, toNum } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A user install as Settings → Installed apps lists it: the app, its bot, and when it was installed. */
export interface UserInstall {
  applicationId: string;
  name: string;
  iconUrl: string | null;
  botUserId: string | null;
  installedAt: number;
}

/**
 * Records that `userId` installed the app (applications.commands without bot, SPEC §5.2).
 * Installing again keeps the first row and its date; returns whether a row was added.
 */
export async function insertUserInstall(db: Db, install: { applicationId: string; userId: string; createdAt: number }): Promise<boolean> {
  const result = await db
    .insertInto('user_installs')
    .values({ application_id: install.applicationId, user_id: install.userId, created_at: install.createdAt })
    .onConflict((oc) => oc.columns(['application_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function hasUserInstall(db: Db, applicationId: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom('user_installs').select('user_id').where('application_id', '=', applicationId).where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

/** The person's user-installed apps, most recently installed first. */
export async function listUserInstalls(db: Db, userId: string): Promise<UserInstall[]> {
  const rows = await db
    .selectFrom('user_installs')
    .innerJoin('applications', 'applications.id', 'user_installs.application_id')
    .select(['user_installs.application_id', 'user_installs.created_at', 'applications.name', 'applications.icon_url', 'applications.bot_user_id'])
    .where('user_installs.user_id', '=', userId)
    .orderBy('user_installs.created_at', 'desc')
    .orderBy('user_installs.application_id', 'desc')
    .execute();
  return rows.map((row) => ({
    applicationId: toId(row.application_id),
    name: row.name,
    iconUrl: row.icon_url,
    botUserId: toIdOrNull(row.bot_user_id),
    installedAt: toNum(row.created_at),
  }));
}

/** Removes one user install; false when there was none. */
export async function deleteUserInstall(db: Db, applicationId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('user_installs').where('application_id', '=', applicationId).where('user_id', '=', userId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

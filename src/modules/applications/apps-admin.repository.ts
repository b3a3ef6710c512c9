import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import type { Application } from './applications.js';
import { toApplication } from './applications.repository.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The operator's list of applications (issue #39): optionally one owner's, after an id, oldest first. */
export interface ApplicationsFilter {
  ownerId?: string | undefined;
  disabled?: boolean | undefined;
  /** Only applications newer than this id (the previous page's last): ids are time-ordered snowflakes. */
  after?: string | undefined;
  limit: number;
}

/** One page of applications; `limit + 1` rows are read so the caller knows whether another page follows. */
export async function listApplicationsPage(db: Db, filter: ApplicationsFilter): Promise<Application[]> {
  let query = db.selectFrom('applications').selectAll();
  if (filter.ownerId !== undefined) query = query.where('owner_id', '=', filter.ownerId);
  if (filter.disabled === true) query = query.where('disabled_at', 'is not', null);
  if (filter.after !== undefined) query = query.where('id', '>', filter.after);
  const rows = await query.orderBy('id').limit(filter.limit + 1).execute();
  return rows.map(toApplication);
}

/** Marks the application disabled; false when it already was or is gone (a second disable changes nothing). */
export async function markApplicationDisabled(db: Db, id: string, at: number, reason: string | null): Promise<boolean> {
  const result = await db.updateTable('applications').set({ disabled_at: at, disabled_reason: reason }).where('id', '=', id).where('disabled_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Enables a disabled application; false when it was not disabled. */
export async function markApplicationEnabled(db: Db, id: string): Promise<boolean> {
  const result = await db.updateTable('applications').set({ disabled_at: null, disabled_reason: null }).where('id', '=', id).where('disabled_at', 'is not', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toNumOrNull } from '../../storage/types.js';
import type { Person } from './people.js';
import { toPerson } from './people.rows.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A person as the operator's list and page show them (issue #39). */
export interface AdministeredPerson extends Person {
  disabledReason: string | null;
  signupAddress: string | null;
}

export interface PeopleFilter {
  /** Part of the username, display name, e-mail or sign-up address, ignoring case. */
  query?: string | undefined;
  disabled?: boolean | undefined;
  admins?: boolean | undefined;
  limit: number;
  /** Only people older than this id (the previous page's last), ids being time-ordered snowflakes. */
  before?: string | undefined;
  offset?: number | undefined;
}

/** `%`, `_` and the escape character itself match literally in a LIKE pattern with `escape '\'`. */
function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * People (never bots, never deleted accounts: those keep no password) newest first, filtered;
 * `limit + 1` rows are read so the caller knows whether a next page exists.
 */
export async function listPeople(db: Db, filter: PeopleFilter): Promise<AdministeredPerson[]> {
  let query = db.selectFrom('users').selectAll().where('bot', '=', 0).where('password_hash', 'is not', null);
  if (filter.query !== undefined && filter.query !== '') {
    const pattern = likePattern(filter.query);
    query = query.where((eb) =>
      eb.or([
        eb(sql<string>`lower(username)`, 'like', sql<string>`${pattern} escape '\\'`),
        eb(sql<string>`lower(name)`, 'like', sql<string>`${pattern} escape '\\'`),
        eb(sql<string>`lower(coalesce(email, ''))`, 'like', sql<string>`${pattern} escape '\\'`),
        eb(sql<string>`lower(coalesce(signup_address, ''))`, 'like', sql<string>`${pattern} escape '\\'`),
      ]),
    );
  }
  if (filter.disabled === true) query = query.where('disabled_at', 'is not', null);
  if (filter.admins === true) query = query.where('is_admin', '=', 1);
  if (filter.before !== undefined) query = query.where('id', '<', filter.before);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .offset(filter.offset ?? 0)
    .execute();
  return rows.map(toAdministered);
}

function toAdministered(row: Parameters<typeof toPerson>[0]): AdministeredPerson {
  return { ...toPerson(row), disabledReason: row.disabled_reason, signupAddress: row.signup_address };
}

/** One person (not a bot) with the operator's fields, by id. */
export async function findAdministeredPerson(db: Db, id: string): Promise<AdministeredPerson | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).where('bot', '=', 0).executeTakeFirst();
  return row ? toAdministered(row) : undefined;
}

/** Marks the account disabled; false when it already was (a second disable changes nothing). */
export async function markDisabled(db: Db, id: string, at: number, reason: string | null): Promise<boolean> {
  const result = await db.updateTable('users').set({ disabled_at: at, disabled_reason: reason }).where('id', '=', id).where('disabled_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Enables a disabled account; false when it was not disabled. */
export async function markEnabled(db: Db, id: string): Promise<boolean> {
  const result = await db.updateTable('users').set({ disabled_at: null, disabled_reason: null }).where('id', '=', id).where('disabled_at', 'is not', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Sets whether the person is an administrator; false when they already were (or were not). */
export async function markAdmin(db: Db, id: string, admin: boolean): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ is_admin: admin ? 1 : 0 })
    .where('id', '=', id)
    .where('is_admin', '=', admin ? 0 : 1)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The administrators whose accounts work (not disabled, not deleted). */
export async function countWorkingAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .where('is_admin', '=', 1)
    .where('disabled_at', 'is', null)
    .where('password_hash', 'is not', null)
    .executeTakeFirstOrThrow();
  return toNumOrNull(row.n) ?? 0;
}

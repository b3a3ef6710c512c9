/**
 * What: the database's record of which server secret it is used with (issue #36 §4), so that an
 * instance started with another secret (a second machine without GATEHOUSE_SECRET makes its own
 * file) refuses to start instead of sealing and deriving what the others cannot open.
 * Invariant: the row holds a check value (core/sealed.ts secretCheck), never a secret; it names
 * the secret that seals now, the first of GATEHOUSE_SECRET's list.
 * Tested: test/storage/server-secret-check.test.ts.
 */
import type { Kysely } from 'kysely';
import type { Database } from './database.js';

/**
 * Records `checks[0]` when the database has no check yet; otherwise accepts the instance when the
 * recorded check is one of `checks` (the instance's secrets, first the one it seals with). When it
 * matches a later one, the instance is rotating to a new first secret, so the record moves to it:
 * from then on, an instance holding only the old secret is refused, since it could not open what
 * is sealed with the new one. Returns false when the instance must not start.
 */
export async function settleSecretCheck(db: Kysely<Database>, checks: readonly [string, ...string[]], now: number): Promise<boolean> {
  const [current] = checks;
  await db
    .insertInto('server_secret_check')
    .values({ id: 1, check_value: current, recorded_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const recorded = await recordedCheck(db);
  if (recorded === current) return true;
  if (recorded === undefined || !checks.includes(recorded)) return false;
  // Compare-and-set: an instance that moved the record at the same moment wins, and we judge its value.
  await db.updateTable('server_secret_check').set({ check_value: current, recorded_at: now }).where('id', '=', 1).where('check_value', '=', recorded).execute();
  const after = await recordedCheck(db);
  return after !== undefined && checks.includes(after);
}

/** Replaces the record with `check` (`gatehouse secret adopt`: the previous secret is lost). */
export async function adoptSecretCheck(db: Kysely<Database>, check: string, now: number): Promise<void> {
  await db
    .insertInto('server_secret_check')
    .values({ id: 1, check_value: check, recorded_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ check_value: check, recorded_at: now }))
    .execute();
}

async function recordedCheck(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db.selectFrom('server_secret_check').select('check_value').where('id', '=', 1).executeTakeFirst();
  return row?.check_value;
}

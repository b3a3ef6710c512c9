import type { Kysely, Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { countWorkingAdmins, findAdministeredPerson, listPeople, markAdmin, markDisabled, markEnabled, type AdministeredPerson, type PeopleFilter } from './people-admin.repository.js';

/**
 * The operator's side of people's rows (issue #39), for accounts/people-admin.service.ts, which
 * runs the use cases: reads take `deps`; writes are steps of the caller's change and take its
 * transaction, so the last-admin check and the change commit together.
 */

type Executor = Kysely<Database> | Transaction<Database>;

export type { AdministeredPerson, PeopleFilter };

export function findPeople(deps: Deps, filter: PeopleFilter): Promise<AdministeredPerson[]> {
  return listPeople(deps.db, filter);
}

export function getAdministeredPerson(deps: Deps, id: string): Promise<AdministeredPerson | undefined> {
  return findAdministeredPerson(deps.db, id);
}

export function saveDisabled(trx: Executor, id: string, at: number, reason: string | null): Promise<boolean> {
  return markDisabled(trx, id, at, reason);
}

export function saveEnabled(trx: Executor, id: string): Promise<boolean> {
  return markEnabled(trx, id);
}

export function saveAdmin(trx: Executor, id: string, admin: boolean): Promise<boolean> {
  return markAdmin(trx, id, admin);
}

export function workingAdminCount(trx: Executor): Promise<number> {
  return countWorkingAdmins(trx);
}

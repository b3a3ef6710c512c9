import type { Kysely, Transaction } from 'kysely';
import type { Actor } from '../../core/actor.js';
import { ApiError } from '../../core/errors.js';
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

/**
 * Issue #39: GATEHOUSE_SERVER_CREATION and GATEHOUSE_APP_CREATION. With `admins`, a person who is
 * not an instance administrator is refused (403 50013, a sentence the pages show); the operator
 * (CLI) always may, and with `everyone` so may everybody. Checked by the creating services, so the
 * pages, the API and the developer portal refuse alike.
 */
export async function checkMayCreate(deps: Deps, actor: Actor, what: 'servers' | 'apps'): Promise<void> {
  const rule = what === 'servers' ? deps.config.serverCreation : deps.config.appCreation;
  if (rule === 'everyone' || actor.kind === 'operator') return;
  const person = actor.kind === 'person' ? await findAdministeredPerson(deps.db, actor.id) : undefined;
  if (person?.admin === true && person.disabledAt === null) return;
  throw new ApiError(403, 50013, `On this instance only administrators can create ${what === 'servers' ? 'servers' : 'apps'}.`);
}

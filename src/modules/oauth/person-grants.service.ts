import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import { countGrantsOfPerson, revokeEveryGrantOfPerson } from './person-grants.repository.js';

/**
 * A step of disabling a person (issue #39), in its caller's transaction: every grant they gave
 * ends, so refresh answers invalid_grant and their bearer tokens 401. Returns the apps whose grant
 * ended; the caller emits grant.revoked for each.
 */
export function revokeEveryGrantOf(trx: Transaction<Database>, userId: string, now: number): Promise<string[]> {
  return revokeEveryGrantOfPerson(trx, userId, now);
}

/** How many OAuth grants of the person are in force (issue #39: what a disable would end). */
export function grantsInForceOf(deps: Deps, userId: string): Promise<number> {
  return countGrantsOfPerson(deps.db, userId);
}

import type { Kysely, Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../storage/database.js';
import type { Person } from './people.js';
import { findCredentials, findPasswordHash, findPeopleByEmail, findPersonById, findPersonByUsername, insertPerson, updatePasswordHash, updateProfile, updateVerifiedEmail, type NewPerson } from './people.repository.js';

/**
 * People's rows for the modules that sign people in (accounts/), create bot accounts
 * (applications/) and name message authors (messages/): modules reach each other through
 * services (DESIGN §2), and lint holds them to it. Reads take `deps`; writes take the database or
 * the caller's transaction, because accounts/ and applications/ write a person together with
 * other rows.
 */

type Executor = Kysely<Database> | Transaction<Database>;

export function getPersonById(deps: Deps, id: string): Promise<Person | undefined> {
  return findPersonById(deps.db, id);
}

export function getPersonByUsername(deps: Deps, username: string): Promise<Person | undefined> {
  return findPersonByUsername(deps.db, username);
}

/** The person who may sign in with this username and their password hash (bots have none). */
export function getCredentials(deps: Deps, username: string): Promise<{ person: Person; passwordHash: string } | undefined> {
  return findCredentials(deps.db, username);
}

/** The password hash of a person by id (undefined for bots and unknown ids). */
export function getPasswordHash(deps: Deps, id: string): Promise<string | undefined> {
  return findPasswordHash(deps.db, id);
}

/** Throws a unique violation when the username (ignoring case) is taken. */
export function createPerson(db: Executor, person: NewPerson): Promise<void> {
  return insertPerson(db, person);
}

/** Stores checked profile fields; a new email is unverified. */
export function saveProfile(db: Executor, id: string, changes: { name?: string; email?: string | null; avatarUrl?: string | null }): Promise<void> {
  return updateProfile(db, id, changes);
}

export function savePasswordHash(db: Executor, id: string, passwordHash: string): Promise<void> {
  return updatePasswordHash(db, id, passwordHash);
}

/** Issue #38 §3: the people whose address is `email`, ignoring case ("Forgot password?"). */
export function getPeopleByEmail(deps: Deps, email: string): Promise<Person[]> {
  return findPeopleByEmail(deps.db, email);
}

/** Issue #38 §2: stores `email` as the person's verified address. */
export function saveVerifiedEmail(db: Executor, id: string, email: string): Promise<void> {
  return updateVerifiedEmail(db, id, email);
}

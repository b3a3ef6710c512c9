import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { fromBool } from '../../storage/types.js';
import { usernameKey, type Person } from './people.js';
import { toPerson } from './people.rows.js';
import { hotLookup } from '../../storage/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewPerson {
  id: string;
  username: string;
  name: string;
  email: string | null;
  passwordHash: string | null;
  bot: boolean;
  applicationId: string | null;
  avatarUrl: string | null;
  createdAt: number;
  /** Issue #39: the sign-up page's client address; absent or null for the operator's and bots. */
  signupAddress?: string | null;
}

/** Throws a unique violation when the username (ignoring case) is taken. */
export async function insertPerson(db: Db, person: NewPerson): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: person.id,
      username: person.username,
      username_key: usernameKey(person.username),
      name: person.name,
      email: person.email,
      email_verified: 0,
      avatar_url: person.avatarUrl,
      password_hash: person.passwordHash,
      bot: fromBool(person.bot),
      application_id: person.applicationId,
      created_at: person.createdAt,
      signup_address: person.signupAddress ?? null,
    })
    .execute();
}

// DESIGN §5: GET /users/@me and every bot request look the person up; compiled once (storage/prepared.ts).
const personById = hotLookup({ table: 'users', key: 'id', convert: toPerson });

export function findPersonById(db: Db, id: string): Promise<Person | undefined> {
  return personById(db, id);
}

export async function findPersonByUsername(db: Db, username: string): Promise<Person | undefined> {
  const row = await db.selectFrom('users').selectAll().where('username_key', '=', usernameKey(username)).executeTakeFirst();
  return row ? toPerson(row) : undefined;
}

/** The stored password hash of a person who can sign in (bots have none). */
export async function findCredentials(db: Db, username: string): Promise<{ person: Person; passwordHash: string } | undefined> {
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where('username_key', '=', usernameKey(username))
    .where('bot', '=', 0)
    .executeTakeFirst();
  if (!row || row.password_hash === null) return undefined;
  return { person: toPerson(row), passwordHash: row.password_hash };
}

export async function updateProfile(db: Db, id: string, changes: { name?: string; email?: string | null; avatarUrl?: string | null }): Promise<void> {
  const set: { name?: string; email?: string | null; email_verified?: 0 | 1; avatar_url?: string | null } = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.email !== undefined) {
    set.email = changes.email;
    set.email_verified = 0;
  }
  if (changes.avatarUrl !== undefined) set.avatar_url = changes.avatarUrl;
  if (Object.keys(set).length === 0) return;
  await db.updateTable('users').set(set).where('id', '=', id).execute();
}

/** The stored password hash of a person by id (undefined for bots and unknown ids). */
export async function findPasswordHash(db: Db, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', id).where('bot', '=', 0).executeTakeFirst();
  return row?.password_hash ?? undefined;
}

export async function updatePasswordHash(db: Db, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/** Issue #38 §3: the people (never bots) whose address is `email`, ignoring case. */
export async function findPeopleByEmail(db: Db, email: string): Promise<Person[]> {
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('bot', '=', 0)
    .limit(10)
    .execute();
  return rows.map(toPerson);
}

/** Issue #38 §2: a verified address becomes the person's address. */
export async function updateVerifiedEmail(db: Db, id: string, email: string): Promise<void> {
  await db.updateTable('users').set({ email, email_verified: 1 }).where('id', '=', id).execute();
}

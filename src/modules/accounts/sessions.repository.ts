import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { firstRow, prepareQuery } from '../../storage/prepared.js';
import { toId, toNum } from '../../storage/types.js';
import { toPerson } from '../directory/people.rows.js';
import type { Person } from '../directory/people.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface SessionRecord {
  idHash: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

export async function insertSession(db: Db, s: SessionRecord & { userAgent: string | null; address: string | null }): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      id_hash: s.idHash,
      user_id: s.userId,
      created_at: s.createdAt,
      last_seen_at: s.lastSeenAt,
      expires_at: s.expiresAt,
      user_agent: s.userAgent,
      address: s.address,
    })
    .execute();
}

// Prepared (storage/prepared.ts): it runs on every signed-in request.
const sessionWithPerson = prepareQuery<{ idHash: string }>()((db, v) =>
  db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .selectAll('users')
    .select(['sessions.id_hash', 'sessions.created_at as s_created_at', 'sessions.last_seen_at', 'sessions.expires_at'])
    .where('sessions.id_hash', '=', v.idHash),
);

/** The session and its person in one round trip: this runs on every page view. */
export async function findSessionWithPerson(db: Db, idHash: string): Promise<{ session: SessionRecord; person: Person } | undefined> {
  const row = await firstRow(sessionWithPerson(db, { idHash }));
  if (!row) return undefined;
  const person = toPerson(row);
  return {
    person,
    session: {
      idHash: row.id_hash,
      userId: person.id,
      createdAt: toNum(row.s_created_at),
      lastSeenAt: toNum(row.last_seen_at),
      expiresAt: toNum(row.expires_at),
    },
  };
}

export async function touchSession(db: Db, idHash: string, lastSeenAt: number, expiresAt: number): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('id_hash', '=', idHash).execute();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** Ends every session of a person, except the one whose hash is `keepIdHash` when given. */
export async function deleteSessionsOfUser(db: Db, userId: string, keepIdHash?: string): Promise<number> {
  let query = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepIdHash !== undefined) query = query.where('id_hash', '<>', keepIdHash);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A session as Settings → Sessions lists it. */
export interface SessionListing extends SessionRecord {
  userAgent: string | null;
  address: string | null;
}

/** The person's sessions not yet expired, the most recently used first. */
export async function listSessionsOfUser(db: Db, userId: string, now: number): Promise<SessionListing[]> {
  const rows = await db
    .selectFrom('sessions')
    .select(['id_hash', 'user_id', 'created_at', 'last_seen_at', 'expires_at', 'user_agent', 'address'])
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((row) => ({
    idHash: row.id_hash,
    userId: toId(row.user_id),
    createdAt: toNum(row.created_at),
    lastSeenAt: toNum(row.last_seen_at),
    expiresAt: toNum(row.expires_at),
    userAgent: row.user_agent,
    address: row.address,
  }));
}

/** Ends one session of a person; false when they have none with that hash (ended already, or someone else's). */
export async function deleteSessionOfUser(db: Db, userId: string, idHash: string): Promise<boolean> {
  const result = await db.deleteFrom('sessions').where('user_id', '=', userId).where('id_hash', '=', idHash).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

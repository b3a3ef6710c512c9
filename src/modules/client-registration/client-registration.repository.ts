import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNumOrNull } from '../../storage/types.js';
import type { StoredMetadata } from './client-registration.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface RegisteredClientRow {
  applicationId: string;
  registrationTokenHash: string;
  metadata: StoredMetadata;
}

export async function insertRegisteredClient(db: Db, row: RegisteredClientRow & { address: string | null; createdAt: number }): Promise<void> {
  await db
    .insertInto('registered_clients')
    .values({ application_id: row.applicationId, registration_token_hash: row.registrationTokenHash, metadata: JSON.stringify(row.metadata), registered_address: row.address, created_at: row.createdAt })
    .execute();
}

export async function findRegisteredClient(db: Db, applicationId: string): Promise<RegisteredClientRow | undefined> {
  const row = await db.selectFrom('registered_clients').select(['application_id', 'registration_token_hash', 'metadata']).where('application_id', '=', applicationId).executeTakeFirst();
  if (!row) return undefined;
  return { applicationId: toId(row.application_id), registrationTokenHash: row.registration_token_hash, metadata: JSON.parse(row.metadata) as StoredMetadata };
}

export async function updateRegisteredMetadata(db: Db, applicationId: string, metadata: StoredMetadata): Promise<boolean> {
  const result = await db.updateTable('registered_clients').set({ metadata: JSON.stringify(metadata) }).where('application_id', '=', applicationId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertRegistrationToken(db: Db, row: { id: string; tokenHash: string; expiresAt: number | null; createdAt: number }): Promise<void> {
  await db.insertInto('registration_tokens').values({ id: row.id, token_hash: row.tokenHash, expires_at: row.expiresAt, created_at: row.createdAt }).execute();
}

/** The expiry of the initial access token with this hash (null: never), or undefined when there is none. */
export async function findRegistrationTokenExpiry(db: Db, tokenHash: string): Promise<{ expiresAt: number | null } | undefined> {
  const row = await db.selectFrom('registration_tokens').select('expires_at').where('token_hash', '=', tokenHash).executeTakeFirst();
  return row ? { expiresAt: toNumOrNull(row.expires_at) } : undefined;
}

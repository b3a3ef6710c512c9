import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The application a client ID metadata document's URL stands for, if it was seen before. */
export async function findDocumentApplicationId(db: Db, url: string): Promise<string | undefined> {
  const row = await db.selectFrom('client_metadata_documents').select('application_id').where('url', '=', url).executeTakeFirst();
  return row ? toId(row.application_id) : undefined;
}

export async function insertDocument(db: Db, row: { url: string; applicationId: string; fetchedAt: number }): Promise<void> {
  await db.insertInto('client_metadata_documents').values({ url: row.url, application_id: row.applicationId, fetched_at: row.fetchedAt }).execute();
}

export async function touchDocument(db: Db, url: string, fetchedAt: number): Promise<void> {
  await db.updateTable('client_metadata_documents').set({ fetched_at: fetchedAt }).where('url', '=', url).execute();
}

/** The URL of the document an application stands for, or undefined for any other application. */
export async function findDocumentUrl(db: Db, applicationId: string): Promise<string | undefined> {
  const row = await db.selectFrom('client_metadata_documents').select('url').where('application_id', '=', applicationId).executeTakeFirst();
  return row?.url;
}

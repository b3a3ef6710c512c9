import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { fromBool, toBool, toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';
import type { ApplicationsTable } from './applications.table.js';
import type { Application } from './applications.js';
import { hotLookup } from '../../storage/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

export function toApplication(row: Selectable<ApplicationsTable>): Application {
  return {
    id: toId(row.id),
    ownerId: toId(row.owner_id),
    name: row.name,
    description: row.description,
    iconUrl: row.icon_url,
    confidential: toBool(row.confidential),
    clientSecretHash: row.client_secret_hash,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    botPublic: toBool(row.bot_public),
    botRequireCodeGrant: toBool(row.bot_require_code_grant),
    botUserId: toIdOrNull(row.bot_user_id),
    createdAt: toNum(row.created_at),
    updatedAt: toNum(row.updated_at),
    disabledAt: toNumOrNull(row.disabled_at),
    disabledReason: row.disabled_reason,
  };
}

export async function insertApplication(db: Db, app: Application): Promise<void> {
  await db
    .insertInto('applications')
    .values({
      id: app.id,
      owner_id: app.ownerId,
      name: app.name,
      description: app.description,
      icon_url: app.iconUrl,
      confidential: fromBool(app.confidential),
      client_secret_hash: app.clientSecretHash,
      redirect_uris: JSON.stringify(app.redirectUris),
      bot_public: fromBool(app.botPublic),
      bot_require_code_grant: fromBool(app.botRequireCodeGrant),
      bot_user_id: app.botUserId,
      bot_token_hash: null,
      created_at: app.createdAt,
      updated_at: app.updatedAt,
    })
    .execute();
}

/** Looks up by client_id; callers must first check `isSnowflake` so bad input never reaches SQL as a non-number. */
// DESIGN §5: every token request and bearer check of /oauth2/@me looks the client up (storage/prepared.ts hotLookup).
const applicationById = hotLookup({ table: 'applications', key: 'id', convert: toApplication });

export function findApplication(db: Db, id: string): Promise<Application | undefined> {
  return applicationById(db, id);
}

/**
 * The same lookup for the OAuth endpoints' client checks, also remembered per instance on
 * PostgreSQL with Redis and forgotten by every instance before a change to an application (a reset
 * secret, a deletion) is acknowledged (storage/coherence.ts), so the token endpoint's client check
 * costs no round trip (issue #26 §1). SQLite's row cache answers both from memory.
 */
const rememberedApplicationById = hotLookup({ table: 'applications', key: 'id', convert: toApplication, acrossInstances: { name: 'applications', maxEntries: 20_000 } });

export function findClientApplication(db: Db, id: string): Promise<Application | undefined> {
  return rememberedApplicationById(db, id);
}

export async function listApplicationsOwnedBy(db: Db, ownerId: string): Promise<Application[]> {
  const rows = await db.selectFrom('applications').selectAll().where('owner_id', '=', ownerId).orderBy('id').execute();
  return rows.map(toApplication);
}

/** The editable fields of an application (the client type is fixed at creation). */
export interface ApplicationChanges {
  name?: string;
  description?: string;
  iconUrl?: string | null;
  redirectUris?: string[];
  botPublic?: boolean;
  botRequireCodeGrant?: boolean;
}

/** Applies `changes`; returns false when the application no longer exists. */
export async function updateApplicationRow(db: Db, id: string, changes: ApplicationChanges, now: number): Promise<boolean> {
  const result = await db
    .updateTable('applications')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.iconUrl !== undefined ? { icon_url: changes.iconUrl } : {}),
      ...(changes.redirectUris !== undefined ? { redirect_uris: JSON.stringify(changes.redirectUris) } : {}),
      ...(changes.botPublic !== undefined ? { bot_public: fromBool(changes.botPublic) } : {}),
      ...(changes.botRequireCodeGrant !== undefined ? { bot_require_code_grant: fromBool(changes.botRequireCodeGrant) } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Replaces a confidential application's secret hash in one statement, so the old secret stops
 * verifying the moment this returns. False when there is no such confidential application.
 */
export async function replaceClientSecretHash(db: Db, id: string, hash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('applications')
    .set({ client_secret_hash: hash, updated_at: now })
    .where('id', '=', id)
    .where('confidential', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes an application; its grants, codes, tokens and consents go with it (ON DELETE CASCADE). */
export async function deleteApplicationRow(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('applications').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum } from '../../storage/types.js';
import type { ResourceScope, ResourceServer } from './resource-servers.js';
import type { ResourceServersTable } from './resource-servers.table.js';

type Db = Kysely<Database> | Transaction<Database>;

function toResourceServer(row: Selectable<ResourceServersTable>): ResourceServer {
  return {
    id: toId(row.id),
    applicationId: toId(row.application_id),
    identifier: row.identifier,
    scopes: JSON.parse(row.scopes) as ResourceScope[],
    accessTokenFormat: row.access_token_format === 'jwt' ? 'jwt' : 'opaque',
    delegatedScopes: (row.delegated_scopes ?? '').split(' ').filter(Boolean),
    createdAt: toNum(row.created_at),
  };
}

export async function insertResourceServer(db: Db, server: ResourceServer): Promise<void> {
  await db
    .insertInto('resource_servers')
    .values({
      id: server.id,
      application_id: server.applicationId,
      identifier: server.identifier,
      scopes: JSON.stringify(server.scopes),
      access_token_format: server.accessTokenFormat,
      delegated_scopes: server.delegatedScopes.join(' '),
      created_at: server.createdAt,
    })
    .execute();
}

/** The resource server a `resource` parameter names (the unique index on identifier). */
export async function findResourceServerByIdentifier(db: Db, identifier: string): Promise<ResourceServer | undefined> {
  const row = await db.selectFrom('resource_servers').selectAll().where('identifier', '=', identifier).executeTakeFirst();
  return row && toResourceServer(row);
}

/** The resource server a grant or token names. */
export async function findResourceServerById(db: Db, id: string): Promise<ResourceServer | undefined> {
  const row = await db.selectFrom('resource_servers').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toResourceServer(row);
}

export async function listResourceServersOf(db: Db, applicationId: string): Promise<ResourceServer[]> {
  const rows = await db.selectFrom('resource_servers').selectAll().where('application_id', '=', applicationId).orderBy('id').execute();
  return rows.map(toResourceServer);
}

/** Deletes the row; its grants go with it (ON DELETE CASCADE), and their tokens with them. */
export async function deleteResourceServer(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('resource_servers').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

import type { Kysely, Selectable, Transaction } from 'kysely';
import type { OAuthGrantsTable } from './oauth.table.js';
import type { Database } from '../../storage/database.js';
import { toId, toIdOrNull, toNum, toNumOrNull } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface Grant {
  id: string;
  applicationId: string;
  userId: string;
  scopes: string[];
  createdAt: number;
  revokedAt: number | null;
  serverId: string | null;
  permissions: string | null;
  /** webhook.incoming (issue #23): the channel chosen on the consent screen. */
  webhookChannelId?: string | null;
  /** RFC 8707 (issue #41): the resource server its tokens are for; null for Gatehouse's own API. */
  resourceServerId?: string | null;
  /** RFC 8693 (issue #41): the resource server's delegated scopes the person approved on the consent screen. */
  delegatedScopes?: readonly string[];
}

export async function insertGrant(db: Db, grant: Omit<Grant, 'revokedAt'>): Promise<void> {
  await db
    .insertInto('oauth_grants')
    .values({
      id: grant.id,
      application_id: grant.applicationId,
      user_id: grant.userId,
      scopes: grant.scopes.join(' '),
      created_at: grant.createdAt,
      revoked_at: null,
      server_id: grant.serverId,
      permissions: grant.permissions,
      webhook_channel_id: grant.webhookChannelId ?? null,
      resource_server_id: grant.resourceServerId ?? null,
      delegated_scopes: (grant.delegatedScopes ?? []).join(' '),
    })
    .execute();
}

/** An `oauth_grants` row as a Grant: tokens.repository.ts reads it with the code (one statement). */
export function toGrant(row: Omit<Selectable<OAuthGrantsTable>, 'app_only' | 'delegated_scopes'> & { delegated_scopes?: string }): Grant {
  return {
    id: toId(row.id),
    applicationId: toId(row.application_id),
    userId: toId(row.user_id),
    scopes: row.scopes.split(' ').filter(Boolean),
    createdAt: toNum(row.created_at),
    revokedAt: toNumOrNull(row.revoked_at),
    serverId: toIdOrNull(row.server_id),
    permissions: row.permissions,
    webhookChannelId: toIdOrNull(row.webhook_channel_id ?? null),
    resourceServerId: toIdOrNull(row.resource_server_id ?? null),
    delegatedScopes: (row.delegated_scopes ?? '').split(' ').filter(Boolean),
  };
}

/**
 * Ends one authorization (SPEC §3): every access and refresh token of the grant stops working at
 * once, unused codes of it too. Run inside the caller's transaction where there is one.
 */
export async function revokeGrant(db: Db, grantId: string, now: number): Promise<void> {
  await db.deleteFrom('oauth_access_tokens').where('grant_id', '=', grantId).execute();
  await db.deleteFrom('oauth_refresh_tokens').where('grant_id', '=', grantId).execute();
  await db.updateTable('oauth_codes').set({ used_at: now }).where('grant_id', '=', grantId).where('used_at', 'is', null).execute();
  await db.updateTable('oauth_grants').set({ revoked_at: now }).where('id', '=', grantId).where('revoked_at', 'is', null).execute();
}

/**
 * Deauthorization from Settings → Authorized apps, or revocation: ends every grant a person gave
 * an app and forgets the remembered consent (issue #3), so the next request shows the screen.
 * Returns how many grants were still in force.
 */
export async function revokeAllGrantsOf(db: Db, userId: string, applicationId: string, now: number): Promise<number> {
  const grants = await db
    .selectFrom('oauth_grants')
    .select('id')
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .where('revoked_at', 'is', null)
    .execute();
  for (const g of grants) await revokeGrant(db, toId(g.id), now);
  await db.deleteFrom('oauth_consents').where('user_id', '=', userId).where('application_id', '=', applicationId).execute();
  return grants.length;
}

/**
 * Issue #39: ends every grant of an application at once (the operator disabled it): its access and
 * refresh tokens are deleted, unused codes spent, the grants marked revoked and the remembered
 * consents forgotten, so people are asked again once it is enabled. Set-wise statements, not one
 * per grant. Returns how many grants were still in force.
 */
export async function revokeGrantsOfApplication(db: Db, applicationId: string, now: number): Promise<number> {
  await db.deleteFrom('oauth_access_tokens').where('application_id', '=', applicationId).execute();
  await db.deleteFrom('oauth_refresh_tokens').where('application_id', '=', applicationId).execute();
  await db.updateTable('oauth_codes').set({ used_at: now }).where('application_id', '=', applicationId).where('used_at', 'is', null).execute();
  await db.deleteFrom('oauth_consents').where('application_id', '=', applicationId).execute();
  const result = await db.updateTable('oauth_grants').set({ revoked_at: now }).where('application_id', '=', applicationId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** How many grants of the application are in force, and of how many people (issue #39: the operator's counts). */
export async function countGrantsOfApplication(db: Db, applicationId: string): Promise<{ grants: number; people: number }> {
  const row = await db
    .selectFrom('oauth_grants')
    .select((eb) => [eb.fn.countAll<number | string | bigint>().as('grants'), eb.fn.count<number | string | bigint>('user_id').distinct().as('people')])
    .where('application_id', '=', applicationId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { grants: Number(row.grants), people: Number(row.people) };
}

import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { toId, toNum } from '../../storage/types.js';

type Db = Kysely<Database> | Transaction<Database>;

function splitScopes(scopes: string): string[] {
  return scopes.split(' ').filter(Boolean);
}

/** The scopes a person already granted an app (issue #3: consent is remembered), or undefined. */
export async function findConsentScopes(db: Db, userId: string, applicationId: string): Promise<string[] | undefined> {
  const row = await db
    .selectFrom('oauth_consents')
    .select('scopes')
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .executeTakeFirst();
  return row ? splitScopes(row.scopes) : undefined;
}

/**
 * Stores the remembered consent (the caller passes the union of old and new scopes). One
 * statement on both databases: insert, or replace the scopes of the existing row.
 */
export async function saveConsent(db: Db, userId: string, applicationId: string, scopes: readonly string[], now: number): Promise<void> {
  const value = scopes.join(' ');
  await db
    .insertInto('oauth_consents')
    .values({ user_id: userId, application_id: applicationId, scopes: value, updated_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'application_id']).doUpdateSet({ scopes: value, updated_at: now }))
    .execute();
}

/** One app a person has authorized, as Settings → Authorized apps lists it. */
export interface AuthorizedAppRow {
  applicationId: string;
  name: string;
  description: string;
  ownerUsername: string | null;
  /** Union of the scopes of the active grants and of the remembered consent. */
  scopes: string[];
  /** When the person first authorized it among what is still in force. */
  authorizedAt: number;
}

/**
 * Every app with an active (unrevoked) grant or a remembered consent of this person, oldest
 * authorization first. Bot installs into servers (grants with a server) are managed in server
 * settings, not here.
 */
export async function listAuthorizedApps(db: Db, userId: string): Promise<AuthorizedAppRow[]> {
  const grants = await db
    .selectFrom('oauth_grants')
    .select(['application_id', 'scopes', 'created_at'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('server_id', 'is', null)
    // Issue #41: an application's own tokens (client credentials) are no authorization by its owner.
    .where('app_only', '=', 0)
    .execute();
  const consents = await db.selectFrom('oauth_consents').select(['application_id', 'scopes', 'updated_at']).where('user_id', '=', userId).execute();

  const byApp = new Map<string, { scopes: Set<string>; authorizedAt: number }>();
  const add = (applicationId: string, scopes: string, at: number) => {
    const entry = byApp.get(applicationId) ?? { scopes: new Set<string>(), authorizedAt: at };
    for (const s of splitScopes(scopes)) entry.scopes.add(s);
    entry.authorizedAt = Math.min(entry.authorizedAt, at);
    byApp.set(applicationId, entry);
  };
  for (const g of grants) add(toId(g.application_id), g.scopes, toNum(g.created_at));
  for (const c of consents) add(toId(c.application_id), c.scopes, toNum(c.updated_at));
  if (byApp.size === 0) return [];

  const apps = await db
    .selectFrom('applications')
    .leftJoin('users', 'users.id', 'applications.owner_id')
    .select(['applications.id as id', 'applications.name as name', 'applications.description as description', 'users.username as owner'])
    .where('applications.id', 'in', [...byApp.keys()])
    .execute();
  return apps
    .map((a) => {
      const entry = byApp.get(toId(a.id));
      return {
        applicationId: toId(a.id),
        name: a.name,
        description: a.description,
        ownerUsername: a.owner ?? null,
        scopes: [...(entry?.scopes ?? [])],
        authorizedAt: entry?.authorizedAt ?? 0,
      };
    })
    .sort((x, y) => x.authorizedAt - y.authorizedAt || (x.applicationId < y.applicationId ? -1 : 1));
}

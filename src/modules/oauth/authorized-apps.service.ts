import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import type { AuthorizedApp } from './authorized-apps.page.js';
import { listAuthorizedApps } from './consents.repository.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import { countGrantsOfApplication, revokeAllGrantsOf, revokeGrantsOfApplication } from './grants.repository.js';
import { describeScope, formatScopes } from '../../core/scopes.js';

/** Every app the person has authorized and not deauthorized (OAUTH-CHECKLIST A18). */
export async function authorizedApps(deps: Deps, userId: string): Promise<AuthorizedApp[]> {
  const rows = await listAuthorizedApps(deps.db, userId);
  return rows.map((r) => ({
    ...r,
    scopes: formatScopes(r.scopes)
      .split(' ')
      .filter(Boolean)
      .map((name) => ({ name, description: describeScope(name) })),
  }));
}

/**
 * Deauthorize (issue #3: same effect as revocation): every grant the person gave the app ends —
 * its access and refresh tokens stop working at once — and the remembered consent is forgotten,
 * so the next request shows the screen again. Unknown ids change nothing. A person deauthorizes
 * only for themselves; nobody else has grants to end here (403 50001). Issue #37 §2: when a
 * grant was in force, grant.revoked is recorded in the same transaction.
 */
export async function deauthorizeApp(deps: Deps, acting: Acting<Actor>, applicationId: string): Promise<void> {
  const actor = acting.actor;
  if (actor.kind !== 'person') throw ApiErrors.missingAccess();
  if (!isSnowflake(applicationId)) return;
  const now = deps.clock.now();
  await changing(deps, acting, async (trx, emit) => {
    const ended = await revokeAllGrantsOf(trx, actor.id, applicationId, now);
    if (ended > 0) emit({ type: 'grant.revoked', applicationId, userId: actor.id });
  });
}

/**
 * A step of disabling an app (issue #39), in its caller's transaction: every person's grant of it
 * ends (tokens deleted, consents forgotten). Returns how many grants were in force.
 */
export function revokeEveryGrantOfApplication(trx: Transaction<Database>, applicationId: string, now: number): Promise<number> {
  return revokeGrantsOfApplication(trx, applicationId, now);
}

/** How many authorizations of the app are in force, and of how many people (issue #39: the operator's counts). */
export function applicationGrantCounts(deps: Deps, applicationId: string): Promise<{ grants: number; people: number }> {
  return countGrantsOfApplication(deps.db, applicationId);
}

import type { Acting } from '../../core/acting.js';
import { ApiErrors } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { deleteUserInstall, hasUserInstall, insertUserInstall, listUserInstalls, type UserInstall } from './user-installs.repository.js';

export type { UserInstall } from './user-installs.repository.js';

/**
 * Records a user install (SPEC §5.2: applications.commands without bot) for the acting person.
 * The consent flow writes its own in its transaction (installs.service.ts writeInstall); this is
 * the same write on its own. Installing again changes nothing and records nothing. Returns
 * whether it is new. Anyone but a person installs nothing here (403 50001).
 */
export async function installForUser(deps: Deps, acting: Acting, applicationId: string): Promise<boolean> {
  const actor = acting.actor;
  if (actor.kind !== 'person') throw ApiErrors.missingAccess();
  return changing(deps, acting, async (trx, emit) => {
    const created = await insertUserInstall(trx, { applicationId, userId: actor.id, createdAt: deps.clock.now() });
    if (created) emit({ type: 'user_install.created', applicationId, userId: actor.id });
    return created;
  });
}

/** Whether the person has the app user-installed (what lets its bot open a DM with them). */
export async function isUserInstalled(deps: Deps, applicationId: string, userId: string): Promise<boolean> {
  if (!isSnowflake(applicationId) || !isSnowflake(userId)) return false;
  return hasUserInstall(deps.db, applicationId, userId);
}

/** Settings → Installed apps. */
export async function installedApps(deps: Deps, userId: string): Promise<UserInstall[]> {
  return listUserInstalls(deps.db, userId);
}

/**
 * Remove (Settings → Installed apps): the app's bot can no longer open a DM with the person, nor
 * post in an existing one, unless they share a server. Messages already sent stay. Returns
 * whether something was removed (a malformed or unknown id removes nothing). A person removes
 * only their own installs; nobody else has any here (403 50001).
 */
export async function removeUserInstall(deps: Deps, acting: Acting, applicationId: string): Promise<boolean> {
  const actor = acting.actor;
  if (actor.kind !== 'person') throw ApiErrors.missingAccess();
  if (!isSnowflake(applicationId)) return false;
  return changing(deps, acting, async (trx, emit) => {
    const removed = await deleteUserInstall(trx, applicationId, actor.id);
    // Issue #37 §2: a second submit that finds nothing to remove records nothing.
    if (removed) emit({ type: 'user_install.deleted', applicationId, userId: actor.id });
    return removed;
  });
}

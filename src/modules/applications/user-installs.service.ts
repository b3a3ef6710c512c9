import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { deleteUserInstall, hasUserInstall, insertUserInstall, listUserInstalls, type UserInstall } from './user-installs.repository.js';

export type { UserInstall } from './user-installs.repository.js';

/**
 * Records a user install (SPEC §5.2: applications.commands without bot). Called by the consent
 * flow once the person agrees; installing again changes nothing. Returns whether it is new.
 */
export async function installForUser(deps: Deps, applicationId: string, userId: string): Promise<boolean> {
  return insertUserInstall(deps.db, { applicationId, userId, createdAt: deps.clock.now() });
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
export async function removeUserInstall(deps: Deps, actor: Actor, applicationId: string): Promise<boolean> {
  if (actor.kind !== 'person') throw ApiErrors.missingAccess();
  if (!isSnowflake(applicationId)) return false;
  return deleteUserInstall(deps.db, applicationId, actor.id);
}

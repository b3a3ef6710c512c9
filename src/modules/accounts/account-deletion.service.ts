import { deletePasskeysOf } from './passkeys.repository.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import type { Acting } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import { verifyPassword } from '../../core/password.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { deleteApplication, listOwnedApplications } from '../applications/applications.service.js';
import { installedApps, removeUserInstall } from '../applications/user-installs.service.js';
import { anonymizePersonIn } from '../directory/deleted-people.service.js';
import { leaveServer } from '../directory/members.service.js';
import { getPasswordHash, getPersonById } from '../directory/people.service.js';
import { listServersForPerson } from '../directory/servers.service.js';
import { authorizedApps, deauthorizeApp } from '../oauth/authorized-apps.service.js';
import { deleteSessionsOfUser } from './sessions.repository.js';
import { beginSignIn } from './sign-in-throttle.js';
import { hasSecondFactor, reauthenticate } from '../mfa/mfa.service.js';
import type { AccountDeletionPreview } from './account-deletion.js';

export async function accountDeletionPreview(deps: Deps, personId: string): Promise<AccountDeletionPreview> {
  const [servers, apps, authorized, secondFactor] = await Promise.all([listServersForPerson(deps, personId), listOwnedApplications(deps, personId), authorizedApps(deps, personId), hasSecondFactor(deps, personId)]);
  const ownedServers = servers.filter((s) => s.ownerId === personId).map((s) => ({ id: s.id, name: s.name }));
  return { ownedServers, memberships: servers.length - ownedServers.length, apps: apps.length, authorizedApps: authorized.length, secondFactor };
}

/**
 * Deletes the person's account (issue #38 §5). Re-authenticates with the password (wrong ones count
 * against the sign-in throttle, as a password change's do). Servers they own must be transferred
 * or deleted first: a server is everyone's, so the account's end never takes one down unseen.
 * Then their apps (with their bots), grants and tokens, user installs and memberships end through
 * their owners' services, each audited as usual; last, in one transaction, their row becomes
 * "Deleted account" (messages stay, by that name), every session ends and account.deleted is
 * recorded.
 */
export async function deleteAccount(deps: Deps, acting: Acting<PersonActor>, input: { password: string; code?: string | undefined }): Promise<void> {
  const personId = acting.actor.id;
  const person = await getPersonById(deps, personId);
  const stored = person && !person.bot ? await getPasswordHash(deps, personId) : undefined;
  if (!person || stored === undefined) throw ApiErrors.unknownUser();
  // Issue #38 §5: with a second factor enrolled, the password and a current code (TOTP or recovery), as removing TOTP asks.
  if (await hasSecondFactor(deps, personId)) await reauthenticate(deps, acting, { password: input.password, code: input.code ?? '' });
  else await checkPassword(deps, acting, person.username, stored, input.password);
  await removeAccount(deps, acting, personId);
}

async function checkPassword(deps: Deps, acting: Acting<PersonActor>, username: string, stored: string, password: string): Promise<void> {
  const throttle = await beginSignIn(deps.buckets, deps.clock.now(), username, acting.address ?? undefined);
  if (throttle.delayMs > 0) await deps.clock.sleep(throttle.delayMs);
  const passwordOk = password.length > 0 && password.length <= 512 && (await verifyPassword(password, stored));
  if (!passwordOk) {
    await throttle.failed();
    throw invalidField(['password'], 'PASSWORD_DOES_NOT_MATCH', 'Password does not match.');
  }
  await throttle.succeeded();
}

async function removeAccount(deps: Deps, acting: Acting<PersonActor>, personId: string): Promise<void> {

  const preview = await accountDeletionPreview(deps, personId);
  if (preview.ownedServers.length > 0) {
    const names = preview.ownedServers.map((s) => s.name).join(', ');
    throw invalidField(['servers'], 'OWNS_SERVERS', `You own ${preview.ownedServers.length === 1 ? 'a server' : `${preview.ownedServers.length} servers`} (${names}): transfer or delete ${preview.ownedServers.length === 1 ? 'it' : 'them'} first.`);
  }
  for (const app of await listOwnedApplications(deps, personId)) await deleteApplication(deps, acting, app.id);
  for (const app of await authorizedApps(deps, personId)) await deauthorizeApp(deps, acting, app.applicationId);
  for (const install of await installedApps(deps, personId)) await removeUserInstall(deps, acting, install.applicationId);
  for (const server of await listServersForPerson(deps, personId)) await leaveServer(deps, acting, server.id);
  await changing(deps, acting, async (trx, emit) => {
    await anonymizePersonIn(trx, personId);
    await deleteSessionsOfUser(trx, personId);
    // The row stays (as "Deleted account"), so its passkeys would still sign in to it: they go.
    await deletePasskeysOf(trx, personId);
    emit({ type: 'account.deleted', userId: personId });
    emit({ type: 'access.changed', topicId: personId });
  });
}

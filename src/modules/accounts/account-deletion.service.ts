import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import { actingAs, type Acting } from '../../core/acting.js';
import { person as personActor, type PersonActor } from '../../core/actor.js';
import { verifyPassword } from '../../core/password.js';
import type { Deps } from '../../deps.js';
import { changing, emitted } from '../../events/event-bus.js';
import { deleteApplication, listOwnedApplications } from '../applications/applications.service.js';
import { installedApps, removeUserInstall } from '../applications/user-installs.service.js';
import { anonymizePersonIn } from '../directory/deleted-people.service.js';
import { leaveServer } from '../directory/members.service.js';
import { getPasswordHash, getPersonById } from '../directory/people.service.js';
import { releaseUploadedImages } from '../resources/uploaded-images.service.js';
import { listServersForPerson } from '../directory/servers.service.js';
import { authorizedApps, deauthorizeApp } from '../oauth/authorized-apps.service.js';
import { deleteSessionsOfUser } from './sessions.repository.js';
import { beginSignIn } from './sign-in-throttle.js';
import { dropSecondFactors, hasSecondFactor, reauthenticate, secondFactorStatus } from '../mfa/mfa.service.js';
import { verifySecondFactorPasskey } from './passkeys.service.js';
import type { AccountDeletionPreview } from './account-deletion.js';

export async function accountDeletionPreview(deps: Deps, personId: string): Promise<AccountDeletionPreview> {
  const [servers, apps, authorized, factors] = await Promise.all([listServersForPerson(deps, personId), listOwnedApplications(deps, personId), authorizedApps(deps, personId), secondFactorStatus(deps, personId)]);
  const ownedServers = servers.filter((s) => s.ownerId === personId).map((s) => ({ id: s.id, name: s.name }));
  return { ownedServers, memberships: servers.length - ownedServers.length, apps: apps.length, authorizedApps: authorized.length, secondFactor: factors.totpEnabled || factors.passkeys > 0, passkey: factors.passkeys > 0 };
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
export async function deleteAccount(deps: Deps, acting: Acting<PersonActor>, input: { password: string; code?: string | undefined; passkey?: string | undefined }): Promise<void> {
  const personId = acting.actor.id;
  const person = await getPersonById(deps, personId);
  const stored = person && !person.bot ? await getPasswordHash(deps, personId) : undefined;
  if (!person || stored === undefined) throw ApiErrors.unknownUser();
  // Issue #38 §5: with a second factor enrolled, the password and the second factor: a current
  // code (TOTP or recovery), as removing TOTP asks, or one of the person's passkeys.
  if (!(await hasSecondFactor(deps, personId))) await checkPassword(deps, acting, person.username, stored, input.password);
  else if (input.passkey) await checkPassword(deps, acting, person.username, stored, input.password, input.passkey);
  else await reauthenticate(deps, acting, { password: input.password, code: input.code ?? '' });
  await removeAccount(deps, acting, personId);
}

/**
 * The password, and when `passkey` is given a passkey assertion answering a re-authentication
 * challenge of this person; a wrong answer to either counts against the sign-in throttle.
 */
async function checkPassword(deps: Deps, acting: Acting<PersonActor>, username: string, stored: string, password: string, passkey?: string): Promise<void> {
  const throttle = await beginSignIn(deps.buckets, deps.clock.now(), username, acting.address ?? undefined);
  if (throttle.delayMs > 0) await deps.clock.sleep(throttle.delayMs);
  const passwordOk = password.length > 0 && password.length <= 512 && (await verifyPassword(password, stored));
  if (!passwordOk) {
    await throttle.failed();
    throw invalidField(['password'], 'PASSWORD_DOES_NOT_MATCH', 'Password does not match.');
  }
  if (passkey !== undefined) {
    try {
      await verifySecondFactorPasskey(deps, acting.actor.id, passkey, 'reauthenticate');
    } catch (error) {
      if (error instanceof ApiError) {
        await throttle.failed();
        await emitted(deps, acting, { type: 'signin.second_factor_failed', userId: acting.actor.id });
      }
      throw error;
    }
  }
  await throttle.succeeded();
}

/**
 * `gatehouse people delete` and the admin pages (issue #39): the same deletion, asked by the
 * operator. The steps that only a person takes for themselves (deauthorizing an app, leaving a
 * server) are recorded as the person's, as when they delete their own account; the deletion itself
 * (account.deleted) names the operator. Servers they own must be transferred or deleted first.
 */
export async function deleteAccountByOperator(deps: Deps, acting: Acting, personId: string): Promise<void> {
  const person = await getPersonById(deps, personId);
  if (!person || person.bot) throw ApiErrors.unknownUser();
  await removeAccount(deps, acting, personId);
}

async function removeAccount(deps: Deps, acting: Acting, personId: string): Promise<void> {
  const preview = await accountDeletionPreview(deps, personId);
  if (preview.ownedServers.length > 0) {
    const names = preview.ownedServers.map((s) => s.name).join(', ');
    const who = acting.actor.kind === 'person' && acting.actor.id === personId ? 'You own' : 'They own';
    throw invalidField(['servers'], 'OWNS_SERVERS', `${who} ${preview.ownedServers.length === 1 ? 'a server' : `${preview.ownedServers.length} servers`} (${names}): transfer or delete ${preview.ownedServers.length === 1 ? 'it' : 'them'} first.`);
  }
  const asPerson = actingAs(acting, personActor(personId));
  const avatarUrl = (await getPersonById(deps, personId))?.avatarUrl;
  for (const app of await listOwnedApplications(deps, personId)) await deleteApplication(deps, asPerson, app.id);
  for (const app of await authorizedApps(deps, personId)) await deauthorizeApp(deps, asPerson, app.applicationId);
  for (const install of await installedApps(deps, personId)) await removeUserInstall(deps, asPerson, install.applicationId);
  for (const server of await listServersForPerson(deps, personId)) await leaveServer(deps, asPerson, server.id);
  await changing(deps, acting, async (trx, emit) => {
    await anonymizePersonIn(trx, personId);
    await deleteSessionsOfUser(trx, personId);
    // The row stays (as "Deleted account"), so its passkeys would still sign in to it: they go,
    // with the other second factors and recovery codes.
    await dropSecondFactors(trx, personId);
    emit({ type: 'account.deleted', userId: personId });
    emit({ type: 'access.changed', topicId: personId });
  });
  // Issue #42 §3: anonymizing cleared the avatar; its uploaded blob was the person's alone.
  await releaseUploadedImages(deps, [avatarUrl]);
}

import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import type { Deps } from '../../deps.js';
import { accountDeletionPreview } from '../accounts/account-deletion.service.js';
import { deletePersonByOperator, findPersonForOperator, listPeopleForOperator, PEOPLE_PAGE_MAX } from '../accounts/people-admin.service.js';
import { APPS_PAGE_MAX, listApps } from '../applications/apps-admin.service.js';
import { requireOperator } from '../directory/operators.service.js';
import { transferServer } from '../directory/server-transfer.service.js';
import type { AdminOverview } from './admin.js';

/**
 * The admin pages' own use cases (issue #39), composed of the people, apps and servers services
 * of the operator; everything else the pages do is one call to those services.
 */

/** What the overview counts: administrators, disabled people and disabled apps, each up to one full page. */
export async function adminOverview(deps: Deps, actor: Actor): Promise<AdminOverview> {
  const [admins, disabledPeople, disabledApps] = await Promise.all([
    listPeopleForOperator(deps, { admins: true, limit: PEOPLE_PAGE_MAX }),
    listPeopleForOperator(deps, { disabled: true, limit: PEOPLE_PAGE_MAX }),
    listApps(deps, actor, { disabled: true, limit: APPS_PAGE_MAX }),
  ]);
  return {
    admins: { count: admins.people.length, more: admins.next !== undefined },
    disabledPeople: { count: disabledPeople.people.length, more: disabledPeople.next !== undefined },
    disabledApps: { count: disabledApps.apps.length, more: disabledApps.next !== undefined },
  };
}

/**
 * Deletes a person from the admin pages (issue #39: `people delete --transfer-servers-to`): when
 * `transferTo` names someone, each server the person owns is first transferred to them (each
 * transfer refused as `servers transfer` refuses it: they must be a member of it, a person, not
 * disabled), then the account is deleted (people-admin.service.ts deletePersonByOperator: the last
 * administrator stays, and servers still owned stop it). Returns the servers transferred.
 */
export async function deletePersonTransferring(deps: Deps, acting: Acting, personId: string, transferTo: string | undefined): Promise<{ transferred: number }> {
  await requireOperator(deps, acting.actor);
  const person = await findPersonForOperator(deps, { id: personId });
  let transferred = 0;
  const to = transferTo?.trim().replace(/^@/, '') ?? '';
  if (to !== '') {
    const { ownedServers } = await accountDeletionPreview(deps, person.id);
    for (const server of ownedServers) {
      await transferServer(deps, acting, server.id, { username: to });
      transferred++;
    }
  }
  await deletePersonByOperator(deps, acting, person.id);
  return { transferred };
}

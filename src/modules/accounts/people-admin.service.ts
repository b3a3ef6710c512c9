import type { Acting } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import { MINUTE } from '../../core/clock.js';
import { ApiErrors, invalidField, type ApiError } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import type { Application } from '../applications/applications.js';
import { listOwnedApplications } from '../applications/applications.service.js';
import type { AuditRow } from '../audit/audit.js';
import { readSecurityLog } from '../audit/audit.service.js';
import { getPersonByUsername } from '../directory/people.service.js';
import {
  findPeople,
  getAdministeredPerson,
  saveAdmin,
  saveDisabled,
  saveEnabled,
  workingAdminCount,
  type AdministeredPerson,
} from '../directory/people-admin.service.js';
import { listServersForPerson, type ServerForPerson } from '../directory/servers.service.js';
import { hasSecondFactor, sessionMethods } from '../mfa/mfa.service.js';
import { grantsInForceOf, revokeEveryGrantOf } from '../oauth/person-grants.service.js';
import { deleteAccountByOperator } from './account-deletion.service.js';
import { deleteSessionsOfUser } from './sessions.repository.js';
import { listSessions } from './sessions.service.js';
import type { SessionView } from './sessions.js';

/**
 * Issue #39: the operator's tools for people — find them, look at one, disable and enable them,
 * make them administrators, delete them. Each change takes the operator's Acting (the CLI's
 * `cliActing`, or an administrator's on the admin pages) and is an audited domain event.
 */

export type { AdministeredPerson };

/** The longest page of people the list returns; the default is 50. */
export const PEOPLE_PAGE_MAX = 200;
export const PEOPLE_PAGE_DEFAULT = 50;

/** A reason is kept in the audit log; Discord's audit-log reason limit (core/acting.ts). */
const REASON_MAX_LENGTH = 512;

export interface PeopleQuery {
  query?: string | undefined;
  disabled?: boolean | undefined;
  admins?: boolean | undefined;
  limit?: number | undefined;
  /** The last id of the previous page (`next` of its answer). */
  after?: string | undefined;
  /** 1-based page number, instead of `after`. */
  page?: number | undefined;
}

export interface PeoplePage {
  people: AdministeredPerson[];
  /** Pass as `after` for the next page; undefined on the last. */
  next: string | undefined;
}

/** People, newest first, searched by username, name, e-mail or sign-up address (issue #39). */
export async function listPeopleForOperator(deps: Deps, input: PeopleQuery): Promise<PeoplePage> {
  const limit = input.limit ?? PEOPLE_PAGE_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > PEOPLE_PAGE_MAX) throw invalidField(['limit'], 'NUMBER_TYPE_OUT_OF_RANGE', `Must be a whole number from 1 to ${PEOPLE_PAGE_MAX}.`);
  if (input.after !== undefined && !isSnowflake(input.after)) throw invalidField(['after'], 'NUMBER_TYPE_COERCE', 'Must be the id of a person (the previous page’s next).');
  if (input.page !== undefined && (!Number.isInteger(input.page) || input.page < 1 || input.page > 1_000_000)) throw invalidField(['page'], 'NUMBER_TYPE_OUT_OF_RANGE', 'Must be a whole number from 1.');
  if (input.after !== undefined && input.page !== undefined) throw invalidField(['page'], 'BASE_TYPE_INVALID', 'Give either the page or after, not both.');
  const query = input.query?.trim();
  if (query !== undefined && query.length > 256) throw invalidField(['query'], 'BASE_TYPE_MAX_LENGTH', 'Must be 256 or fewer in length.');
  const rows = await findPeople(deps, {
    query,
    disabled: input.disabled,
    admins: input.admins,
    limit,
    before: input.after,
    offset: input.page !== undefined ? (input.page - 1) * limit : undefined,
  });
  const people = rows.slice(0, limit);
  return { people, next: rows.length > limit ? people.at(-1)?.id : undefined };
}

/** The person an operator names, by username or id: unknown people (and bots) are a 404 10013. */
export async function findPersonForOperator(deps: Deps, who: { username?: string | undefined; id?: string | undefined }): Promise<AdministeredPerson> {
  let id = who.id;
  if (id === undefined && who.username !== undefined) id = (await getPersonByUsername(deps, who.username.trim()))?.id;
  const person = id !== undefined && isSnowflake(id) ? await getAdministeredPerson(deps, id) : undefined;
  if (!person || person.username.startsWith('deleted_')) throw ApiErrors.unknownUser();
  return person;
}

/** What the operator sees of one person (issue #39: a person's page; `people show`). */
export interface PersonSummary {
  person: AdministeredPerson;
  secondFactor: boolean;
  servers: ServerForPerson[];
  apps: Application[];
  sessions: SessionView[];
  grantsInForce: number;
  /** Their latest security events (Settings → Security's list), newest first. */
  recentSecurityEvents: AuditRow[];
}

export async function personSummary(deps: Deps, personId: string): Promise<PersonSummary> {
  const person = await getAdministeredPerson(deps, personId);
  if (!person) throw ApiErrors.unknownUser();
  const [secondFactor, servers, apps, sessions, grantsInForce, security] = await Promise.all([
    hasSecondFactor(deps, personId),
    listServersForPerson(deps, personId),
    listOwnedApplications(deps, personId),
    listSessions(deps, personId, undefined),
    grantsInForceOf(deps, personId),
    readSecurityLog(deps, personId, { limit: 10 }),
  ]);
  return { person, secondFactor, servers, apps, sessions, grantsInForce, recentSecurityEvents: security.entries };
}

/** What disabling a person ends, for the confirmation (issue #39: counts before confirming). */
export interface DisableEffects {
  sessions: number;
  grants: number;
  /** Apps they own whose bots stop authenticating while they are disabled. */
  botApps: number;
}

export async function disableEffects(deps: Deps, personId: string): Promise<DisableEffects> {
  const [sessions, grants, apps] = await Promise.all([listSessions(deps, personId, undefined), grantsInForceOf(deps, personId), listOwnedApplications(deps, personId)]);
  return { sessions: sessions.length, grants, botApps: apps.filter((a) => a.botUserId !== null).length };
}

function cannotLoseLastAdmin(what: string): ApiError {
  return invalidField(['username'], 'LAST_ADMIN', `This is the last administrator of the instance: make someone else an administrator before you ${what} them.`);
}

function checkReason(reason: string | null): string | null {
  const value = reason?.trim() ?? '';
  if (value === '') return null;
  if ([...value].length > REASON_MAX_LENGTH) throw invalidField(['reason'], 'BASE_TYPE_MAX_LENGTH', `Must be ${REASON_MAX_LENGTH} or fewer in length.`);
  return value;
}

/**
 * Disables a person (issue #39): they cannot sign in (a clear refusal on the sign-in, passkey
 * and password-reset pages), every session ends now (their live views close: access.changed), every
 * OAuth grant they gave is revoked (refresh → invalid_grant, bearer → 401; enabling restores none),
 * and the bots of apps they own stop authenticating until they are enabled (the bot lookup joins
 * the owner: applications/bots.repository.ts). Their webhooks keep working (docs/operations.md
 * §People and sign-ups). The last working administrator cannot be disabled. A second disable
 * changes nothing and records nothing.
 */
export async function disablePerson(deps: Deps, acting: Acting, personId: string, rawReason: string | null): Promise<{ person: AdministeredPerson; disabled: boolean; endedSessions: number; revokedApps: number }> {
  const reason = checkReason(rawReason);
  const person = await findPersonForOperator(deps, { id: personId });
  if (acting.actor.kind === 'person' && acting.actor.id === person.id) throw invalidField(['username'], 'CANNOT_DISABLE_SELF', 'You cannot disable your own account.');
  const now = deps.clock.now();
  return changing(deps, acting, async (trx, emit) => {
    if (!(await saveDisabled(trx, person.id, now, reason))) return { person, disabled: false, endedSessions: 0, revokedApps: 0 };
    // Counted after the change, in its transaction: disabling the last administrator rolls back.
    if (person.admin && (await workingAdminCount(trx)) === 0) throw cannotLoseLastAdmin('disable');
    emit({ type: 'person.disabled', userId: person.id, reason });
    const endedSessions = await deleteSessionsOfUser(trx, person.id);
    if (endedSessions > 0) emit({ type: 'session.ended', userId: person.id, why: 'disabled' });
    const revoked = await revokeEveryGrantOf(trx, person.id, now);
    for (const applicationId of revoked) emit({ type: 'grant.revoked', applicationId, userId: person.id });
    // Issue #21 §5: their open live views re-check at once and end (realtime/live-subscriber.ts).
    emit({ type: 'access.changed', topicId: person.id });
    return { person: { ...person, disabledAt: now, disabledReason: reason }, disabled: true, endedSessions, revokedApps: revoked.length };
  });
}

/** Enables a disabled person (issue #39): the account works again; revoked grants stay revoked. */
export async function enablePerson(deps: Deps, acting: Acting, personId: string): Promise<{ person: AdministeredPerson; enabled: boolean }> {
  const person = await findPersonForOperator(deps, { id: personId });
  return changing(deps, acting, async (trx, emit) => {
    if (!(await saveEnabled(trx, person.id))) return { person, enabled: false };
    emit({ type: 'person.enabled', userId: person.id });
    return { person: { ...person, disabledAt: null, disabledReason: null }, enabled: true };
  });
}

/**
 * Makes a person an instance administrator, or (`admin: false`) no longer one (issue #39). The last
 * working administrator stays one. Granting what is already so changes and records nothing.
 */
export async function setAdministrator(deps: Deps, acting: Acting, personId: string, admin: boolean): Promise<{ person: AdministeredPerson; changed: boolean }> {
  const person = await findPersonForOperator(deps, { id: personId });
  return changing(deps, acting, async (trx, emit) => {
    if (!(await saveAdmin(trx, person.id, admin))) return { person, changed: false };
    if (!admin && person.disabledAt === null && (await workingAdminCount(trx)) === 0) throw cannotLoseLastAdmin('remove');
    emit({ type: admin ? 'person.admin_granted' : 'person.admin_revoked', userId: person.id });
    return { person: { ...person, admin }, changed: true };
  });
}

/**
 * `GATEHOUSE_ADMINS` at start (issue #39): each named person becomes an administrator, audited as
 * the operator; those already administrators are left as they are (so every start is a no-op after
 * the first) and nobody is removed (the list is a first set, not the whole). Returns the names
 * that name nobody, for the start-up log.
 */
export async function applyConfiguredAdmins(deps: Deps, acting: Acting, usernames: readonly string[]): Promise<{ granted: string[]; unknown: string[] }> {
  const granted: string[] = [];
  const unknown: string[] = [];
  for (const username of usernames) {
    const person = await getPersonByUsername(deps, username);
    if (!person || person.bot) {
      unknown.push(username);
      continue;
    }
    if (person.admin) continue;
    if ((await setAdministrator(deps, acting, person.id, true)).changed) granted.push(person.username);
  }
  return { granted, unknown };
}

/**
 * Deletes a person for the operator (issue #39), through the account deletion of issue #38
 * (account-deletion.service.ts): their apps and bots, grants, installs and memberships end, the
 * row becomes "Deleted account". Servers they own must be transferred or deleted first. The last
 * working administrator cannot be deleted.
 */
export async function deletePersonByOperator(deps: Deps, acting: Acting, personId: string): Promise<{ person: AdministeredPerson }> {
  const person = await findPersonForOperator(deps, { id: personId });
  if (acting.actor.kind === 'person' && acting.actor.id === person.id) throw invalidField(['username'], 'CANNOT_DELETE_SELF', 'Delete your own account from Settings → Account.');
  if (person.admin && person.disabledAt === null && (await workingAdminCount(deps.db)) <= 1) throw cannotLoseLastAdmin('delete');
  await deleteAccountByOperator(deps, acting, person.id);
  return { person };
}

/** How recent an administrator's sign-in must be for the admin pages (GitHub's "sudo mode" asks again after a while, too). */
export const ADMIN_REAUTHENTICATION_MS = 30 * MINUTE;

export type AdminRefusal = 'not-admin' | 'disabled' | 'no-second-factor' | 'sign-in-again';

export type AdminCheck = { ok: true; person: AdministeredPerson } | { ok: false; why: AdminRefusal; message: string };

/**
 * Whether the signed-in person may use the admin pages (issue #39): an administrator, with a second
 * factor enrolled, whose session signed in with it (its RFC 8176 methods include `mfa`) within
 * ADMIN_REAUTHENTICATION_MS. Otherwise the refusal and the sentence the page shows; `sign-in-again`
 * means: send them through sign-in again (the `prompt=login` path) and back.
 */
export async function requireAdmin(deps: Deps, acting: Acting<PersonActor>, session: { token: string; signedInAt: number }): Promise<AdminCheck> {
  const person = await getAdministeredPerson(deps, acting.actor.id);
  if (!person || !person.admin) return { ok: false, why: 'not-admin', message: 'Only the administrators of this instance can open these pages.' };
  if (person.disabledAt !== null) return { ok: false, why: 'disabled', message: 'This account is disabled.' };
  if (!(await hasSecondFactor(deps, person.id))) {
    return { ok: false, why: 'no-second-factor', message: 'Administrators need a second factor: turn on two-factor authentication or add a passkey in Settings → Security, then sign in again.' };
  }
  const methods = await sessionMethods(deps, session.token);
  const recent = deps.clock.now() - session.signedInAt <= ADMIN_REAUTHENTICATION_MS;
  if (!methods.includes('mfa') || !recent) {
    return { ok: false, why: 'sign-in-again', message: `For the admin pages, sign in again with your second factor (once every ${ADMIN_REAUTHENTICATION_MS / MINUTE} minutes).` };
  }
  return { ok: true, person };
}

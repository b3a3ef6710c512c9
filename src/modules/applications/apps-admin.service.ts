import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { dropAppEventsOfDisabledApp } from '../app-events/disabled-apps.service.js';
import type { Person } from '../directory/people.js';
import { operatorPage, requireOperator, type OperatorPageQuery } from '../directory/operators.service.js';
import { getPersonById } from '../directory/people.service.js';
import { applicationGrantCounts, revokeEveryGrantOfApplication } from '../oauth/authorized-apps.service.js';
import type { Webhook } from '../webhooks/webhooks.js';
import { deleteIncomingWebhooksOf, incomingWebhooksOf } from '../webhooks/webhooks.service.js';
import type { Application } from './applications.js';
import { findApplication } from './applications.repository.js';
import { deleteCheckedApplication } from './applications.service.js';
import { releaseUploadedImages } from '../resources/uploaded-images.service.js';
import { listApplicationsPage, markApplicationDisabled, markApplicationEnabled } from './apps-admin.repository.js';
import { appInstallCounts, removeBotFromEveryServer } from './installs.service.js';

/**
 * The operator's side of applications (issue #39; docs/operations.md "Apps and servers"): list,
 * show, disable, enable and delete any app, for `gatehouse apps …` and the admin pages. One
 * function per action, each taking the acting operator; every destructive one has a counts
 * function for its confirmation. The operator is the CLI, or a person marked as an instance
 * administrator.
 */

/** The largest page the list returns; the CLI's default. */
export const APPS_PAGE_MAX = 100;

/** An app as the operator sees it: with its owner. */
export interface AdministeredApp {
  application: Application;
  /** Undefined when the owner's row is gone (never, while the foreign key holds). */
  owner: Person | undefined;
}

export interface AppsPage {
  apps: AdministeredApp[];
  /** The id to pass as `after` for the next page; undefined on the last. */
  next: string | undefined;
}

/**
 * Applications oldest first, `limit` (1–100) a page, optionally one owner's (a username; unknown
 * → 404 Unknown User) or only the disabled ones.
 */
export async function listApps(deps: Deps, actor: Actor, query: OperatorPageQuery & { disabled?: boolean | undefined }): Promise<AppsPage> {
  await requireOperator(deps, actor);
  const { items, next } = await operatorPage(deps, query, { max: APPS_PAGE_MAX, afterMessage: 'Must be an application id.' }, (filter) =>
    listApplicationsPage(deps.db, { ...filter, disabled: query.disabled }),
  );
  return { apps: items.map(({ item, owner }) => ({ application: item, owner })), next };
}

/** What disabling or deleting an app affects, counted for the confirmation. */
export interface AppImpact {
  /** Authorizations in force (each with its access and refresh tokens), and how many people gave them. */
  grants: number;
  grantPeople: number;
  /** Servers the bot is installed in; people who installed the app's commands for themselves. */
  serverInstalls: number;
  userInstalls: number;
  /** Webhooks created through `webhook.incoming` (deleted with the app; kept, working, when it is disabled). */
  incomingWebhooks: Webhook[];
}

/** An app by id for the operator; a malformed or unknown id → 404 10002. */
async function appById(deps: Deps, appId: string): Promise<Application> {
  const app = isSnowflake(appId) ? await findApplication(deps.db, appId) : undefined;
  if (!app) throw ApiErrors.unknownApplication();
  return app;
}

/** One app with its owner and what it reaches (`apps show`, and the confirmations of disable and delete). */
export async function showApp(deps: Deps, actor: Actor, appId: string): Promise<AdministeredApp & { impact: AppImpact }> {
  await requireOperator(deps, actor);
  const application = await appById(deps, appId);
  const [owner, grants, installs, incomingWebhooks] = await Promise.all([
    getPersonById(deps, application.ownerId),
    applicationGrantCounts(deps, application.id),
    appInstallCounts(deps, application.id),
    incomingWebhooksOf(deps, application),
  ]);
  return {
    application,
    owner,
    impact: { grants: grants.grants, grantPeople: grants.people, serverInstalls: installs.servers, userInstalls: installs.people, incomingWebhooks },
  };
}

/**
 * Disables an app (issue #39): every grant of it is revoked in the same commit (refresh →
 * invalid_grant, bearer → 401, on every instance at once: the caches forget committed changes),
 * its bot token stops authenticating and its consent screen says it is unavailable, until it is
 * enabled. Installs and incoming webhooks stay; the bot is inert, and its app events are not sent
 * (dropped, not held: disabled-apps.service.ts). Disabling a disabled app
 * changes nothing (`changed: false`). Emits app.disabled with the operator's reason.
 */
export async function disableApp(deps: Deps, acting: Acting, appId: string): Promise<{ application: Application; changed: boolean; revokedGrants: number }> {
  await requireOperator(deps, acting.actor);
  const app = await appById(deps, appId);
  const now = deps.clock.now();
  const done = await changing(deps, acting, async (trx, emit) => {
    if (!(await markApplicationDisabled(trx, app.id, now, acting.reason))) return undefined;
    const revokedGrants = await revokeEveryGrantOfApplication(trx, app.id, now);
    await dropAppEventsOfDisabledApp(deps, trx, app.id, now);
    emit({ type: 'app.disabled', applicationId: app.id, revokedGrants });
    return revokedGrants;
  });
  if (done === undefined) return { application: app, changed: false, revokedGrants: 0 };
  return { application: { ...app, disabledAt: now, disabledReason: acting.reason }, changed: true, revokedGrants: done };
}

/**
 * Enables a disabled app: its bot token and consent screen work again. The grants revoked when it
 * was disabled stay revoked (people authorize it again), as for a disabled person (issue #39).
 * Enabling an enabled app changes nothing. Emits app.enabled.
 */
export async function enableApp(deps: Deps, acting: Acting, appId: string): Promise<{ application: Application; changed: boolean }> {
  await requireOperator(deps, acting.actor);
  const app = await appById(deps, appId);
  const changed = await changing(deps, acting, async (trx, emit) => {
    if (!(await markApplicationEnabled(trx, app.id))) return false;
    emit({ type: 'app.enabled', applicationId: app.id });
    return true;
  });
  return { application: changed ? { ...app, disabledAt: null, disabledReason: null } : app, changed };
}

/** What deleting an app removed. */
export interface DeletedApp {
  application: Application;
  /** Servers its bot left. */
  serverIds: string[];
  /** The webhooks its `webhook.incoming` authorizations had created. */
  webhooks: Webhook[];
}

/**
 * Deletes an app for good (the portal's deletion, applications.service.ts deleteCheckedApplication, with
 * more in the same commit): its bot leaves every server it was installed in (membership, managed
 * role), the webhooks created through `webhook.incoming` are deleted (webhooks its bot created
 * through the API stay, as when a bot is removed from one server), and its grants, tokens,
 * consents, commands and people's installs go with the row (ON DELETE CASCADE). Emits
 * bot.removed per server, webhook.deleted per webhook and app.deleted.
 */
export async function deleteAppAsOperator(deps: Deps, acting: Acting, appId: string): Promise<DeletedApp> {
  await requireOperator(deps, acting.actor);
  const app = await appById(deps, appId);
  let serverIds: string[] = [];
  let webhooks: Webhook[] = [];
  await deleteCheckedApplication(deps, acting, app, async (trx, emit, current) => {
    serverIds = await removeBotFromEveryServer(trx, emit, current);
    webhooks = await deleteIncomingWebhooksOf(trx, emit, current);
  });
  // Issue #42 §3: the deleted webhooks' uploaded avatars go with them.
  await releaseUploadedImages(deps, webhooks.map((w) => w.avatarUrl));
  return { application: app, serverIds, webhooks };
}

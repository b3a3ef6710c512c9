import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { AccessError, addFieldError, ApiErrors, type ErrorTree } from '../../core/errors.js';
import { issueSecret } from '../../core/secrets.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { FieldChange } from '../../events/domain-events.js';
import { changing, type Emit } from '../../events/event-bus.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../storage/database.js';
import type { Person } from '../directory/people.js';
import { getPersonById, getPersonByUsername, saveProfile } from '../directory/people.service.js';
import { checkMayCreate } from '../directory/people-admin.service.js';
import { releaseUploadedImage, releaseUploadedImages, storeUploadedImage } from '../resources/uploaded-images.service.js';
import { checkAppDescription, checkAppIconUrl, checkAppName, checkRedirectUris, type Application } from './applications.js';
import type { Checked } from '../../core/checked.js';
import {
  deleteApplicationRow,
  findApplication,
  findClientApplication,
  insertApplication,
  listApplicationsOwnedBy,
  replaceClientSecretHash,
  updateApplicationRow,
  type ApplicationChanges,
} from './applications.repository.js';

/** Collects field errors so a form shows every problem at once (Discord's 50035 tree). */
class FieldErrors {
  readonly tree: ErrorTree = {};
  private count = 0;

  take<T>(field: string, checked: Checked<T>): T | undefined {
    if (checked.ok) return checked.value;
    this.add([field], checked.code, checked.message);
    return undefined;
  }

  add(path: readonly (string | number)[], code: string, message: string): void {
    addFieldError(this.tree, path, { code, message });
    this.count += 1;
  }

  redirectUris(uris: readonly string[], confidential: boolean): void {
    for (const problem of checkRedirectUris(uris, confidential)) {
      this.add(problem.index === undefined ? ['redirectUris'] : ['redirectUris', problem.index], problem.code, problem.message);
    }
  }

  throwIfAny(): void {
    if (this.count > 0) throw ApiErrors.invalidFormBody(this.tree);
  }
}

export interface NewApplication {
  name: string;
  description?: string;
  iconUrl?: string | null;
  redirectUris: string[];
  /** Fixed for the life of the application (see docs/applications.md). */
  confidential: boolean;
  /** Default true: anyone may install the bot. */
  botPublic?: boolean;
  /** Default false. */
  botRequireCodeGrant?: boolean;
}

export interface CreatedApplication {
  application: Application;
  /** The plaintext client secret, shown once; null for public apps. Only its hash is stored. */
  clientSecret: string | null;
}

/**
 * Who may manage an application (DESIGN §2: the service decides): its owner, and the operator
 * (the CLI). Bots manage no application, not even their own.
 */
function mayManage(actor: Actor, app: Application, ownBot: boolean): boolean {
  return actor.kind === 'operator' || (actor.kind === 'person' && actor.id === app.ownerId) || (ownBot && actor.kind === 'bot' && actor.applicationId === app.id);
}

/**
 * The application `appId` when `actor` may manage it. Anything else — a malformed id, an unknown
 * app, somebody else's app — is the same 404 10002, so the portal does not reveal which ids exist.
 * `ownBot`: the app's own bot may too (Discord's PATCH /applications/@me), for the changes that allow it.
 */
export async function getManagedApplication(deps: Deps, actor: Actor, appId: string, ownBot = false): Promise<Application> {
  const app = isSnowflake(appId) ? await findApplication(deps.db, appId) : undefined;
  if (!app || !mayManage(actor, app, ownBot)) throw new AccessError(404, 10002, 'Unknown Application');
  return app;
}

/**
 * Registers an application: a person's own, or — for the operator — `ownerId`'s (the CLI's
 * --owner); a bot registers none (403 50001). The client id is the application's snowflake id;
 * a confidential app gets a client secret, returned here once and stored only as SHA-256
 * (DESIGN §3). Every field is checked and every problem reported at once as a 50035 (fields
 * `name`, `description`, `iconUrl`, `redirectUris`); nothing is stored unless all are fine.
 */
export async function createApplication(deps: Deps, acting: Acting, input: NewApplication & { ownerId?: string }): Promise<CreatedApplication> {
  const actor = acting.actor;
  const ownerId = actor.kind === 'person' ? actor.id : actor.kind === 'operator' ? input.ownerId : undefined;
  if (ownerId === undefined) throw ApiErrors.missingAccess();
  await checkMayCreate(deps, actor, 'apps');
  const errors = new FieldErrors();
  const name = errors.take('name', checkAppName(input.name, deps.config.serviceName));
  const description = errors.take('description', checkAppDescription(input.description));
  const iconUrl = errors.take('iconUrl', checkAppIconUrl(input.iconUrl));
  errors.redirectUris(input.redirectUris, input.confidential);
  errors.throwIfAny();

  const now = deps.clock.now();
  const secret = input.confidential ? issueSecret(deps.random, 'clientSecret') : null;
  const application: Application = {
    id: deps.ids.next(),
    ownerId,
    name: name as string,
    description: description ?? '',
    iconUrl: iconUrl ?? null,
    confidential: input.confidential,
    clientSecretHash: secret ? secret.hash : null,
    redirectUris: [...input.redirectUris],
    botPublic: input.botPublic ?? true,
    botRequireCodeGrant: input.botRequireCodeGrant ?? false,
    botUserId: null,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
    disabledReason: null,
  };
  // Issue #37 §2: the audit row is written in the insert's own commit.
  await changing(deps, acting, async (trx, emit) => {
    await insertApplication(trx, application);
    emit({ type: 'app.created', applicationId: application.id, ownerId });
  });
  return { application, clientSecret: secret ? secret.plain : null };
}

/** What the portal may change. The client type is not here: it is fixed at creation. */
export type ApplicationUpdate = ApplicationChanges;

/**
 * Changes an application's settings with the same rules as creation (50035 on any problem,
 * nothing changed). Redirect URIs are replaced as a whole list and checked against the app's
 * client type. An application the actor may not manage, or none → 404 (10002).
 */
export async function updateApplication(deps: Deps, acting: Acting, appId: string, changes: ApplicationUpdate, uploadedIcon = false): Promise<Application> {
  // Only setApplicationIcon passes uploadedIcon, with nothing but the icon: its own bot may change that.
  const app = await getManagedApplication(deps, acting.actor, appId, uploadedIcon);

  const errors = new FieldErrors();
  const checked: ApplicationChanges = {};
  if (changes.name !== undefined) checked.name = errors.take('name', checkAppName(changes.name, deps.config.serviceName));
  if (changes.description !== undefined) checked.description = errors.take('description', checkAppDescription(changes.description));
  // An uploaded icon's value is the path setApplicationIcon stored it at, not a URL to check.
  if (changes.iconUrl !== undefined) checked.iconUrl = uploadedIcon ? changes.iconUrl : errors.take('iconUrl', checkAppIconUrl(changes.iconUrl));
  if (changes.redirectUris !== undefined) {
    errors.redirectUris(changes.redirectUris, app.confidential);
    checked.redirectUris = [...changes.redirectUris];
  }
  if (changes.botPublic !== undefined) checked.botPublic = changes.botPublic;
  if (changes.botRequireCodeGrant !== undefined) checked.botRequireCodeGrant = changes.botRequireCodeGrant;
  errors.throwIfAny();

  const now = deps.clock.now();
  const fieldChanges = applicationChanges(app, checked);
  // The bot's avatar as it was: its own upload, which the new icon replaces, is deleted below.
  const botAvatar = checked.iconUrl !== undefined && app.botUserId !== null ? (await getPersonById(deps, app.botUserId))?.avatarUrl : undefined;
  await changing(deps, acting, async (trx, emit) => {
    if (!(await updateApplicationRow(trx, appId, checked, now))) throw ApiErrors.unknownApplication();
    // Issue #4: the bot account carries the app's name and icon, so it follows their changes.
    if (app.botUserId !== null && (checked.name !== undefined || checked.iconUrl !== undefined)) {
      await saveProfile(trx, app.botUserId, { ...(checked.name !== undefined ? { name: checked.name } : {}), ...(checked.iconUrl !== undefined ? { avatarUrl: checked.iconUrl } : {}) });
    }
    // A save that changed nothing (the form sent the same values) is no event.
    if (fieldChanges.length > 0) emit({ type: 'app.updated', applicationId: app.id, changes: fieldChanges });
  });
  // Issue #42 §3: once committed, the uploaded icon and the bot's own uploaded avatar that the new
  // icon replaced are named by nothing (each blob is its subject's alone, uploaded-images.ts imageBlobKey).
  if (checked.iconUrl !== undefined) await releaseUploadedImages(deps, [app.iconUrl, botAvatar].filter((value) => value !== checked.iconUrl));
  return {
    ...app,
    ...(checked.name !== undefined ? { name: checked.name } : {}),
    ...(checked.description !== undefined ? { description: checked.description } : {}),
    ...(checked.iconUrl !== undefined ? { iconUrl: checked.iconUrl } : {}),
    ...(checked.redirectUris !== undefined ? { redirectUris: checked.redirectUris } : {}),
    ...(checked.botPublic !== undefined ? { botPublic: checked.botPublic } : {}),
    ...(checked.botRequireCodeGrant !== undefined ? { botRequireCodeGrant: checked.botRequireCodeGrant } : {}),
    updatedAt: now,
  };
}

/**
 * Uploads (image data, `data:image/png;base64,…`) or removes (null) an application's icon
 * (issue #42 §3), which its bot account's avatar follows. 404 10002 for an app the actor may not
 * manage; 400 50035 at `field` with nothing stored. The icon it replaces, and the bot's own
 * uploaded avatar, are deleted from the blob store once nothing names them (updateApplication).
 */
export async function setApplicationIcon(deps: Deps, acting: Acting, appId: string, data: unknown, field = 'icon'): Promise<Application> {
  const app = await getManagedApplication(deps, acting.actor, appId, true);
  const iconUrl = data === null ? null : await storeUploadedImage(deps, field, 'app-icons', app.id, data);
  let updated: Application;
  try {
    updated = await updateApplication(deps, acting, app.id, { iconUrl }, true);
  } catch (error) {
    await releaseUploadedImage(deps, iconUrl, app.iconUrl);
    throw error;
  }
  return updated;
}

/**
 * What an update changes, as the audit log shows it (issue #37 §2): each field whose value
 * differs, old and new, under the API's snake_case names. The client type cannot change and no
 * secret is among these fields.
 */
function applicationChanges(app: Application, checked: ApplicationChanges): FieldChange[] {
  const changes: FieldChange[] = [];
  const field = (key: string, old: string | boolean | null, value: string | boolean | null | undefined) => {
    if (value !== undefined && value !== old) changes.push({ key, old, new: value });
  };
  field('name', app.name, checked.name);
  field('description', app.description, checked.description);
  field('icon_url', app.iconUrl, checked.iconUrl);
  // Space-separated, as in the portal's text box: a value of the audit log is a scalar.
  field('redirect_uris', app.redirectUris.join(' '), checked.redirectUris?.join(' '));
  field('bot_public', app.botPublic, checked.botPublic);
  field('bot_require_code_grant', app.botRequireCodeGrant, checked.botRequireCodeGrant);
  return changes;
}

/**
 * Issues a new client secret for a confidential application and returns it (shown once). The
 * old secret stops working at once: one UPDATE replaces the only stored hash. Tokens already
 * issued stay valid; revoking them is what deauthorization is for. A public app has no secret
 * to reset (50035 on `confidential`). Not the actor's to manage, or none → 404 (10002).
 */
export async function resetClientSecret(deps: Deps, acting: Acting, appId: string): Promise<string> {
  const app = await getManagedApplication(deps, acting.actor, appId);
  if (!app.confidential) throw ApiErrors.invalidFormBody(addFieldError({}, ['confidential'], { code: 'APPLICATION_PUBLIC', message: 'A public application has no client secret.' }));
  const secret = issueSecret(deps.random, 'clientSecret');
  await changing(deps, acting, async (trx, emit) => {
    if (!(await replaceClientSecretHash(trx, appId, secret.hash, deps.clock.now()))) throw ApiErrors.unknownApplication();
    // The event names the app only: the secret is shown once to the caller and kept nowhere else.
    emit({ type: 'client_secret.reset', applicationId: app.id });
  });
  return secret.plain;
}

/**
 * Deletes an application. Its grants, authorization codes, access and refresh tokens and
 * remembered consents are deleted with it by ON DELETE CASCADE, so every token it held stops
 * working at once. Not the actor's to manage, or none → 404 (10002).
 */
export async function deleteApplication(deps: Deps, acting: Acting, appId: string): Promise<void> {
  await deleteCheckedApplication(deps, acting, await getManagedApplication(deps, acting.actor, appId));
}

/**
 * deleteApplication of an app whose deletion the caller has already allowed (the operator's:
 * apps-admin.service.ts, which checks for the operator). `alongside` runs first in the same
 * transaction: the operator's deletion removes the bot's installs and the app's incoming webhooks
 * with it. 404 (10002) when the app is already gone.
 */
export async function deleteCheckedApplication(deps: Deps, acting: Acting, app: Application, alongside?: (trx: Transaction<Database>, emit: Emit, app: Application) => Promise<void>): Promise<void> {
  // The bot account stays (its messages name it); its avatar, the app's icon or its own upload, goes with the app.
  const bot = app.botUserId === null ? undefined : await getPersonById(deps, app.botUserId);
  await changing(deps, acting, async (trx, emit) => {
    // Issue #39: the operator's deletion also removes what the app left in servers, in this commit.
    if (alongside) await alongside(trx, emit, app);
    if (!(await deleteApplicationRow(trx, app.id))) throw ApiErrors.unknownApplication();
    if (bot?.avatarUrl) await saveProfile(trx, bot.id, { avatarUrl: null });
    emit({ type: 'app.deleted', applicationId: app.id });
  });
  // Issue #42 §3: the uploaded icon and the bot's uploaded avatar are the app's alone (uploaded-images.ts imageBlobKey).
  await releaseUploadedImages(deps, [app.iconUrl, bot?.avatarUrl]);
}

/** The applications a person owns, oldest first. */
export async function listOwnedApplications(deps: Deps, ownerId: string): Promise<Application[]> {
  return listApplicationsOwnedBy(deps.db, ownerId);
}

/**
 * The name of the app whose authorization link sent someone to sign in (issue #24: the sign-in
 * page names who is asking): `next` is the authorize URL sign-in returns to. Undefined for any
 * other address or an unknown client_id.
 */
export async function applicationAskingIn(deps: Deps, next: string): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(next, 'http://next.invalid');
  } catch {
    return undefined;
  }
  if (url.pathname !== '/app/oauth2/authorize' && url.pathname !== '/oauth2/authorize') return undefined;
  const app = await findApplicationByClientId(deps, url.searchParams.get('client_id') ?? '');
  return app?.name;
}

/** An application by client id, for the OAuth endpoints; undefined for malformed or unknown ids. */
export async function findApplicationByClientId(deps: Deps, clientId: string): Promise<Application | undefined> {
  if (!isSnowflake(clientId)) return undefined;
  // Remembered across instances where the database allows it: the repository chooses.
  return findClientApplication(deps.db, clientId);
}

/** The person named `username` (the CLI's --owner); 404 Unknown User otherwise. */
export async function findOwnerByUsername(deps: Deps, username: string): Promise<Person> {
  const person = await getPersonByUsername(deps, username.trim().replace(/^@/, ''));
  if (!person) throw ApiErrors.unknownUser();
  return person;
}

/**
 * Steps of a self-registered application's change (issue #41 §3, client-registration/), run in
 * the caller's transaction: the caller holds the acting and emits the event. Registration has
 * its own rules (RFC 7591), so these write what it checked.
 */
export async function insertApplicationIn(trx: Transaction<Database>, app: Application): Promise<void> {
  await insertApplication(trx, app);
}

/** False when the application is gone. */
export function updateApplicationIn(trx: Transaction<Database>, id: string, changes: ApplicationChanges, now: number): Promise<boolean> {
  return updateApplicationRow(trx, id, changes, now);
}

/** False when the application is gone; its grants, tokens and consents go with it (ON DELETE CASCADE). */
export function deleteApplicationIn(trx: Transaction<Database>, id: string): Promise<boolean> {
  return deleteApplicationRow(trx, id);
}

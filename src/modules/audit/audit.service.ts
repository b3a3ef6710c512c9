import type { Acting, Who } from '../../core/acting.js';
import type { Deps } from '../../deps.js';
import type { DomainEvent } from '../../events/domain-events.js';
import type { Writer } from '../../events/event-bus.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Application } from '../applications/applications.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { authorize } from '../directory/access.service.js';
import { getChannels } from '../directory/channels.service.js';
import type { Person } from '../directory/people.js';
import { getPersonById, getPersonByUsername } from '../directory/people.service.js';
import { getRoles } from '../directory/roles.service.js';
import type { Server } from '../directory/servers.js';
import { loadServerSettings } from '../directory/servers.service.js';
import type { Webhook } from '../webhooks/webhooks.js';
import { getWebhook } from '../webhooks/webhooks.service.js';
import { AUDITED_EVENTS, PERSONAL_SECURITY_EVENTS, auditEntryOf, type AuditEntry } from './audit.js';
import { insertAuditRows, listAuditRows, type AuditQuery, type AuditRow, type NewAuditRow } from './audit.repository.js';
import type { AuditNames } from './audit-words.js';

/** Discord's VIEW_AUDIT_LOG: who may read a server's log. */
const VIEW_AUDIT_LOG = { all: Permission.VIEW_AUDIT_LOG };

/**
 * Subscribes the audit log to the domain events (issue #37 §5): each kept event becomes one row,
 * written with the change's own transaction (events/event-bus.ts `changing`), or right after an
 * acknowledged change or refusal (`emitted`). Called once per process by app.ts and by the CLI.
 */
export function recordAuditLog(deps: Pick<Deps, 'bus' | 'ids'>): void {
  // Once per bus: a test that builds two apps on one services object must not record twice.
  if (subscribed.has(deps.bus)) return;
  subscribed.add(deps.bus);
  deps.bus.record(AUDITED_EVENTS, (db: Writer, acting: Acting<Who>, events: readonly DomainEvent[]) => {
    const rows: NewAuditRow[] = [];
    for (const event of events) {
      const entry = auditEntryOf(event, acting);
      if (entry !== undefined) rows.push(rowOf(deps.ids.next(), acting.at, entry));
    }
    return insertAuditRows(db, rows);
  });
}

const subscribed = new WeakSet<object>();

function rowOf(id: string, at: number, entry: AuditEntry): NewAuditRow {
  return {
    id,
    action: entry.action,
    action_type: entry.actionType,
    server_id: entry.serverId,
    actor_kind: entry.actorKind,
    actor_id: entry.actorId,
    application_id: entry.applicationId,
    target_id: entry.targetId,
    subject_user_id: entry.subjectUserId,
    address: entry.address,
    request_id: entry.requestId,
    reason: entry.reason,
    changes: entry.changes === null ? null : JSON.stringify(entry.changes.map((c) => ({ key: c.key, ...('old' in c ? { old_value: c.old } : {}), ...('new' in c ? { new_value: c.new } : {}) }))),
    options: entry.options === null ? null : JSON.stringify(entry.options),
    created_at: at,
  };
}

// --- Reading the log (issue #37 §5): a server's, a person's own, the operator's ------------------

/** The filters of a server's log (Discord's query parameters, or the page's). */
export interface ServerLogFilter {
  /** Entries done by this user (person or bot account). */
  userId?: string;
  actionType?: number;
  /** Entries of these actions (the page's filter). */
  actions?: readonly string[];
  before?: string;
  after?: string;
  limit: number;
  /** Only entries with one of Discord's action types (the API's log). */
  discordOnly?: boolean;
}

/** A page of a server's log with what its entries name, newest first. */
export interface ServerAuditLog {
  entries: AuditRow[];
  /** The people and bot accounts the entries name (actors and user targets), found ones only. */
  users: Person[];
  /** The webhooks the entries name that still exist. */
  webhooks: Webhook[];
  /** The apps added to or removed from the server that still exist. */
  apps: Application[];
  names: AuditNames;
  /** The `before` cursor of the next (older) page; undefined on the last one. */
  next: string | undefined;
}

/** Action types whose target is a user (Discord's MEMBER_KICK, MEMBER_ROLE_UPDATE, BOT_ADD, MESSAGE_DELETE). */
const USER_TARGETS = new Set<string>(['member.joined', 'member.removed', 'member.roles_updated', 'bot.installed', 'bot.removed', 'message.deleted', 'invitation.created', 'invitation.deleted']);

/**
 * A server's audit log for someone holding View audit log there (Discord's VIEW_AUDIT_LOG; the
 * owner and Administrators hold it): a non-member gets 10004 as for a server that does not exist,
 * a member without it 50013 (directory/policy.ts). Addresses and request ids are in the rows but
 * are the operator's: the API and the page leave them out.
 */
export async function readServerAuditLog(deps: Deps, actor: Actor, serverId: string, filter: ServerLogFilter): Promise<ServerAuditLog> {
  // The schema takes up to 20 digits; a snowflake is below 2^63 (a bigint column refuses more).
  for (const [field, value] of [['user_id', filter.userId], ['before', filter.before], ['after', filter.after]] as const) {
    if (value !== undefined && !isSnowflake(value)) throw invalidField([field], 'NUMBER_TYPE_COERCE', `Value "${value}" is not snowflake.`);
  }
  await authorize(deps, actor, serverId, VIEW_AUDIT_LOG);
  return pageOfLog(deps, serverId, filter);
}

/** One page of a server's log, for a reader already allowed; `known` saves reading the roles and channels again. */
async function pageOfLog(deps: Deps, serverId: string, filter: ServerLogFilter, known?: Known): Promise<ServerAuditLog> {
  const rows = await listAuditRows(deps.db, {
    serverId,
    limit: filter.limit + 1,
    ...(filter.userId !== undefined ? { actorId: filter.userId } : {}),
    ...(filter.actionType !== undefined ? { actionType: filter.actionType } : {}),
    ...(filter.actions !== undefined ? { actions: filter.actions } : {}),
    ...(filter.before !== undefined ? { before: filter.before } : {}),
    ...(filter.after !== undefined ? { after: filter.after } : {}),
    ...(filter.discordOnly ? { discordOnly: true } : {}),
  });
  const more = rows.length > filter.limit;
  let entries = rows.slice(0, filter.limit);
  // Discord's `after` reads the entries just after the cursor; every answer lists newest first.
  if (filter.after !== undefined && filter.before === undefined) entries = entries.reverse();
  return { entries, ...(await namesOf(deps, serverId, entries, known)), next: more ? entries.at(-1)?.id : undefined };
}

interface Known {
  roles: ReadonlyArray<{ id: string; name: string }>;
  channels: ReadonlyArray<{ id: string; name: string }>;
}

async function namesOf(deps: Deps, serverId: string, entries: readonly AuditRow[], known: Known | undefined): Promise<Pick<ServerAuditLog, 'users' | 'webhooks' | 'apps' | 'names'>> {
  const userIds = new Set<string>();
  const webhookIds = new Set<string>();
  const appIds = new Set<string>();
  for (const row of entries) {
    if ((row.actorKind === 'person' || row.actorKind === 'bot') && row.actorId !== null) userIds.add(row.actorId);
    if (row.actorKind === 'webhook' && row.actorId !== null) webhookIds.add(row.actorId);
    if (USER_TARGETS.has(row.action) && row.targetId !== null && isSnowflake(row.targetId)) userIds.add(row.targetId);
    if (row.action.startsWith('webhook.') && row.targetId !== null && isSnowflake(row.targetId)) webhookIds.add(row.targetId);
    if ((row.action === 'bot.installed' || row.action === 'bot.removed') && row.applicationId !== null) appIds.add(row.applicationId);
    // Issue #39: an ownership transfer names the new owner (audit-words.ts).
    if (row.action === 'server.transferred' && row.subjectUserId !== null) userIds.add(row.subjectUserId);
  }
  const [users, webhooks, apps, roles, channels] = await Promise.all([
    Promise.all([...userIds].map((id) => getPersonById(deps, id))),
    Promise.all([...webhookIds].map((id) => getWebhook(deps, id))),
    Promise.all([...appIds].map((id) => findApplicationByClientId(deps, id))),
    known?.roles ?? getRoles(deps, serverId),
    known?.channels ?? getChannels(deps, serverId),
  ]);
  const foundUsers = users.filter((u): u is Person => u !== undefined);
  const foundWebhooks = webhooks.filter((w): w is Webhook => w !== undefined && w.serverId === serverId);
  const foundApps = apps.filter((a): a is Application => a !== undefined);
  return {
    users: foundUsers,
    webhooks: foundWebhooks,
    apps: foundApps,
    names: {
      users: new Map(foundUsers.map((u) => [u.id, u.name || u.username])),
      roles: new Map(roles.map((r) => [r.id, r.name])),
      channels: new Map(channels.map((c) => [c.id, c.name])),
      webhooks: new Map(foundWebhooks.map((w) => [w.id, w.name])),
      apps: new Map(foundApps.map((a) => [a.id, a.name])),
    },
  };
}

/** A person named by username or id (the page's and the CLI's filters); undefined when there is none. */
export async function findAuditPerson(deps: Deps, nameOrId: string): Promise<Person | undefined> {
  const text = nameOrId.trim().replace(/^@/, '');
  if (text === '') return undefined;
  if (isSnowflake(text)) {
    const byId = await getPersonById(deps, text);
    if (byId) return byId;
  }
  return getPersonByUsername(deps, text);
}

/** A page of a person's own security events (Settings → Security), newest first. */
export interface SecurityLog {
  entries: AuditRow[];
  apps: ReadonlyMap<string, string>;
  next: string | undefined;
}

/** The signed-in person's own security events (PERSONAL_SECURITY_EVENTS), with addresses: they are theirs. */
export async function readSecurityLog(deps: Deps, personId: string, page: { before?: string; limit: number }): Promise<SecurityLog> {
  const rows = await listAuditRows(deps.db, { subjectUserId: personId, actions: PERSONAL_SECURITY_EVENTS, limit: page.limit + 1, ...(page.before !== undefined ? { before: page.before } : {}) });
  const entries = rows.slice(0, page.limit);
  const appIds = [...new Set(entries.map((r) => r.applicationId).filter((id): id is string => id !== null))];
  const apps = (await Promise.all(appIds.map((id) => findApplicationByClientId(deps, id)))).filter((a): a is Application => a !== undefined);
  return { entries, apps: new Map(apps.map((a) => [a.id, a.name])), next: rows.length > page.limit ? entries.at(-1)?.id : undefined };
}

/** The operator's view (`gatehouse audit list`): every entry matching `query`, newest first, with the usernames of the users it names. */
export async function readInstanceAuditLog(deps: Deps, query: AuditQuery): Promise<{ entries: AuditRow[]; usernames: ReadonlyMap<string, string> }> {
  const rows = await listAuditRows(deps.db, query);
  const entries = query.after !== undefined && query.before === undefined ? rows.reverse() : rows;
  const ids = new Set<string>();
  for (const row of entries) {
    if ((row.actorKind === 'person' || row.actorKind === 'bot') && row.actorId !== null) ids.add(row.actorId);
    if (row.subjectUserId !== null) ids.add(row.subjectUserId);
  }
  const people = (await Promise.all([...ids].map((id) => getPersonById(deps, id)))).filter((p): p is Person => p !== undefined);
  return { entries, usernames: new Map(people.map((p) => [p.id, p.username])) };
}

/** What Server settings → Audit log shows: one page of the log under the person and action filters. */
export interface AuditLogView extends ServerAuditLog {
  server: Server;
  permissions: bigint;
  members: Array<Pick<Person, 'id' | 'username' | 'name'>>;
  /** Why nothing was read: the person filter names no one. */
  unknownPerson: boolean;
}

/**
 * The page's read: View audit log (10004 / 50013 as readServerAuditLog), then the person named by
 * username or id (no one: an empty page saying so), then one page of entries under the filters.
 */
export async function auditLogView(deps: Deps, actor: Actor, serverId: string, filter: { person: string; action: string; before: string | undefined; limit: number }): Promise<AuditLogView> {
  const permissions = await authorize(deps, actor, serverId, VIEW_AUDIT_LOG);
  const data = await loadServerSettings(deps, serverId);
  if (!data) throw ApiErrors.unknownServer();
  const members = data.members.map((m) => ({ id: m.person.id, username: m.person.username, name: m.person.name }));
  const person = filter.person === '' ? undefined : await findAuditPerson(deps, filter.person);
  if (filter.person !== '' && person === undefined) {
    const names: AuditNames = { users: new Map(), roles: new Map(), channels: new Map(), webhooks: new Map(), apps: new Map() };
    return { server: data.server, permissions, members, unknownPerson: true, entries: [], users: [], webhooks: [], apps: [], names, next: undefined };
  }
  const log = await pageOfLog(
    deps,
    serverId,
    {
      limit: filter.limit,
      ...(person ? { userId: person.id } : {}),
      ...(filter.action !== '' ? { actions: [filter.action] } : {}),
      ...(filter.before !== undefined ? { before: filter.before } : {}),
    },
    { roles: data.roles, channels: data.channels },
  );
  return { ...log, server: data.server, permissions, members, unknownPerson: false };
}

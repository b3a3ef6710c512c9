import { presentUser, presentWebhook, type UserResource, type WebhookResource } from '../resources/resources.js';
import type { AuditRow } from './audit.js';
import type { Application } from '../applications/applications.js';
import type { Person } from '../directory/people.js';
import type { Webhook } from '../webhooks/webhooks.js';
import { changesOf, optionsOf } from './audit-words.js';

/**
 * Discord's audit log object (GET /guilds/{guild.id}/audit-logs; issue #37 §5), from a page of a
 * server's log. Pure. The address and request id of an entry are the operator's: not presented.
 */

export interface AuditLogEntryResource {
  id: string;
  user_id: string | null;
  target_id: string | null;
  action_type: number;
  changes?: Array<{ key: string; old_value?: unknown; new_value?: unknown }>;
  options?: Record<string, string>;
  reason?: string;
}

export interface IntegrationResource {
  id: string;
  name: string;
  type: 'discord';
  account: { id: string; name: string };
  application_id: string;
  application: { id: string; name: string; icon: null; description: string };
}

export interface AuditLogResource {
  audit_log_entries: AuditLogEntryResource[];
  users: UserResource[];
  webhooks: WebhookResource[];
  integrations: IntegrationResource[];
  application_commands: never[];
  guild_scheduled_events: never[];
  threads: never[];
  auto_moderation_rules: never[];
}

/**
 * Discord's MEMBER_ROLE_UPDATE changes carry partial roles (`$add`/`$remove`: [{ id, name }]); the
 * row keeps the ids, comma-separated, and the name is the role's now (its id when it is gone).
 */
function wireChange(change: { key: string; old_value?: unknown; new_value?: unknown }, roles: ReadonlyMap<string, string>): { key: string; old_value?: unknown; new_value?: unknown } {
  if ((change.key !== '$add' && change.key !== '$remove') || typeof change.new_value !== 'string') return change;
  const ids = change.new_value.split(',').filter(Boolean);
  return { key: change.key, new_value: ids.map((id) => ({ id, name: roles.get(id) ?? id })) };
}

export function presentAuditEntry(row: AuditRow, roles: ReadonlyMap<string, string> = new Map()): AuditLogEntryResource {
  const entry: AuditLogEntryResource = {
    id: row.id,
    // Discord's user_id is the user who acted; the operator and a webhook URL's holder are none.
    user_id: row.actorKind === 'person' || row.actorKind === 'bot' ? row.actorId : null,
    target_id: row.targetId,
    action_type: row.actionType ?? 0,
  };
  const changes = changesOf(row);
  if (changes.length > 0) entry.changes = changes.map((c) => wireChange(c, roles));
  if (row.options !== null) entry.options = optionsOf(row);
  if (row.reason !== null) entry.reason = row.reason;
  return entry;
}

export function presentAuditLog(log: { entries: readonly AuditRow[]; users: readonly Person[]; webhooks: readonly Webhook[]; apps: readonly Application[]; names: { roles: ReadonlyMap<string, string> } }, baseUrl: string): AuditLogResource {
  return {
    audit_log_entries: log.entries.map((row) => presentAuditEntry(row, log.names.roles)),
    users: log.users.map((u) => presentUser({ id: u.id, username: u.username, name: u.name, avatarUrl: u.avatarUrl, bot: u.bot })),
    webhooks: log.webhooks.map((w) => presentWebhook(w, { baseUrl })),
    integrations: log.apps.map((a) => ({
      id: a.id,
      name: a.name,
      type: 'discord',
      account: { id: a.botUserId ?? a.id, name: a.name },
      application_id: a.id,
      application: { id: a.id, name: a.name, icon: null, description: a.description },
    })),
    application_commands: [],
    guild_scheduled_events: [],
    threads: [],
    auto_moderation_rules: [],
  };
}

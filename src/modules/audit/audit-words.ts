import type { EventType } from '../../events/domain-events.js';
import type { AuditRow } from './audit.js';

/**
 * The audit log in words (issue #37 §5; docs/audit-log.md): what a server's Audit log page and a
 * person's Security page say about each entry. Pure: the names of the people, roles, channels,
 * webhooks and apps an entry points to are looked up by the service and handed in.
 */

/** The actions a server's log holds, with the words of the page's action filter, in the order shown. */
export const SERVER_ACTIONS: ReadonlyArray<{ action: EventType; label: string }> = [
  { action: 'server.created', label: 'Server created' },
  { action: 'server.updated', label: 'Server updated' },
  { action: 'server.transferred', label: 'Ownership transferred' },
  { action: 'channel.created', label: 'Channel created' },
  { action: 'channel.updated', label: 'Channel updated' },
  { action: 'channel.deleted', label: 'Channel deleted' },
  { action: 'role.created', label: 'Role created' },
  { action: 'role.updated', label: 'Role updated' },
  { action: 'role.deleted', label: 'Role deleted' },
  { action: 'member.joined', label: 'Member joined' },
  { action: 'member.removed', label: 'Member removed or left' },
  { action: 'member.roles_updated', label: 'Member roles changed' },
  { action: 'invite.created', label: 'Invite link created' },
  { action: 'invite.deleted', label: 'Invite link revoked' },
  { action: 'invitation.created', label: 'Invitation sent' },
  { action: 'invitation.deleted', label: 'Invitation withdrawn' },
  { action: 'webhook.created', label: 'Webhook created' },
  { action: 'webhook.updated', label: 'Webhook updated' },
  { action: 'webhook.token_regenerated', label: 'Webhook URL regenerated' },
  { action: 'webhook.deleted', label: 'Webhook deleted' },
  { action: 'bot.installed', label: 'App added' },
  { action: 'bot.removed', label: 'App removed' },
  { action: 'message.deleted', label: 'Message deleted by a moderator' },
];

export function isServerAction(value: string): value is EventType {
  return SERVER_ACTIONS.some((a) => a.action === value);
}

/** Names the service found for the ids entries point to; anything missing is named by its id. */
export interface AuditNames {
  /** Person or bot account id → display name (username when there is none). */
  users: ReadonlyMap<string, string>;
  roles: ReadonlyMap<string, string>;
  channels: ReadonlyMap<string, string>;
  webhooks: ReadonlyMap<string, string>;
  apps: ReadonlyMap<string, string>;
}

interface StoredChange {
  key: string;
  old_value?: unknown;
  new_value?: unknown;
}

/** The stored `changes` of a row (JSON written by audit.service.ts); [] when none or unreadable. */
export function changesOf(row: Pick<AuditRow, 'changes'>): StoredChange[] {
  if (row.changes === null) return [];
  try {
    const parsed: unknown = JSON.parse(row.changes);
    return Array.isArray(parsed) ? parsed.filter((c): c is StoredChange => typeof c === 'object' && c !== null && typeof (c as StoredChange).key === 'string') : [];
  } catch {
    return [];
  }
}

/** The stored `options` of a row; {} when none or unreadable. */
export function optionsOf(row: Pick<AuditRow, 'options'>): Record<string, string> {
  if (row.options === null) return {};
  try {
    const parsed: unknown = JSON.parse(row.options);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  } catch {
    return {};
  }
}

function changed(row: AuditRow, key: string, side: 'old_value' | 'new_value'): string | undefined {
  const value = changesOf(row).find((c) => c.key === key)?.[side];
  return value === undefined || value === null ? undefined : String(value);
}

/** Who did it, in words: a person's or bot's name, "A webhook", "The operator", "Someone". */
export function actorWords(row: AuditRow, names: AuditNames): string {
  if (row.actorKind === 'operator') return 'The operator';
  if (row.actorKind === 'webhook') return `The webhook ${names.webhooks.get(row.actorId ?? '') ?? row.actorId ?? ''}`.trim();
  if (row.actorId === null) return 'Someone';
  return names.users.get(row.actorId) ?? `User ${row.actorId}`;
}

function keysWords(row: AuditRow): string {
  const keys = changesOf(row).map((c) => c.key);
  return keys.length > 0 ? ` (${keys.join(', ')})` : '';
}

/** What was done, after the actor's name: "created the role Moderators". */
export function actionWords(row: AuditRow, names: AuditNames): string {
  const target = row.targetId ?? '';
  const user = names.users.get(target) ?? `user ${target}`;
  const role = changed(row, 'name', 'new_value') ?? changed(row, 'name', 'old_value') ?? names.roles.get(target) ?? target;
  const channel = changed(row, 'name', 'new_value') ?? changed(row, 'name', 'old_value') ?? names.channels.get(target) ?? target;
  const webhook = changed(row, 'name', 'new_value') ?? changed(row, 'name', 'old_value') ?? names.webhooks.get(target) ?? target;
  const app = names.apps.get(row.applicationId ?? '') ?? `app ${row.applicationId ?? target}`;
  const options = optionsOf(row);
  switch (row.action) {
    case 'server.created':
      return 'created the server';
    case 'server.updated':
      return `updated the server${keysWords(row)}`;
    case 'server.deleted':
      return 'deleted the server';
    case 'server.transferred': {
      const to = changed(row, 'owner_id', 'new_value') ?? '';
      return `transferred the server to ${names.users.get(to) ?? `user ${to}`}`;
    }
    case 'channel.created':
      return `created the channel #${channel}`;
    case 'channel.updated':
      return `updated the channel #${names.channels.get(target) ?? channel}${keysWords(row)}`;
    case 'channel.deleted':
      return `deleted the channel #${channel}`;
    case 'role.created':
      return `created the role ${role}`;
    case 'role.updated':
      return `updated the role ${names.roles.get(target) ?? role}${keysWords(row)}`;
    case 'role.deleted':
      return `deleted the role ${role}`;
    case 'member.joined':
      return row.actorId === target ? 'joined the server' : `added ${user} to the server`;
    case 'member.removed':
      return row.actorId === target || row.reason === 'left' ? 'left the server' : `removed ${user} from the server`;
    case 'member.roles_updated': {
      const roleNames = (key: string) => (changed(row, key, 'new_value') ?? '').split(',').filter(Boolean).map((id) => names.roles.get(id) ?? id);
      const parts = [roleNames('$add').length > 0 ? `gave ${roleNames('$add').join(', ')}` : '', roleNames('$remove').length > 0 ? `took away ${roleNames('$remove').join(', ')}` : ''].filter(Boolean);
      return `changed the roles of ${user}${parts.length > 0 ? `: ${parts.join('; ')}` : ''}`;
    }
    case 'invite.created':
      return 'created an invite link';
    case 'invite.deleted':
      return 'revoked an invite link';
    case 'invitation.created':
      return `invited ${user}`;
    case 'invitation.deleted':
      return `withdrew the invitation of ${user}`;
    case 'webhook.created':
      return `created the webhook ${webhook}${options['channel_id'] ? ` in #${names.channels.get(options['channel_id']) ?? options['channel_id']}` : ''}`;
    case 'webhook.updated':
      return `updated the webhook ${names.webhooks.get(target) ?? webhook}${keysWords(row)}`;
    case 'webhook.token_regenerated':
      return `regenerated the URL of the webhook ${names.webhooks.get(target) ?? webhook}`;
    case 'webhook.deleted':
      return `deleted the webhook ${webhook}`;
    case 'bot.installed':
      return `added the app ${app}`;
    case 'bot.removed':
      return `removed the app ${app}`;
    case 'message.deleted':
      return `deleted a message by ${user}${options['channel_id'] ? ` in #${names.channels.get(options['channel_id']) ?? options['channel_id']}` : ''}`;
    default:
      return row.action;
  }
}

const FAILED_WHY: Record<string, string> = {
  'wrong-password': 'wrong password',
  'unknown-person': 'unknown username',
  throttled: 'too many attempts; refused without checking',
  'passkey-refused': 'a passkey was refused',
  disabled: 'the account is disabled',
};

const ENDED_WHY: Record<string, string> = {
  'signed-out': 'signed out',
  'password-changed': 'ended when the password changed',
  'ended-elsewhere': 'ended from another session',
  'password-reset': 'ended when the password was reset',
  disabled: 'ended when the operator disabled the account',
  'ended-by-operator': 'was ended by the operator',
};

/** A person's own security event in words, for Settings → Security. */
export function securityWords(row: AuditRow, names: Pick<AuditNames, 'apps'>): string {
  const app = names.apps.get(row.applicationId ?? '') ?? `App ${row.applicationId ?? ''}`.trim();
  switch (row.action) {
    case 'signin.succeeded':
      return optionsOf(row)['method'] === 'passkey' ? 'Signed in with a passkey' : 'Signed in';
    case 'passkey.added':
      return `A passkey was added (${optionsOf(row)['name'] ?? 'unnamed'})`;
    case 'passkey.removed':
      return `A passkey was removed (${optionsOf(row)['name'] ?? 'unnamed'})`;
    case 'signin.failed':
      return `A sign-in to your account failed (${FAILED_WHY[row.reason ?? ''] ?? row.reason ?? 'refused'})`;
    case 'session.ended':
      return `A session ${ENDED_WHY[row.reason ?? ''] ?? 'ended'}`;
    case 'password.changed':
      return 'Your password was changed';
    case 'email.verification_sent':
      return optionsOf(row)['pending'] === 'true' ? 'A verification link was sent to your new e-mail address' : 'A verification link was sent to your e-mail address';
    case 'email.verified':
      return 'Your e-mail address was verified';
    case 'email.changed':
      return 'Your e-mail address was changed';
    case 'password.reset_requested':
      return optionsOf(row)['by'] === 'operator' ? 'The operator made a password reset link' : 'A password reset link was sent to your e-mail address';
    case 'password.reset':
      return optionsOf(row)['by'] === 'operator' ? 'The operator set your password' : 'Your password was reset with a link';
    case 'mfa.totp_enabled':
      return 'Two-factor authentication was turned on';
    case 'mfa.totp_disabled':
      return 'Two-factor authentication was turned off';
    case 'mfa.recovery_codes_generated':
      return 'New recovery codes were made';
    case 'mfa.recovery_code_used':
      return 'A recovery code was used';
    case 'mfa.reset_by_operator':
      return 'The operator removed your two-factor authentication';
    case 'signin.second_factor_failed':
      return 'A wrong two-factor code was entered for your account';
    case 'grant.created': {
      const scopes = optionsOf(row)['scopes'];
      return `You authorized ${app}${scopes ? ` (${scopes})` : ''}`;
    }
    case 'grant.revoked':
      return `The access of ${app} was removed`;
    case 'device.denied':
      return `You refused a device's request for ${app}`;
    case 'user_install.created':
      return `You added ${app} to your apps`;
    case 'user_install.deleted':
      return `${app} was removed from your apps`;
    default:
      return row.action;
  }
}

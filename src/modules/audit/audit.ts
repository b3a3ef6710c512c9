import type { Acting, Who } from '../../core/acting.js';
import { EVENT_TYPES, type DomainEvent, type EventType, type FieldChange } from '../../events/domain-events.js';

/**
 * What the audit log keeps of each domain event (issue #37 §5; docs/audit-log.md): which events,
 * under which of Discord's action types, with which target, subject and details. Pure: the
 * recorder (audit.service.ts) turns each kept event into one row with it.
 */

/** Discord's audit-log action types that Gatehouse produces (discord-api-types' AuditLogEvent). */
export const AuditLogEvent = {
  GuildUpdate: 1,
  ChannelCreate: 10,
  ChannelUpdate: 11,
  ChannelDelete: 12,
  MemberKick: 20,
  MemberRoleUpdate: 25,
  BotAdd: 28,
  RoleCreate: 30,
  RoleUpdate: 31,
  RoleDelete: 32,
  InviteCreate: 40,
  InviteDelete: 42,
  WebhookCreate: 50,
  WebhookUpdate: 51,
  WebhookDelete: 52,
  MessageDelete: 72,
  IntegrationDelete: 82,
} as const;

/** One stored audit entry, as the readers get it. */
export interface AuditRow {
  id: string;
  action: string;
  actionType: number | null;
  serverId: string | null;
  actorKind: string;
  actorId: string | null;
  applicationId: string | null;
  targetId: string | null;
  subjectUserId: string | null;
  address: string | null;
  requestId: string | null;
  reason: string | null;
  changes: string | null;
  options: string | null;
  createdAt: number;
}

/** One audit entry before it has an id and a time. */
export interface AuditEntry {
  action: EventType;
  actionType: number | null;
  serverId: string | null;
  actorKind: Who['kind'];
  actorId: string | null;
  applicationId: string | null;
  targetId: string | null;
  subjectUserId: string | null;
  address: string | null;
  requestId: string | null;
  reason: string | null;
  changes: FieldChange[] | null;
  options: Record<string, string> | null;
}

/** The events that are not security-relevant, which the audit log does not keep (a moderator's message delete is kept: message.deleted). */
const NOT_AUDITED: ReadonlySet<EventType> = new Set(['profile.updated', 'commands.updated', 'message.created', 'message.updated', 'message.ephemeral', 'channel.read', 'access.changed']);

/** The events the audit log keeps: every event type but NOT_AUDITED, so a new type is kept unless said otherwise. */
export const AUDITED_EVENTS: readonly EventType[] = EVENT_TYPES.filter((type) => !NOT_AUDITED.has(type));

/** The events the person sees on their own security page (Settings → Security). */
export const PERSONAL_SECURITY_EVENTS = [
  'signin.succeeded', 'signin.failed', 'session.ended', 'password.changed', 'grant.created', 'grant.revoked', 'device.denied', 'user_install.created', 'user_install.deleted',
  'passkey.added', 'passkey.removed',
  'email.verification_sent', 'email.verified', 'email.changed', 'password.reset_requested', 'password.reset',
  'mfa.totp_enabled', 'mfa.totp_disabled', 'mfa.recovery_codes_generated', 'mfa.recovery_code_used', 'mfa.reset_by_operator', 'signin.second_factor_failed',
] as const satisfies readonly EventType[];

/** Instance-wide security events: attacks and credential resets (`gatehouse audit list --security`). */
export const SECURITY_EVENTS = [
  'signin.failed', 'code.replayed', 'refresh.reused', 'client.auth_failed', 'client_secret.reset', 'bot_token.reset', 'signing_key.rotated',
  'password.reset', 'signin.second_factor_failed', 'mfa.reset_by_operator',
] as const satisfies readonly EventType[];

interface Placed {
  actionType: number | null;
  serverId: string | null;
  applicationId: string | null;
  targetId: string | null;
  subjectUserId: string | null;
  changes?: FieldChange[];
  options?: Record<string, string>;
  /** The service's own reason when the caller gave none (why a sign-in failed, why a member left). */
  why?: string;
}

function place(event: DomainEvent, acting: Acting<Who>): Placed | undefined {
  const none = { actionType: null, serverId: null, applicationId: null, targetId: null, subjectUserId: null };
  switch (event.type) {
    case 'grant.created':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId, subjectUserId: event.userId, options: { scopes: event.scopes } };
    case 'grant.revoked':
    case 'device.denied':
    case 'code.replayed':
    case 'refresh.reused':
    case 'user_install.created':
    case 'user_install.deleted':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId, subjectUserId: event.userId };
    case 'client.auth_failed':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId, options: { method: event.method } };
    case 'signing_key.rotated':
      return { ...none, targetId: event.kid, options: { alg: event.alg, retired: event.retired.join(',') } };
    case 'email.verified':
    case 'email.changed':
      return { ...none, targetId: event.userId, subjectUserId: event.userId };
    case 'email.verification_sent':
      return { ...none, targetId: event.userId, subjectUserId: event.userId, options: { pending: String(event.pending) } };
    case 'password.reset_requested':
    case 'password.reset':
      return { ...none, targetId: event.userId, subjectUserId: event.userId, options: { by: event.by } };
    case 'signin.succeeded':
      return { ...none, targetId: event.userId, subjectUserId: event.userId, ...(event.method !== undefined ? { options: { method: event.method } } : {}) };
    case 'passkey.added':
    case 'passkey.removed':
      return { ...none, targetId: event.userId, subjectUserId: event.userId, options: { name: event.name } };
    case 'password.changed':
    case 'person.created':
    case 'account.deleted':
    case 'person.enabled':
    case 'person.admin_granted':
    case 'person.admin_revoked':
    case 'mfa.totp_enabled':
    case 'mfa.totp_disabled':
    case 'mfa.recovery_codes_generated':
    case 'mfa.recovery_code_used':
    case 'mfa.reset_by_operator':
    case 'signin.second_factor_failed':
      return { ...none, targetId: event.userId, subjectUserId: event.userId };
    case 'mail.requeued':
      return { ...none, targetId: event.mailId, options: { count: String(event.count) } };
    case 'signin.failed':
      return { ...none, targetId: event.userId, subjectUserId: event.userId, options: { username: event.username }, why: event.why };
    case 'session.ended':
      return { ...none, targetId: event.userId, subjectUserId: event.userId, why: event.why };
    case 'signup_link.created':
      return { ...none, options: { with_email: String(event.withEmail) } };
    case 'person.disabled':
      return { ...none, targetId: event.userId, subjectUserId: event.userId, ...(event.reason !== null ? { why: event.reason } : {}) };
    case 'app.created':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId, subjectUserId: event.ownerId };
    case 'app.updated':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId, changes: event.changes };
    case 'app.deleted':
    case 'client_secret.reset':
    case 'bot_token.reset':
    case 'app.enabled':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId };
    case 'app.disabled':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId, options: { revoked_grants: String(event.revokedGrants) } };
    case 'resource_server.added':
      return { ...none, applicationId: event.applicationId, targetId: event.resourceServerId, options: { identifier: event.identifier, scopes: event.scopes } };
    case 'resource_server.removed':
      return { ...none, applicationId: event.applicationId, targetId: event.resourceServerId, options: { identifier: event.identifier } };
    case 'app.registered':
      return { ...none, applicationId: event.applicationId, targetId: event.applicationId, options: { confidential: String(event.confidential) } };
    case 'registration_token.created':
      return { ...none, targetId: event.tokenId, options: { expires_at: event.expiresAt === null ? 'never' : String(event.expiresAt) } };
    case 'bot.installed':
      return { ...none, actionType: AuditLogEvent.BotAdd, serverId: event.serverId, applicationId: event.applicationId, targetId: event.botUserId, options: { scopes: event.scopes, permissions: event.permissions } };
    case 'bot.removed':
      return { ...none, actionType: AuditLogEvent.IntegrationDelete, serverId: event.serverId, applicationId: event.applicationId, targetId: event.botUserId };
    case 'webhook.created':
      return { ...none, actionType: AuditLogEvent.WebhookCreate, serverId: event.serverId, targetId: event.webhookId, changes: [{ key: 'name', new: event.name }, { key: 'channel_id', new: event.channelId }], options: { channel_id: event.channelId } };
    case 'webhook.updated':
      return { ...none, actionType: AuditLogEvent.WebhookUpdate, serverId: event.serverId, targetId: event.webhookId, changes: event.changes, options: { channel_id: event.channelId } };
    case 'webhook.token_regenerated':
      return { ...none, actionType: AuditLogEvent.WebhookUpdate, serverId: event.serverId, targetId: event.webhookId, changes: [{ key: 'token' }], options: { channel_id: event.channelId } };
    case 'webhook.deleted':
      return { ...none, actionType: AuditLogEvent.WebhookDelete, serverId: event.serverId, targetId: event.webhookId, changes: [{ key: 'name', old: event.name }, { key: 'channel_id', old: event.channelId }], options: { channel_id: event.channelId } };
    case 'server.created':
      return { ...none, serverId: event.serverId, targetId: event.serverId, subjectUserId: event.ownerId };
    case 'server.updated':
      return { ...none, actionType: AuditLogEvent.GuildUpdate, serverId: event.serverId, targetId: event.serverId, changes: event.changes };
    case 'server.deleted':
      return { ...none, serverId: event.serverId, targetId: event.serverId, changes: [{ key: 'name', old: event.name }] };
    case 'server.transferred':
      // Discord records an ownership transfer as a GUILD_UPDATE changing owner_id.
      return { ...none, actionType: AuditLogEvent.GuildUpdate, serverId: event.serverId, targetId: event.serverId, subjectUserId: event.toUserId, changes: [{ key: 'owner_id', old: event.fromUserId, new: event.toUserId }] };
    case 'member.joined':
      return { ...none, serverId: event.serverId, targetId: event.userId };
    case 'member.removed':
      // Discord records a kick, not a member leaving; both are kept, only the kick under its type.
      return { ...none, actionType: event.why === 'kicked' ? AuditLogEvent.MemberKick : null, serverId: event.serverId, targetId: event.userId, why: event.why === 'left' ? 'left' : undefined };
    case 'member.roles_updated': {
      const changes: FieldChange[] = [];
      if (event.added.length > 0) changes.push({ key: '$add', new: event.added.join(',') });
      if (event.removed.length > 0) changes.push({ key: '$remove', new: event.removed.join(',') });
      return { ...none, actionType: AuditLogEvent.MemberRoleUpdate, serverId: event.serverId, targetId: event.userId, changes };
    }
    case 'role.created':
      return { ...none, actionType: AuditLogEvent.RoleCreate, serverId: event.serverId, targetId: event.roleId, changes: [{ key: 'name', new: event.name }, { key: 'permissions', new: event.permissions }, { key: 'color', new: event.color }] };
    case 'role.updated':
      return { ...none, actionType: AuditLogEvent.RoleUpdate, serverId: event.serverId, targetId: event.roleId, changes: event.changes };
    case 'role.deleted':
      return { ...none, actionType: AuditLogEvent.RoleDelete, serverId: event.serverId, targetId: event.roleId, changes: [{ key: 'name', old: event.name }] };
    case 'channel.created':
      return { ...none, actionType: AuditLogEvent.ChannelCreate, serverId: event.serverId, targetId: event.channelId, changes: [{ key: 'name', new: event.name }] };
    case 'channel.updated':
      return { ...none, actionType: AuditLogEvent.ChannelUpdate, serverId: event.serverId, targetId: event.channelId, changes: event.changes };
    case 'channel.deleted':
      return { ...none, actionType: AuditLogEvent.ChannelDelete, serverId: event.serverId, targetId: event.channelId, changes: [{ key: 'name', old: event.name }] };
    case 'invite.created':
      return {
        ...none,
        actionType: AuditLogEvent.InviteCreate,
        serverId: event.serverId,
        targetId: event.code,
        changes: [{ key: 'code', new: event.code }, { key: 'channel_id', new: event.channelId }, { key: 'max_uses', new: event.maxUses ?? 0 }],
      };
    case 'invite.deleted':
      return { ...none, actionType: AuditLogEvent.InviteDelete, serverId: event.serverId, targetId: event.code, changes: [{ key: 'code', old: event.code }] };
    case 'invitation.created':
    case 'invitation.deleted':
      return { ...none, serverId: event.serverId, targetId: event.inviteeId, options: { invitation_id: event.invitationId } };
    case 'message.deleted':
      // Discord's MESSAGE_DELETE: someone deleting another's message. Authors deleting their own are not kept.
      if (event.serverId === null || event.authorId === null || ('id' in acting.actor && acting.actor.id === event.authorId)) return undefined;
      return { ...none, actionType: AuditLogEvent.MessageDelete, serverId: event.serverId, targetId: event.authorId, options: { channel_id: event.channelId, count: '1', message_id: event.messageId } };
    default:
      return undefined;
  }
}

/** The audit entry of `event` done by `acting`, or undefined when the audit log does not keep it. */
export function auditEntryOf(event: DomainEvent, acting: Acting<Who>): AuditEntry | undefined {
  const placed = place(event, acting);
  if (placed === undefined) return undefined;
  const actor = acting.actor;
  return {
    action: event.type,
    actionType: placed.actionType,
    serverId: placed.serverId,
    actorKind: actor.kind,
    actorId: actor.kind === 'person' || actor.kind === 'bot' || actor.kind === 'webhook' ? actor.id : null,
    applicationId: placed.applicationId ?? (actor.kind === 'bot' ? actor.applicationId : null),
    targetId: placed.targetId,
    subjectUserId: placed.subjectUserId,
    address: acting.address,
    requestId: acting.requestId,
    reason: acting.reason ?? placed.why ?? null,
    changes: placed.changes && placed.changes.length > 0 ? placed.changes : null,
    options: placed.options ?? null,
  };
}

/**
 * What: the typed list of what happens in Gatehouse (issue #37 §2), emitted by the services that
 * make it happen, with the `Acting` of who did (core/acting.ts). Subscribers (events/event-bus.ts):
 * the audit log records the security-relevant ones in the change's own commit; live channel views
 * hear the message and access events; app-event deliveries will hear what apps subscribe to.
 *
 * An event names ids, never secrets or bodies: it may be written to the audit log and travel to
 * other instances. `serverId` places an event in a server's audit log; `changes` are Discord's
 * audit-log changes (key, old value, new value), kept small.
 */

/** One changed field, as Discord's audit log shows it. */
export interface FieldChange {
  key: string;
  old?: string | number | boolean | null;
  new?: string | number | boolean | null;
}

interface InServer {
  serverId: string;
}

/** Each event type and what it carries besides its type. */
export interface EventPayloads {
  // OAuth and OpenID Connect (oauth/, oidc/).
  'grant.created': { applicationId: string; userId: string; scopes: string };
  'grant.revoked': { applicationId: string; userId: string };
  /** RFC 8628 (issue #41 §2): the person refused a device's request on /activate. */
  'device.denied': { applicationId: string; userId: string };
  'code.replayed': { applicationId: string; userId: string };
  'refresh.reused': { applicationId: string; userId: string };
  'client.auth_failed': { applicationId: string | null; method: string };
  /** A new ID-token signing key of `alg` (its kid; never key material), replacing `retired` (oidc/). */
  'signing_key.rotated': { alg: string; kid: string; retired: string[] };
  // Accounts (accounts/).
  /** `method`: passkey when signed in with a passkey alone (issue #38 §4); a password otherwise. */
  'signin.succeeded': { userId: string; method?: 'passkey' };
  'signin.failed': { username: string; userId: string | null; why: 'wrong-password' | 'unknown-person' | 'throttled' | 'passkey-refused' | 'disabled' };
  'session.ended': { userId: string; why: 'signed-out' | 'password-changed' | 'ended-elsewhere' | 'password-reset' | 'disabled' | 'ended-by-operator' };
  'password.changed': { userId: string };
  'profile.updated': { userId: string; changes: FieldChange[] };
  'person.created': { userId: string };
  /** Issue #38 §5: the person deleted their account; the row stays as "Deleted account". */
  'account.deleted': { userId: string };
  /** Issue #39: the operator disabled an account (`reason` as they gave it) or enabled it again. */
  'person.disabled': { userId: string; reason: string | null };
  'person.enabled': { userId: string };
  /** Issue #39: the person became, or stopped being, an instance administrator. */
  'person.admin_granted': { userId: string };
  'person.admin_revoked': { userId: string };
  /** Issue #39: the operator issued a single-use sign-up link (`gatehouse people invite`), for an address or not. */
  'signup_link.created': { withEmail: boolean };
  /** Issue #38 §4: a passkey registered or removed, by the name its person gave it. */
  'passkey.added': { userId: string; name: string };
  'passkey.removed': { userId: string; name: string };
  /** Issue #38 §2: a verification link was mailed (`pending`: to a new address not yet in effect). */
  'email.verification_sent': { userId: string; pending: boolean };
  'email.verified': { userId: string };
  /** Issue #38 §2: a verified new address replaced the old one (the old one is told by mail). */
  'email.changed': { userId: string };
  /** Issue #38 §3: a reset link was issued (`by`: mailed on request, or printed for the operator). */
  'password.reset_requested': { userId: string; by: 'mail' | 'operator' };
  /** Issue #38 §3: the password was set through a reset link or by the operator. */
  'password.reset': { userId: string; by: 'link' | 'operator' };
  // Second factors (mfa/), issue #38 §4. Never the seed or a code.
  'mfa.totp_enabled': { userId: string };
  'mfa.totp_disabled': { userId: string };
  'mfa.recovery_codes_generated': { userId: string };
  'mfa.recovery_code_used': { userId: string };
  'mfa.reset_by_operator': { userId: string };
  'signin.second_factor_failed': { userId: string };
  /** Issue #38 §1: the operator put failed mail back in the queue (`gatehouse mail retry`); `mailId` null for --all-failed. */
  'mail.requeued': { count: number; mailId: string | null };
  // Applications (applications/).
  'app.created': { applicationId: string; ownerId: string };
  'app.updated': { applicationId: string; changes: FieldChange[] };
  'app.deleted': { applicationId: string };
  'client_secret.reset': { applicationId: string };
  'bot_token.reset': { applicationId: string };
  'bot.installed': InServer & { applicationId: string; botUserId: string; scopes: string; permissions: string };
  'bot.removed': InServer & { applicationId: string; botUserId: string };
  'user_install.created': { applicationId: string; userId: string };
  'user_install.deleted': { applicationId: string; userId: string };
  'commands.updated': { applicationId: string; serverId: string | null };
  /** Issue #39: the operator disabled an app (its `revokedGrants` grants ended with it; the reason is the acting's) or enabled it again. */
  'app.disabled': { applicationId: string; revokedGrants: number };
  'app.enabled': { applicationId: string };
  /** Issue #41 §1: an API the application serves (RFC 8707 resource), by its identifier. */
  'resource_server.added': { applicationId: string; resourceServerId: string; identifier: string; scopes: string; delegatedScopes?: string };
  'resource_server.removed': { applicationId: string; resourceServerId: string; identifier: string };
  /** Issue #41 §3: an application registered itself (RFC 7591), from the acting's address. */
  'app.registered': { applicationId: string; confidential: boolean };
  /** Issue #41 §3: the operator minted an initial access token for registration (`expiresAt` null: never). */
  'registration_token.created': { tokenId: string; expiresAt: number | null };
  // Webhooks (webhooks/).
  'webhook.created': InServer & { webhookId: string; channelId: string; name: string };
  'webhook.updated': InServer & { webhookId: string; channelId: string; changes: FieldChange[] };
  'webhook.token_regenerated': InServer & { webhookId: string; channelId: string };
  'webhook.deleted': InServer & { webhookId: string; channelId: string; name: string };
  // The directory (directory/).
  'server.created': InServer & { ownerId: string };
  'server.updated': InServer & { changes: FieldChange[] };
  'server.deleted': InServer & { name: string };
  /** Issue #39: the server's owner became `toUserId` (by its owner, or the operator). */
  'server.transferred': InServer & { fromUserId: string; toUserId: string };
  'member.joined': InServer & { userId: string };
  'member.removed': InServer & { userId: string; why: 'kicked' | 'left' };
  'member.roles_updated': InServer & { userId: string; added: string[]; removed: string[] };
  'role.created': InServer & { roleId: string; name: string; permissions: string; color: number };
  'role.updated': InServer & { roleId: string; changes: FieldChange[] };
  'role.deleted': InServer & { roleId: string; name: string };
  'channel.created': InServer & { channelId: string; name: string };
  'channel.updated': InServer & { channelId: string; changes: FieldChange[] };
  'channel.deleted': InServer & { channelId: string; name: string };
  'invite.created': InServer & { code: string; channelId: string | null; maxUses: number | null; expiresAt: string | null };
  'invite.deleted': InServer & { code: string };
  'invitation.created': InServer & { invitationId: string; inviteeId: string };
  'invitation.deleted': InServer & { invitationId: string; inviteeId: string };
  // Messages (messages/, webhooks/). `serverId` is null in a DM.
  'message.created': { serverId: string | null; channelId: string; messageId: string };
  'message.updated': { serverId: string | null; channelId: string; messageId: string };
  'message.deleted': { serverId: string | null; channelId: string; messageId: string; authorId: string | null };
  /**
   * Issue #40 §2: an app's ephemeral message for `recipientId` was posted, edited or deleted; only
   * that person's live views of the channel hear it (messages/ephemeral-messages.table.ts).
   */
  'message.ephemeral': { channelId: string; recipientId: string; messageId: string };
  'channel.read': { userId: string; channelId: string; messageId: string };
  /**
   * Who may read what changed for `topicId` (a person, a server or a channel): open live views
   * re-check their access at once (realtime/channel-events.ts, issue #21 §5).
   */
  'access.changed': { topicId: string };
}

export type EventType = keyof EventPayloads;

/** One event: its type and its payload, discriminated by `type`. */
export type DomainEvent = { [T in EventType]: { readonly type: T } & Readonly<EventPayloads[T]> }[EventType];

/** The event of one type. */
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** Every event type, in the order above (the docs and the audit log's filter list read it). */
export const EVENT_TYPES = [
  'grant.created', 'grant.revoked', 'device.denied', 'code.replayed', 'refresh.reused', 'client.auth_failed', 'signing_key.rotated',
  'signin.succeeded', 'signin.failed', 'session.ended', 'password.changed', 'profile.updated', 'person.created', 'account.deleted',
  'person.disabled', 'person.enabled', 'person.admin_granted', 'person.admin_revoked', 'signup_link.created',
  'passkey.added', 'passkey.removed',
  'email.verification_sent', 'email.verified', 'email.changed', 'password.reset_requested', 'password.reset',
  'mfa.totp_enabled', 'mfa.totp_disabled', 'mfa.recovery_codes_generated', 'mfa.recovery_code_used', 'mfa.reset_by_operator', 'signin.second_factor_failed',
  'mail.requeued',
  'app.created', 'app.updated', 'app.deleted', 'client_secret.reset', 'bot_token.reset', 'bot.installed', 'bot.removed',
  'app.disabled', 'app.enabled',
  'user_install.created', 'user_install.deleted', 'commands.updated', 'resource_server.added', 'resource_server.removed',
  'app.registered', 'registration_token.created',
  'webhook.created', 'webhook.updated', 'webhook.token_regenerated', 'webhook.deleted',
  'server.created', 'server.updated', 'server.deleted', 'server.transferred', 'member.joined', 'member.removed', 'member.roles_updated',
  'role.created', 'role.updated', 'role.deleted', 'channel.created', 'channel.updated', 'channel.deleted',
  'invite.created', 'invite.deleted', 'invitation.created', 'invitation.deleted',
  'message.created', 'message.updated', 'message.deleted', 'message.ephemeral', 'channel.read', 'access.changed',
] as const satisfies readonly EventType[];

// The list above names every type once (a type missing from it fails to compile here).
type Missing = Exclude<EventType, (typeof EVENT_TYPES)[number]>;
const everyTypeListed: [Missing] extends [never] ? true : Missing = true;
void everyTypeListed;

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { UserResourceBody, WebhookResourceBody } from '../resources/resources.schemas.js';

/**
 * TypeBox schemas of the audit log's routes (issue #37 §5; docs/audit-log.md): Discord's
 * GET /guilds/{guild.id}/audit-logs query and answer, and the pages' queries. Response schemas
 * also decide what is serialised: an entry's address and request id are not in them.
 */

const Snowflake = (description: string) => Type.String({ description, pattern: '^[0-9]{1,20}$' });
const Nullable = <T extends TSchema>(schema: T, description?: string) => Type.Union([schema, Type.Null()], description ? { description } : {});

export const AUDIT_LOG_LIMIT_DEFAULT = 50;
export const AUDIT_LOG_LIMIT_MAX = 100;

export const GuildParams = Type.Object({ guildId: Type.String({ description: 'Server (guild) id' }) });
export type GuildParams = Static<typeof GuildParams>;

/** Discord's query parameters; any other is refused (50035), as Discord's validation does. */
export const AuditLogQuery = Type.Object(
  {
    user_id: Type.Optional(Snowflake('Entries made by this user (person or bot account)')),
    action_type: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: "Entries of this Discord action type (ROLE_CREATE = 30, WEBHOOK_CREATE = 50, …; docs/audit-log.md)" })),
    before: Type.Optional(Snowflake('Entries with an id lower than this entry id (older)')),
    after: Type.Optional(Snowflake('Entries with an id greater than this entry id (newer)')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_LOG_LIMIT_MAX, default: AUDIT_LOG_LIMIT_DEFAULT, description: 'How many entries, 1–100 (default 50)' })),
  },
  { additionalProperties: false },
);
export type AuditLogQuery = Static<typeof AuditLogQuery>;

const AuditLogChange = Type.Object({
  key: Type.String({ description: 'The changed field (name, permissions, $add, $remove, …)' }),
  old_value: Type.Optional(Type.Unknown({ description: 'The value before' })),
  new_value: Type.Optional(Type.Unknown({ description: 'The value after' })),
});

export const AuditLogEntryBody = Type.Object(
  {
    id: Snowflake('Entry id (its order is time order)'),
    user_id: Nullable(Snowflake('Who did it'), 'The user who did it; null for the operator (CLI) and a webhook'),
    target_id: Nullable(Type.String(), 'What was acted on: a role, channel, user, webhook id, or an invite code'),
    action_type: Type.Integer({ description: "Discord's audit log event type" }),
    changes: Type.Optional(Type.Array(AuditLogChange)),
    options: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "Discord's optional audit entry info (channel_id, count, message_id, …)" })),
    reason: Type.Optional(Type.String({ description: 'The X-Audit-Log-Reason sent with the change (1–512 characters)' })),
  },
  { description: "An audit log entry (Discord's audit log entry object)" },
);

const IntegrationBody = Type.Object(
  {
    id: Snowflake('The application id'),
    name: Type.String(),
    type: Type.Literal('discord'),
    account: Type.Object({ id: Type.String({ description: "The app's bot account id (the application id when it has none)" }), name: Type.String() }),
    application_id: Snowflake('The application id'),
    application: Type.Object({ id: Snowflake('The application id'), name: Type.String(), icon: Type.Null(), description: Type.String() }),
  },
  { description: "An app added to the server (Discord's partial integration)" },
);

export const AuditLogBody = Type.Object(
  {
    audit_log_entries: Type.Array(AuditLogEntryBody, { description: 'Newest first' }),
    users: Type.Array(UserResourceBody, { description: 'The users the entries name (who did them, and the members they were done to)' }),
    webhooks: Type.Array(WebhookResourceBody, { description: 'The webhooks the entries name that still exist' }),
    integrations: Type.Array(IntegrationBody, { description: 'The apps added or removed that still exist' }),
    application_commands: Type.Array(Type.Unknown(), { maxItems: 0 }),
    guild_scheduled_events: Type.Array(Type.Unknown(), { maxItems: 0 }),
    threads: Type.Array(Type.Unknown(), { maxItems: 0 }),
    auto_moderation_rules: Type.Array(Type.Unknown(), { maxItems: 0 }),
  },
  { description: "A server's audit log (Discord's audit log object)" },
);

/** The server page's filters (every field optional: a bad value is shown beside the form). */
export const AuditPageQuery = Type.Object({
  person: Type.Optional(Type.String({ maxLength: 64 })),
  action: Type.Optional(Type.String({ maxLength: 64 })),
  before: Type.Optional(Type.String({ maxLength: 20 })),
});
export type AuditPageQuery = Static<typeof AuditPageQuery>;

export const AuditPageParams = Type.Object({ serverId: Type.String() });
export type AuditPageParams = Static<typeof AuditPageParams>;

export const SecurityPageQuery = Type.Object({ before: Type.Optional(Type.String({ maxLength: 20 })) });
export type SecurityPageQuery = Static<typeof SecurityPageQuery>;

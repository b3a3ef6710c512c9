import type { ApplicationsTable } from '../modules/applications/applications.table.js';
import type { OAuthAccessTokensTable, OAuthCodesTable, OAuthConsentsTable, OAuthGrantsTable, OAuthRefreshTokensTable } from '../modules/oauth/oauth.table.js';
import type { ApplicationCommandsTable, DmChannelsTable, ServerInstallsTable, UserInstallsTable } from '../modules/applications/bots.table.js';
import type { WebhookGithubDeliveriesTable, WebhooksTable } from '../modules/webhooks/webhooks.table.js';
import type { SessionsTable } from '../modules/accounts/sessions.table.js';
import type { AccountTokensTable } from '../modules/accounts/account-tokens.table.js';
import type { PasskeyChallengesTable, PasskeysTable } from '../modules/accounts/passkeys.table.js';
import type {
  ChannelsTable,
  InvitesTable,
  MemberInvitationsTable,
  MemberRolesTable,
  MembersTable,
  RolesTable,
  ServersTable,
  UsersTable,
} from '../modules/directory/directory.table.js';
import type { ChannelReadsTable, MessagesTable } from '../modules/messages/messages.table.js';
import type { OneTimeRevealsTable } from '../modules/reveals/reveals.table.js';
import type { WorkerLeasesTable } from './worker-lease.table.js';
import type { ServerSecretCheckTable } from './server-secret-check.table.js';
import type { AuditEventsTable } from '../modules/audit/audit.table.js';
import type { MfaPendingSignInsTable, MfaRecoveryCodesTable, MfaSessionMethodsTable, MfaTotpTable } from '../modules/mfa/mfa.table.js';
import type { MailOutboxTable } from '../modules/mail/mail.table.js';
import type { AppDeliveriesTable, AppEndpointsTable, AppEventOutboxTable } from '../modules/app-events/app-events.table.js';
import type { OidcClientsTable, OidcGrantsTable, OidcSigningKeysTable } from '../modules/oidc/oidc.table.js';
import type { AttachmentsTable } from '../modules/files/files.table.js';
import type { FileChunksTable } from './file-chunks.table.js';
import type { ResourceServersTable } from '../modules/resource-servers/resource-servers.table.js';
import type { RegisteredClientsTable, RegistrationTokensTable } from '../modules/client-registration/client-registration.table.js';
import type { ClientMetadataDocumentsTable } from '../modules/client-metadata/client-metadata.table.js';
import type { OAuthDeviceCodesTable } from '../modules/oauth/device-codes.table.js';
import type { InteractionsTable } from '../modules/interactions/interactions.table.js';
import type { MessageInteractionsTable } from '../modules/messages/message-interactions.table.js';
import type { EphemeralMessagesTable } from '../modules/messages/ephemeral-messages.table.js';

/** The one Database interface, composed of each module's table types (DESIGN §9.3). */
export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  account_tokens: AccountTokensTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  servers: ServersTable;
  roles: RolesTable;
  members: MembersTable;
  member_roles: MemberRolesTable;
  member_invitations: MemberInvitationsTable;
  channels: ChannelsTable;
  invites: InvitesTable;
  messages: MessagesTable;
  channel_reads: ChannelReadsTable;
  worker_leases: WorkerLeasesTable;
  server_secret_check: ServerSecretCheckTable;
  applications: ApplicationsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_access_tokens: OAuthAccessTokensTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
  oauth_consents: OAuthConsentsTable;
  application_commands: ApplicationCommandsTable;
  server_installs: ServerInstallsTable;
  user_installs: UserInstallsTable;
  dm_channels: DmChannelsTable;
  webhooks: WebhooksTable;
  webhook_github_deliveries: WebhookGithubDeliveriesTable;
  oidc_signing_keys: OidcSigningKeysTable;
  oidc_grants: OidcGrantsTable;
  oidc_clients: OidcClientsTable;
  one_time_reveals: OneTimeRevealsTable;
  audit_events: AuditEventsTable;
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_pending_sign_ins: MfaPendingSignInsTable;
  mfa_session_methods: MfaSessionMethodsTable;
  mail_outbox: MailOutboxTable;
  app_endpoints: AppEndpointsTable;
  app_event_outbox: AppEventOutboxTable;
  app_deliveries: AppDeliveriesTable;
  attachments: AttachmentsTable;
  file_chunks: FileChunksTable;
  resource_servers: ResourceServersTable;
  registered_clients: RegisteredClientsTable;
  registration_tokens: RegistrationTokensTable;
  client_metadata_documents: ClientMetadataDocumentsTable;
  oauth_device_codes: OAuthDeviceCodesTable;
  interactions: InteractionsTable;
  message_interactions: MessageInteractionsTable;
  ephemeral_messages: EphemeralMessagesTable;
}

import type { Migration } from 'kysely';
import * as foundation from './2026-11-21-01-foundation.js';
import * as applications from './2026-11-21-02-applications.js';
import * as oauth from './2026-11-21-03-oauth.js';
import * as bots from './2026-11-21-05-bots.js';
import * as webhooks from './2026-11-21-06-webhooks.js';
import * as messagesWriteLean from './2026-11-22-07-messages-write-lean.js';
import * as oauthCodesIndexes from './2026-11-25-08-oauth-codes-sec-throttles.js';
import * as membershipConsent from './2026-11-25-10-membership-consent-sec-membership.js';
import * as integrations from './2026-11-25-08-integrations.js';
import * as oidc from './2026-11-25-08-oidc.js';
import * as scalePartitions from './2026-11-25-20-scale-partitions.js';
import * as oneTimeReveals from './2026-11-25-30-chat-manage-one-time-reveals.js';
import * as chatReadChannelReads from './2026-11-25-30-chat-read-channel-reads.js';
import * as inviteCodes from './2026-11-25-40-invite-codes.js';
import * as webhookSecretsSealed from './2026-11-27-10-webhook-secrets-sealed.js';
import * as invitationExpiry from './2026-11-27-20-invitation-expiry.js';
import * as serverSecretCheck from './2026-11-27-30-server-secret-check.js';
import * as oidcKeepEs256 from './2026-11-27-40-oidc-keep-es256.js';
import * as auditEvents from './2026-11-28-10-audit-events.js';
import * as mailOutbox from './2026-11-28-21-mail-outbox.js';
import * as accountTokens from './2026-11-28-22-account-tokens.js';
import * as secondFactors from './2026-11-28-23-second-factors.js';
import * as passkeys from './2026-11-28-24-passkeys.js';
import * as sessionsAddressServerMfaLevel from './2026-11-28-25-sessions-address-server-mfa-level.js';
import * as usersMfaEnabled from './2026-11-29-10-users-mfa-enabled.js';
import * as peopleAdmin from './2026-11-29-20-people-admin.js';
import * as appsDisabled from './2026-11-29-30-apps-disabled.js';
import * as appEvents from './2026-11-29-40-app-events.js';
import * as resourceServers from './2026-11-29-50-resource-servers.js';
import * as attachments from './2026-11-29-60-attachments.js';
import * as clientRegistration from './2026-11-29-80-client-registration.js';
import * as clientMetadataDocuments from './2026-11-30-40-client-metadata-documents.js';
import * as deviceCodes from './2026-11-29-70-device-codes.js';
import * as delegatedScopes from './2026-12-01-10-delegated-scopes.js';
import * as interactionTokens from './2026-11-30-10-interaction-tokens.js';
import * as ephemeralMessages from './2026-12-02-10-ephemeral-messages.js';
import * as commandContexts from './2026-12-02-20-command-contexts.js';
import * as guildCommands from './2026-12-02-30-guild-commands.js';

/**
 * Every migration, in order. Listed explicitly (no folder scan) so the build output and the
 * source tree always agree; names sort by date, which is the order Kysely applies them in.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-21-01-foundation': foundation,
  '2026-11-21-02-applications': applications,
  '2026-11-21-03-oauth': oauth,
  '2026-11-21-05-bots': bots,
  '2026-11-21-06-webhooks': webhooks,
  '2026-11-22-07-messages-write-lean': messagesWriteLean,
  '2026-11-25-08-integrations': integrations,
  '2026-11-25-08-oauth-codes-sec-throttles': oauthCodesIndexes,
  '2026-11-25-08-oidc': oidc,
  '2026-11-25-10-membership-consent-sec-membership': membershipConsent,
  '2026-11-25-20-scale-partitions': scalePartitions,
  '2026-11-25-30-chat-manage-one-time-reveals': oneTimeReveals,
  '2026-11-25-30-chat-read-channel-reads': chatReadChannelReads,
  '2026-11-25-40-invite-codes': inviteCodes,
  '2026-11-27-10-webhook-secrets-sealed': webhookSecretsSealed,
  '2026-11-27-20-invitation-expiry': invitationExpiry,
  '2026-11-27-30-server-secret-check': serverSecretCheck,
  '2026-11-27-40-oidc-keep-es256': oidcKeepEs256,
  '2026-11-28-10-audit-events': auditEvents,
  '2026-11-28-21-mail-outbox': mailOutbox,
  '2026-11-28-22-account-tokens': accountTokens,
  '2026-11-28-23-second-factors': secondFactors,
  '2026-11-28-24-passkeys': passkeys,
  '2026-11-28-25-sessions-address-server-mfa-level': sessionsAddressServerMfaLevel,
  '2026-11-29-10-users-mfa-enabled': usersMfaEnabled,
  '2026-11-29-20-people-admin': peopleAdmin,
  '2026-11-29-30-apps-disabled': appsDisabled,
  '2026-11-29-40-app-events': appEvents,
  '2026-11-29-50-resource-servers': resourceServers,
  '2026-11-29-60-attachments': attachments,
  '2026-11-29-70-device-codes': deviceCodes,
  '2026-11-29-80-client-registration': clientRegistration,
  '2026-11-30-10-interaction-tokens': interactionTokens,
  '2026-11-30-40-client-metadata-documents': clientMetadataDocuments,
  '2026-12-01-10-delegated-scopes': delegatedScopes,
  '2026-12-02-10-ephemeral-messages': ephemeralMessages,
  '2026-12-02-20-command-contexts': commandContexts,
  '2026-12-02-30-guild-commands': guildCommands,
};

/**
 * What: which tables' deletes reach which others through ON DELETE CASCADE, so a cache that reads
 * a table also watches the tables whose deletes remove its rows without naming it (a deleted
 * grant deletes its access tokens; a deleted person, their applications).
 * Invariant: the map is the schema's: test/storage/cascades.test.ts compares it with the foreign
 * keys of the migrated database and fails when a migration adds, drops or changes one.
 * Tested: test/storage/cascades.test.ts.
 */

/** Table → the tables whose deleted rows delete its rows (ON DELETE CASCADE), as migrated. */
export const CASCADES_FROM: Readonly<Record<string, readonly string[]>> = {
  applications: ['users'],
  app_deliveries: ['applications'],
  app_endpoints: ['applications'],
  app_event_outbox: ['applications'],
  application_commands: ['applications', 'servers'],
  channel_reads: ['channels', 'users'],
  channels: ['servers'],
  client_metadata_documents: ['applications'],
  dm_channels: ['channels', 'users'],
  ephemeral_messages: ['interactions'],
  interactions: ['applications'],
  invites: ['servers'],
  member_invitations: ['servers', 'users'],
  member_roles: ['members', 'roles'],
  members: ['servers', 'users'],
  messages: ['channels'],
  mfa_pending_sign_ins: ['users'],
  mfa_recovery_codes: ['users'],
  mfa_session_methods: ['users'],
  mfa_totp: ['users'],
  oauth_access_tokens: ['oauth_grants'],
  oauth_codes: ['oauth_grants'],
  oauth_consents: ['applications', 'users'],
  oauth_grants: ['applications', 'resource_servers', 'users'],
  oauth_refresh_tokens: ['oauth_grants'],
  oidc_clients: ['applications'],
  oidc_grants: ['oauth_grants'],
  passkey_challenges: ['users'],
  passkeys: ['users'],
  registered_clients: ['applications'],
  resource_servers: ['applications'],
  roles: ['servers'],
  server_installs: ['applications', 'servers'],
  sessions: ['users'],
  user_installs: ['applications', 'users'],
  webhook_github_deliveries: ['webhooks'],
  webhooks: ['channels', 'servers'],
};

/** `tables` and every table whose deletes reach one of them, transitively, sorted. */
export function withCascades(tables: Iterable<string>): string[] {
  const all = new Set<string>();
  const visit = (table: string) => {
    if (all.has(table)) return;
    all.add(table);
    for (const parent of CASCADES_FROM[table] ?? []) visit(parent);
  };
  for (const table of tables) visit(table);
  return [...all].sort();
}

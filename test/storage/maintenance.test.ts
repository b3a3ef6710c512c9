import pino from 'pino';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY, ManualClock, MINUTE } from '../../src/core/clock.js';
import { MAINTENANCE_LEASE_MS, runMaintenance, type MaintenanceDeps } from '../../src/storage/maintenance.js';
import { listMessagePartitions, PARTITION_WEEK_MS, partitionName, snowflakeAt, weekStart } from '../../src/storage/message-partitions.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { MAINTENANCE_LEASE_ID, takeLease } from '../../src/storage/worker-lease.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

/**
 * Issue #26 §3: expired codes, tokens, grants and sessions are purged by a job that runs on one
 * instance at a time (a lease in worker_leases), with an injected clock.
 */

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);

async function seed(db: Kysely<unknown>, now: number): Promise<void> {
  await sql`insert into users (id, username, username_key, name, created_at) values (1, 'a', 'a', 'A', 0)`.execute(db);
  await sql`insert into applications (id, owner_id, name, confidential, redirect_uris, created_at, updated_at) values (10, 1, 'App', 0, '[]', 0, 0)`.execute(db);
  // Grant 100: live. 101: revoked, nothing left. 102: revoked, but a code of it has not expired yet.
  await sql`insert into oauth_grants (id, application_id, user_id, scopes, created_at, revoked_at) values (100, 10, 1, 'identify', 0, null), (101, 10, 1, 'identify', 0, ${now - 1000}), (102, 10, 1, 'identify', 0, ${now - 1000})`.execute(db);
  const code = (hash: string, grant: number, expires: number) =>
    sql`insert into oauth_codes (code_hash, grant_id, application_id, user_id, redirect_uri, redirect_uri_sent, scopes, code_challenge, created_at, expires_at, used_at) values (${hash}, ${grant}, 10, 1, 'https://a.example/cb', 1, 'identify', null, 0, ${expires}, null)`.execute(db);
  await code('code-expired', 100, now - 1);
  await code('code-live', 100, now + 10 * MINUTE);
  await code('code-of-revoked', 102, now + 5 * MINUTE);
  const access = (hash: string, expires: number) => sql`insert into oauth_access_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at) values (${hash}, 100, 10, 1, 'identify', 0, ${expires})`.execute(db);
  await access('access-expired', now - 1);
  await access('access-live', now + 60 * MINUTE);
  const refresh = (hash: string, expires: number) =>
    sql`insert into oauth_refresh_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at, used_at, successor_hash, rotation_key) values (${hash}, 100, 10, 1, 'identify', 0, ${expires}, null, null, null)`.execute(db);
  await refresh('refresh-expired', now - 1);
  await refresh('refresh-live', now + 1);
  const session = (hash: string, expires: number) => sql`insert into sessions (id_hash, user_id, created_at, last_seen_at, expires_at, user_agent) values (${hash}, 1, 0, 0, ${expires}, null)`.execute(db);
  await session('session-expired', now - 1);
  await session('session-live', now + MINUTE);
  // Issue #38 §2–§3: verification and reset links.
  const link = (hash: string, purpose: string, expires: number) =>
    sql`insert into account_tokens (token_hash, purpose, user_id, email, created_at, expires_at, used_at) values (${hash}, ${purpose}, 1, null, 0, ${expires}, null)`.execute(db);
  await link('reset-expired', 'reset-password', now - 1);
  await link('verify-live', 'verify-email', now + MINUTE);
  // RFC 8628: device codes stay a day past expiry, so a late poll hears expired_token.
  const device = (hash: string, expires: number) =>
    sql`insert into oauth_device_codes (device_code_hash, user_code_hash, application_id, scopes, created_at, expires_at, interval_seconds, status) values (${hash}, ${`user-${hash}`}, 10, 'identify', 0, ${expires}, 5, 'pending')`.execute(db);
  await device('device-long-expired', now - DAY - 1);
  await device('device-just-expired', now - 1);
  // Issue #40 §2: an interaction token is valid 15 minutes, then its row goes.
  const interaction = (id: number, expires: number) =>
    sql`insert into interactions (id, token_hash, application_id, bot_user_id, channel_id, user_id, command_name, ephemeral, acknowledged, original_message_id, created_at, expires_at) values (${id}, ${`interaction-${id}`}, 10, 1, 1, 1, 'roll', 0, 1, null, 0, ${expires})`.execute(db);
  await interaction(501, now - 1);
  await interaction(502, now + MINUTE);
  // An ephemeral message (flag 64) goes with its interaction.
  const ephemeral = (id: number, interactionId: number) =>
    sql`insert into ephemeral_messages (id, interaction_id, channel_id, recipient_id, author_id, content, embeds, loading, created_at, edited_at) values (${id}, ${interactionId}, 1, 1, 1, 'psst', '[]', 0, 0, null)`.execute(db);
  await ephemeral(601, 501);
  await ephemeral(602, 502);
}

async function keys(db: Kysely<unknown>, table: string, column: string): Promise<string[]> {
  return (await sql<{ k: string | number | bigint }>`select ${sql.ref(column)} as k from ${sql.table(table)} order by 1`.execute(db)).rows.map((r) => String(r.k));
}

describe('the maintenance job (purge of expired credentials, one instance at a time)', () => {
  let t: TestDatabase;
  let db: Kysely<unknown>;
  let clock: ManualClock;
  let deps: MaintenanceDeps;
  beforeEach(async () => {
    t = await createTestDatabase();
    await migrateToLatest(t.handle.db);
    db = t.handle.db as unknown as Kysely<unknown>;
    clock = new ManualClock(NOW);
    deps = { db: t.handle.db, dialect: t.handle.dialect, clock, logger: pino({ level: 'silent' }), messageRetentionDays: 0 };
  });
  afterEach(async () => t.drop());

  it('two instances at the same moment: one purges, the other does nothing; expired rows go, live ones stay', async () => {
    await seed(db, NOW);
    const [a, b] = await Promise.all([runMaintenance(deps, 'instance-a'), runMaintenance(deps, 'instance-b')]);
    const reports = [a, b].filter((r) => r !== undefined);
    expect(reports).toHaveLength(1);
    expect(reports[0]?.purged).toEqual({ oauth_codes: 1, oauth_access_tokens: 1, oauth_refresh_tokens: 1, sessions: 1, oauth_grants: 1, webhook_github_deliveries: 0, audit_events: 0, mail_outbox: 0, account_tokens: 1, mfa_pending_sign_ins: 0, passkey_challenges: 0, mfa_session_methods: 0, attachments: 0, oauth_device_codes: 1, interactions: 1, message_interactions: 0, client_metadata_applications: 0 });
    expect(await keys(db, 'account_tokens', 'token_hash')).toEqual(['verify-live']);
    expect(await keys(db, 'interactions', 'id')).toEqual(['502']);
    expect(await keys(db, 'ephemeral_messages', 'id')).toEqual(['602']);
    expect(await keys(db, 'oauth_device_codes', 'device_code_hash')).toEqual(['device-just-expired']);

    expect(await keys(db, 'oauth_codes', 'code_hash')).toEqual(['code-live', 'code-of-revoked']);
    expect(await keys(db, 'oauth_access_tokens', 'token_hash')).toEqual(['access-live']);
    expect(await keys(db, 'oauth_refresh_tokens', 'token_hash')).toEqual(['refresh-live']);
    expect(await keys(db, 'sessions', 'id_hash')).toEqual(['session-live']);
    // The revoked grant with nothing left is gone; the one whose code is still live stays revoked.
    expect(await keys(db, 'oauth_grants', 'id')).toEqual(['100', '102']);
  });

  it("purges what a deleted message showed of its command ('used /name'), keeping a live message's and a just-written one's (issue #40 §2)", async () => {
    await seed(db, NOW);
    const old = (snowflakeAt(NOW - 2 * DAY) + 1n).toString();
    const deletedOld = (snowflakeAt(NOW - 2 * DAY) + 2n).toString();
    // Written a moment ago, its message not yet committed: the sweep must not take it.
    const justWritten = (snowflakeAt(NOW - MINUTE) + 1n).toString();
    await sql`insert into servers (id, name, owner_id, created_at) values (2, 'S', 1, 0)`.execute(db);
    await sql`insert into channels (id, server_id, name, created_at) values (3, 2, 'c', 0)`.execute(db);
    await sql`insert into messages (id, channel_id, author_id, content, embeds, created_at) values (${old}, 3, 1, 'the answer', '[]', 0)`.execute(db);
    const row = (messageId: string) =>
      sql`insert into message_interactions (message_id, interaction_id, interaction_type, user_id, command_name, loading) values (${messageId}, 900, 2, 1, 'roll', 0)`.execute(db);
    await row(old);
    await row(deletedOld);
    await row(justWritten);
    const report = await runMaintenance(deps, 'instance-a');
    expect(report?.purged.message_interactions).toBe(1);
    expect(await keys(db, 'message_interactions', 'message_id')).toEqual([old, justWritten].sort());
  });

  it('deletes a client ID metadata document’s application idle a day with nothing of a person’s, keeping one with a grant, a consent or a token, and one fetched within the day (issue #41 §3)', async () => {
    await seed(db, NOW);
    await sql`insert into users (id, username, username_key, name, created_at) values (2, 'registered', 'registered', 'Registered apps', 0)`.execute(db);
    const documentApp = async (id: number, fetchedAt: number) => {
      await sql`insert into applications (id, owner_id, name, confidential, redirect_uris, created_at, updated_at) values (${id}, 2, 'Agent', 0, '[]', 0, 0)`.execute(db);
      await sql`insert into client_metadata_documents (url, application_id, fetched_at) values (${`https://agent.example/${id}.json`}, ${id}, ${fetchedAt})`.execute(db);
    };
    const idle = NOW - DAY - MINUTE;
    await documentApp(20, idle); // never used: goes
    await documentApp(21, NOW - DAY + MINUTE); // fetched within the day: stays
    await documentApp(22, idle); // a person's grant: stays
    await sql`insert into oauth_grants (id, application_id, user_id, scopes, created_at, revoked_at) values (120, 22, 1, 'identify', 0, null)`.execute(db);
    await documentApp(23, idle); // a remembered consent: stays
    await sql`insert into oauth_consents (user_id, application_id, scopes, updated_at) values (1, 23, 'identify', 0)`.execute(db);
    await documentApp(24, idle); // an access token (of grant 100): stays
    await sql`insert into oauth_access_tokens (token_hash, grant_id, application_id, user_id, scopes, created_at, expires_at) values ('access-of-24', 100, 24, 1, 'identify', 0, ${NOW + DAY})`.execute(db);
    const report = await runMaintenance(deps, 'instance-a');
    expect(report?.purged.client_metadata_applications).toBe(1);
    expect(await keys(db, 'client_metadata_documents', 'application_id')).toEqual(['21', '22', '23', '24']);
    // Applications that are not a document's (app 10) are never taken by this rule.
    expect(await keys(db, 'applications', 'id')).toEqual(['10', '21', '22', '23', '24']);
  });

  it('purges expired pending sign-ins and passkey challenges, and the sign-in methods of ended sessions, keeping live ones (issue #38 §4)', async () => {
    await seed(db, NOW);
    const pending = (hash: string, expires: number) => sql`insert into mfa_pending_sign_ins (id_hash, user_id, user_agent, created_at, expires_at) values (${hash}, 1, null, 0, ${expires})`.execute(db);
    await pending('pending-expired', NOW - 1);
    await pending('pending-live', NOW + MINUTE);
    const challenge = (hash: string, expires: number) => sql`insert into passkey_challenges (challenge_hash, purpose, user_id, expires_at) values (${hash}, 'sign-in', null, ${expires})`.execute(db);
    await challenge('challenge-expired', NOW - 1);
    await challenge('challenge-live', NOW + MINUTE);
    const methods = (hash: string) => sql`insert into mfa_session_methods (session_hash, user_id, amr, created_at) values (${hash}, 1, 'pwd otp mfa', 0)`.execute(db);
    // session-expired goes in this run; session-ended was signed out earlier; session-live stays.
    await methods('session-expired');
    await methods('session-ended');
    await methods('session-live');
    const report = await runMaintenance(deps, 'instance-a');
    expect(report?.purged).toMatchObject({ mfa_pending_sign_ins: 1, passkey_challenges: 1, mfa_session_methods: 2, sessions: 1 });
    expect(await keys(db, 'mfa_pending_sign_ins', 'id_hash')).toEqual(['pending-live']);
    expect(await keys(db, 'passkey_challenges', 'challenge_hash')).toEqual(['challenge-live']);
    expect(await keys(db, 'mfa_session_methods', 'session_hash')).toEqual(['session-live']);
  });

  it('the holder runs again while its lease lasts; another instance takes over only once it has expired', async () => {
    expect(await runMaintenance(deps, 'instance-a')).toBeDefined();
    clock.advance(MAINTENANCE_LEASE_MS - 1);
    expect(await runMaintenance(deps, 'instance-b')).toBeUndefined();
    expect(await runMaintenance(deps, 'instance-a')).toBeDefined();
    clock.advance(MAINTENANCE_LEASE_MS + 1);
    expect(await runMaintenance(deps, 'instance-b')).toBeDefined();
    expect(await takeLease(t.handle.db, MAINTENANCE_LEASE_ID, 'instance-a', clock.now(), MAINTENANCE_LEASE_MS)).toBe(false);
  });

  it('purges in batches until nothing expired is left, later expiries included once their time comes', async () => {
    await seed(db, NOW);
    for (let i = 0; i < 25; i += 1) await sql`insert into sessions (id_hash, user_id, created_at, last_seen_at, expires_at, user_agent) values (${`bulk-${i}`}, 1, 0, 0, ${NOW - 10}, null)`.execute(db);
    const report = await runMaintenance(deps, 'instance-a', 10);
    expect(report?.purged.sessions).toBe(26);
    expect(await keys(db, 'sessions', 'id_hash')).toEqual(['session-live']);
    clock.advance(2 * MINUTE);
    const later = await runMaintenance(deps, 'instance-a', 10);
    expect(later?.purged.sessions).toBe(1);
    expect(later?.purged.oauth_refresh_tokens).toBe(1);
    expect(await keys(db, 'sessions', 'id_hash')).toEqual([]);
  });

  it('audit entries older than GATEHOUSE_AUDIT_RETENTION_DAYS are purged in batches, younger ones kept (issue #37 §5)', async () => {
    const entry = (id: number, at: number) => sql`insert into audit_events (id, action, actor_kind, created_at) values (${id}, 'signin.failed', 'anonymous', ${at})`.execute(db);
    // 25 entries just past 7 days old, one exactly 7 days old (kept: only older ones go), one from an hour ago.
    for (let i = 0; i < 25; i += 1) await entry(1000 + i, NOW - 7 * DAY - 1 - i);
    await entry(2000, NOW - 7 * DAY);
    await entry(3000, NOW - 60 * MINUTE);
    const report = await runMaintenance({ ...deps, auditRetentionDays: 7 }, 'instance-a', 10);
    expect(report?.purged.audit_events).toBe(25);
    expect(await keys(db, 'audit_events', 'id')).toEqual(['2000', '3000']);
    clock.advance(1);
    const later = await runMaintenance({ ...deps, auditRetentionDays: 7 }, 'instance-a', 10);
    expect(later?.purged.audit_events).toBe(1);
    expect(await keys(db, 'audit_events', 'id')).toEqual(['3000']);
  });

  it('without a retention given, audit entries are kept 90 days (the default)', async () => {
    await sql`insert into audit_events (id, action, actor_kind, created_at) values (1, 'signin.failed', 'anonymous', ${NOW - 90 * DAY - 1}), (2, 'signin.failed', 'anonymous', ${NOW - 89 * DAY})`.execute(db);
    const report = await runMaintenance(deps, 'instance-a');
    expect(report?.purged.audit_events).toBe(1);
    expect(await keys(db, 'audit_events', 'id')).toEqual(['2']);
  });

  it.skipIf(testDialect !== 'postgres')('on PostgreSQL it keeps the coming weeks partitioned and drops partitions past the retention', async () => {
    const later = NOW + 10 * PARTITION_WEEK_MS;
    clock.set(later);
    const report = await runMaintenance({ ...deps, messageRetentionDays: 30 }, 'instance-a');
    expect(report?.partitionsCreated).toContain(partitionName(weekStart(later) + 4 * PARTITION_WEEK_MS));
    // The partition before partitioning ended with the migration's week (real time, before NOW + 10 weeks - 30 days).
    expect(report?.partitionsDropped).toContain('messages_before_partitioning');
    const names = (await listMessagePartitions(db)).map((p) => p.name);
    expect(names).toContain(partitionName(weekStart(later)));
    expect(names).toContain('messages_default');
  });
});

if (testDialect !== 'postgres') console.warn('test/storage/maintenance.test.ts: the partition part is skipped: it needs PostgreSQL (TEST_DATABASE_URL)');

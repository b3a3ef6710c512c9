import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { DAY, HOUR, MINUTE, type Clock } from '../core/clock.js';
import type { BlobStore } from './blob-store.js';
import type { Dialect } from './connect.js';
import type { Database } from './database.js';
import { dropExpiredMessagePartitions, ensureMessagePartitions, snowflakeAt } from './message-partitions.js';
import { MAINTENANCE_LEASE_ID, takeLease } from './worker-lease.js';

/**
 * The background maintenance of issue #26 §3, on one instance at a time (a lease in
 * worker_leases, storage/worker-lease.ts):
 * - expired authorization codes, access tokens, refresh tokens and sessions are deleted, and so are
 *   revoked grants that nothing refers to any more (their tokens went at revocation, SPEC §3; a
 *   grant with a code or token left is kept until those expire, so a late code exchange still
 *   finds its grant revoked rather than missing);
 * - signed GitHub deliveries past their replay window are forgotten (issue #36 §2);
 * - audit log entries older than GATEHOUSE_AUDIT_RETENTION_DAYS are purged (issue #37 §5), oldest
 *   first by the index on created_at;
 * - expired e-mail verification and password reset links are deleted (issue #38 §2–§3), used or
 *   not (a used link is kept until it expires, so it is refused as "already used", not unknown);
 * - second-factor leftovers (issue #38 §4): expired pending sign-ins and passkey challenges, and the
 *   sign-in methods of sessions that have ended;
 * - sent mail is pruned from the outbox after SENT_MAIL_RETENTION_DAYS, and mail given up on after
 *   FAILED_MAIL_RETENTION_DAYS (issue #38 §1; `gatehouse mail list` shows them until then);
 * - on PostgreSQL, the coming weeks' message partitions are created, and with
 *   GATEHOUSE_MESSAGE_RETENTION_DAYS partitions older than the retention are dropped
 *   (storage/message-partitions.ts);
 * - files whose message is gone (deleted, its channel or webhook's messages deleted, or dropped by
 *   the retention) or was never stored are removed with their bytes (issue #42 §1, sweepOrphanFiles).
 * Deletes go in batches (each its own short statement) so that no long transaction holds locks or,
 * on SQLite, the event loop.
 */

export const MAINTENANCE_INTERVAL_MS = HOUR;
/** Longer than a run takes; renewed between batches, so a paused holder loses it and a crashed one frees it. */
export const MAINTENANCE_LEASE_MS = 15 * MINUTE;
export const PURGE_BATCH = 1000;
/** RFC 8628 device codes stay a day past expiry (a late poll hears expired_token, not invalid_grant). */
const DEVICE_CODE_RETENTION_MS = DAY;
/** Issue #41 §3: a client ID metadata document's application idle this long, with nothing of a person's, is deleted. */
export const UNUSED_DOCUMENT_CLIENT_MS = DAY;

export interface MaintenanceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  logger: Logger;
  /** GATEHOUSE_MESSAGE_RETENTION_DAYS; 0 keeps every message. */
  messageRetentionDays: number;
  /** GATEHOUSE_AUDIT_RETENTION_DAYS (at least 1); absent: the default, 90. */
  auditRetentionDays?: number;
  /** Issue #42 §1: the blob store, whose files without a message are swept (sweepOrphanFiles). */
  files?: BlobStore;
}

/** GATEHOUSE_AUDIT_RETENTION_DAYS's default (config/config.ts). */
export const AUDIT_RETENTION_DAYS_DEFAULT = 90;

/** Issue #38 §1: sent mail stays listed a week, failed mail a month (for the operator to look into), then goes. */
export const SENT_MAIL_RETENTION_DAYS = 7;
export const FAILED_MAIL_RETENTION_DAYS = 30;

export interface MaintenanceReport {
  purged: Record<'oauth_codes' | 'oauth_access_tokens' | 'oauth_refresh_tokens' | 'sessions' | 'oauth_grants' | 'webhook_github_deliveries' | 'audit_events' | 'mail_outbox' | 'account_tokens' | 'mfa_pending_sign_ins' | 'passkey_challenges' | 'mfa_session_methods' | 'attachments' | 'oauth_device_codes' | 'interactions' | 'message_interactions' | 'client_metadata_applications', number>;
  partitionsCreated: string[];
  partitionsDropped: string[];
}

type Purge = (db: Kysely<Database>, now: number, batch: number) => Promise<bigint>;

const deleted = (r: { numDeletedRows: bigint }): bigint => r.numDeletedRows;

/** One batch per call of each purge: at most `batch` rows, chosen by an indexed condition (PostgreSQL) or a scan (SQLite). */
const PURGES: [keyof MaintenanceReport['purged'], Purge][] = [
  ['oauth_codes', async (db, now, batch) => deleted(await db.deleteFrom('oauth_codes').where('code_hash', 'in', db.selectFrom('oauth_codes').select('code_hash').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  // RFC 8628 (issue #41 §2): device codes are kept a day past expiry, so a late poll still hears expired_token.
  ['oauth_device_codes', async (db, now, batch) => deleted(await db.deleteFrom('oauth_device_codes').where('device_code_hash', 'in', db.selectFrom('oauth_device_codes').select('device_code_hash').where('expires_at', '<', now - DEVICE_CODE_RETENTION_MS).limit(batch)).executeTakeFirst())],
  // Issue #40 §2: an interaction's token is useless after its 15 minutes; the answers keep what they show (message_interactions).
  ['interactions', async (db, now, batch) => deleted(await db.deleteFrom('interactions').where('id', 'in', db.selectFrom('interactions').select('id').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  // Issue #40 §2: what a message showed of its command, once the message is gone (deleted by anyone,
  // with its channel, or by the retention). The row is written just before its message, so only
  // messages older than ORPHAN_FILE_GRACE_MS (by their snowflake's time) are looked at.
  [
    'message_interactions',
    async (db, now, batch) =>
      deleted(
        await db
          .deleteFrom('message_interactions')
          .where(
            'message_id',
            'in',
            db
              .selectFrom('message_interactions as mi')
              .select('mi.message_id')
              .where('mi.message_id', '<', snowflakeAt(now - ORPHAN_FILE_GRACE_MS).toString())
              .where(({ not, exists, selectFrom }) => not(exists(selectFrom('messages as m').select('m.id').whereRef('m.id', '=', 'mi.message_id'))))
              .limit(batch),
          )
          .executeTakeFirst(),
      ),
  ],
  ['oauth_access_tokens', async (db, now, batch) => deleted(await db.deleteFrom('oauth_access_tokens').where('token_hash', 'in', db.selectFrom('oauth_access_tokens').select('token_hash').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  ['oauth_refresh_tokens', async (db, now, batch) => deleted(await db.deleteFrom('oauth_refresh_tokens').where('token_hash', 'in', db.selectFrom('oauth_refresh_tokens').select('token_hash').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  // Issue #37 §5: `now` here is the retention's cutoff (runMaintenance), not the clock.
  ['audit_events', async (db, cutoff, batch) => deleted(await db.deleteFrom('audit_events').where('id', 'in', db.selectFrom('audit_events').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(batch)).executeTakeFirst())],
  [
    'mail_outbox',
    async (db, now, batch) =>
      deleted(
        await db
          .deleteFrom('mail_outbox')
          .where(
            'id',
            'in',
            db
              .selectFrom('mail_outbox')
              .select('id')
              .where((eb) =>
                eb.or([
                  eb.and([eb('status', '=', 'sent'), eb('sent_at', '<', now - SENT_MAIL_RETENTION_DAYS * DAY)]),
                  eb.and([eb('status', '=', 'failed'), eb('created_at', '<', now - FAILED_MAIL_RETENTION_DAYS * DAY)]),
                ]),
              )
              .limit(batch),
          )
          .executeTakeFirst(),
      ),
  ],
  // Issue #38 §2–§3: verification and reset links, used or not, once expired (24 h and 30 min at most).
  ['account_tokens', async (db, now, batch) => deleted(await db.deleteFrom('account_tokens').where('token_hash', 'in', db.selectFrom('account_tokens').select('token_hash').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  ['sessions', async (db, now, batch) => deleted(await db.deleteFrom('sessions').where('id_hash', 'in', db.selectFrom('sessions').select('id_hash').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  // Issue #38 §4: a password accepted, the second step never taken (five minutes at most).
  ['mfa_pending_sign_ins', async (db, now, batch) => deleted(await db.deleteFrom('mfa_pending_sign_ins').where('id_hash', 'in', db.selectFrom('mfa_pending_sign_ins').select('id_hash').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  // Issue #38 §4: a passkey ceremony's challenge, never answered (five minutes at most).
  ['passkey_challenges', async (db, now, batch) => deleted(await db.deleteFrom('passkey_challenges').where('challenge_hash', 'in', db.selectFrom('passkey_challenges').select('challenge_hash').where('expires_at', '<', now).limit(batch)).executeTakeFirst())],
  // After the sessions: the RFC 8176 methods of a session that has ended (expired, signed out or
  // ended from Settings → Sessions). A session and its methods are written in one transaction,
  // so a methods row without its session is never one still being made.
  [
    'mfa_session_methods',
    async (db, _now, batch) =>
      deleted(
        await db
          .deleteFrom('mfa_session_methods')
          .where(
            'session_hash',
            'in',
            db
              .selectFrom('mfa_session_methods as m')
              .select('m.session_hash')
              .where(({ not, exists, selectFrom }) => not(exists(selectFrom('sessions').select('sessions.id_hash').whereRef('sessions.id_hash', '=', 'm.session_hash'))))
              .limit(batch),
          )
          .executeTakeFirst(),
      ),
  ],
  [
    'webhook_github_deliveries',
    async (db, now, batch) =>
      deleted(
        await db
          .deleteFrom('webhook_github_deliveries')
          .where('expires_at', '<', now)
          // A batch by time (the index on expires_at); ties at its edge go in the same statement.
          .where('expires_at', 'in', db.selectFrom('webhook_github_deliveries').select('expires_at').where('expires_at', '<', now).limit(batch))
          .executeTakeFirst(),
      ),
  ],
  [
    'oauth_grants',
    async (db, now, batch) =>
      deleted(
        await db
          .deleteFrom('oauth_grants')
          .where(
            'id',
            'in',
            db
              .selectFrom('oauth_grants as g')
              .select('g.id')
              .where('g.revoked_at', 'is not', null)
              .where('g.revoked_at', '<', now)
              .where(({ not, exists, selectFrom }) =>
                not(
                  exists(
                    selectFrom('oauth_codes')
                      .select('oauth_codes.grant_id')
                      .whereRef('oauth_codes.grant_id', '=', 'g.id')
                      .unionAll(selectFrom('oauth_access_tokens').select('oauth_access_tokens.grant_id').whereRef('oauth_access_tokens.grant_id', '=', 'g.id'))
                      .unionAll(selectFrom('oauth_refresh_tokens').select('oauth_refresh_tokens.grant_id').whereRef('oauth_refresh_tokens.grant_id', '=', 'g.id')),
                  ),
                ),
              )
              .limit(batch),
          )
          .executeTakeFirst(),
      ),
  ],
  [
    // Issue #41 §3 (docs/oauth.md §Client ID metadata documents): anyone may name a URL as a client_id,
    // and each new one is an application; one that no person ever got anything for (no grant, consent,
    // code, device code or token) and whose document was not fetched for a day is deleted with its
    // document row (ON DELETE CASCADE). Naming the URL again creates a new one.
    'client_metadata_applications',
    async (db, now, batch) =>
      deleted(
        await db
          .deleteFrom('applications')
          .where(
            'id',
            'in',
            db
              .selectFrom('client_metadata_documents as d')
              .select('d.application_id')
              .where('d.fetched_at', '<', now - UNUSED_DOCUMENT_CLIENT_MS)
              .where(({ not, exists, selectFrom }) =>
                not(
                  exists(
                    selectFrom('oauth_grants')
                      .select('oauth_grants.application_id')
                      .whereRef('oauth_grants.application_id', '=', 'd.application_id')
                      .unionAll(selectFrom('oauth_consents').select('oauth_consents.application_id').whereRef('oauth_consents.application_id', '=', 'd.application_id'))
                      .unionAll(selectFrom('oauth_codes').select('oauth_codes.application_id').whereRef('oauth_codes.application_id', '=', 'd.application_id'))
                      .unionAll(selectFrom('oauth_device_codes').select('oauth_device_codes.application_id').whereRef('oauth_device_codes.application_id', '=', 'd.application_id'))
                      .unionAll(selectFrom('oauth_access_tokens').select('oauth_access_tokens.application_id').whereRef('oauth_access_tokens.application_id', '=', 'd.application_id'))
                      .unionAll(selectFrom('oauth_refresh_tokens').select('oauth_refresh_tokens.application_id').whereRef('oauth_refresh_tokens.application_id', '=', 'd.application_id')),
                  ),
                ),
              )
              .limit(batch),
          )
          .executeTakeFirst(),
      ),
  ],
];

/**
 * Runs the maintenance if this `holder` gets (or already has) the lease; undefined when another
 * instance holds it. Stops early, with what it did so far, when the lease is lost mid-run.
 */
export async function runMaintenance(deps: MaintenanceDeps, holder: string, batch = PURGE_BATCH): Promise<MaintenanceReport | undefined> {
  const { db, clock } = deps;
  const keep = () => takeLease(db, MAINTENANCE_LEASE_ID, holder, clock.now(), MAINTENANCE_LEASE_MS);
  if (!(await keep())) return undefined;
  const report: MaintenanceReport = { purged: { oauth_codes: 0, oauth_access_tokens: 0, oauth_refresh_tokens: 0, sessions: 0, oauth_grants: 0, webhook_github_deliveries: 0, audit_events: 0, mail_outbox: 0, account_tokens: 0, mfa_pending_sign_ins: 0, passkey_challenges: 0, mfa_session_methods: 0, attachments: 0, oauth_device_codes: 0, interactions: 0, message_interactions: 0, client_metadata_applications: 0 }, partitionsCreated: [], partitionsDropped: [] };
  const now = clock.now();
  if (deps.dialect === 'postgres') {
    report.partitionsCreated = await ensureMessagePartitions(db as unknown as Kysely<unknown>, now);
    report.partitionsDropped = await dropExpiredMessagePartitions(db as unknown as Kysely<unknown>, now, deps.messageRetentionDays);
  }
  const auditCutoff = now - (deps.auditRetentionDays ?? AUDIT_RETENTION_DAYS_DEFAULT) * DAY;
  for (const [table, purge] of PURGES) {
    for (;;) {
      const n = Number(await purge(db, table === 'audit_events' ? auditCutoff : now, batch));
      report.purged[table] += n;
      if (n < batch) break;
      if (!(await keep())) return report;
    }
  }
  // After the partitions are dropped, so that the files of dropped messages go in the same run.
  if (deps.files) {
    for (;;) {
      const n = await sweepOrphanFiles({ db, files: deps.files }, now, batch);
      report.purged.attachments += n;
      if (n < batch) break;
      if (!(await keep())) return report;
    }
  }
  return report;
}

/** How long a file's row may exist without its message before the sweep takes it: longer than any request takes. */
export const ORPHAN_FILE_GRACE_MS = HOUR;

/**
 * One batch of files whose message does not exist, written more than ORPHAN_FILE_GRACE_MS ago:
 * their message was deleted (by anyone, with its channel, or dropped by the retention), or never
 * stored (a request that failed or a process that died between its files and its message; issue
 * #42 §1). Bytes go first, then rows: a row left behind is found again, bytes without a row would
 * not be. Returns how many.
 */
export async function sweepOrphanFiles(deps: { db: Kysely<Database>; files: BlobStore }, now: number, batch: number): Promise<number> {
  const rows = await deps.db
    .selectFrom('attachments as a')
    .select(['a.id', 'a.storage_key'])
    .where('a.created_at', '<', now - ORPHAN_FILE_GRACE_MS)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('messages as m').select('m.id').whereRef('m.id', '=', 'a.message_id'))))
    .orderBy('a.created_at')
    .limit(batch)
    .execute();
  if (rows.length === 0) return 0;
  await deps.files.delete(rows.map((r) => r.storage_key));
  await deps.db.deleteFrom('attachments').where('id', 'in', rows.map((r) => String(r.id))).execute();
  return rows.length;
}

export interface MaintenanceTimer {
  stop(): Promise<void>;
}

/**
 * Runs the maintenance every `intervalMs` on this instance (it does the work only while it holds
 * the lease). The first run comes `firstDelayMs` after start-up, plus up to as much again at
 * random, so instances restarted together do not all ask at once.
 */
export function startMaintenance(deps: MaintenanceDeps, holder: string, options: { firstDelayMs?: number; intervalMs?: number; jitter?: () => number } = {}): MaintenanceTimer {
  const intervalMs = options.intervalMs ?? MAINTENANCE_INTERVAL_MS;
  const firstDelayMs = (options.firstDelayMs ?? MINUTE) * (1 + (options.jitter ?? Math.random)());
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = runMaintenance(deps, holder)
      .then(
        (report) => {
          if (!report) return;
          const purged = Object.values(report.purged).reduce((a, b) => a + b, 0);
          if (purged > 0 || report.partitionsCreated.length > 0 || report.partitionsDropped.length > 0) deps.logger.info({ maintenance: report }, 'maintenance: expired rows purged, message partitions kept');
        },
        (error: unknown) => deps.logger.warn({ err: error }, 'maintenance run failed; retried at the next interval'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    tick();
    interval = setInterval(tick, intervalMs);
    interval.unref();
  }, firstDelayMs);
  first.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      if (interval) clearInterval(interval);
      await running;
    },
  };
}

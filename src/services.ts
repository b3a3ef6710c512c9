import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { ConfigError, type Config } from './config/config.js';
import { secretMismatchProblem, serverSecrets } from './config/server-secret.js';
import { systemClock, type Clock } from './core/clock.js';
import { cryptoRandom, type Random } from './core/random.js';
import { secretCheck } from './core/sealed.js';
import { MAX_WORKER_ID, SnowflakeGenerator } from './core/snowflake.js';
import type { Services } from './deps.js';
import { createProcessLog } from './http/log-destination.js';
import { createMetrics, instrumentBucketStore } from './http/metrics.js';
import { createOutboundClient } from './http/outbound.js';
import type { BucketStore } from './rate-limit/bucket.js';
import { MemoryChannelEvents, type ChannelEvents } from './realtime/channel-events.js';
import { feedLiveViews } from './realtime/live-subscriber.js';
import { EventBus } from './events/event-bus.js';
import { createRedisChannelEvents } from './realtime/redis-channel-events.js';
import { RedisOutbox } from './realtime/redis-outbox.js';
import { MemoryBucketStore } from './rate-limit/memory-store.js';
import { RedisBucketStore, ResilientBucketStore } from './rate-limit/redis-store.js';
import { attachCoherence, coherenceOf, createCoherence } from './storage/coherence.js';
import { connectDatabase, type DatabaseHandle } from './storage/connect.js';
import { startMaintenance, type MaintenanceTimer } from './storage/maintenance.js';
import type { BlobStore } from './storage/blob-store.js';
import { DatabaseBlobStore } from './storage/database-blob-store.js';
import { FsBlobStore } from './storage/fs-blob-store.js';
import { migrateToLatest } from './storage/migrate.js';
import { settleSecretCheck } from './storage/server-secret-check.js';
import { connectRedis, redisAnswers, waitUntilReady } from './storage/redis.js';
import { WORKER_LEASE_MS, leaseWorkerId, releaseWorkerLease, renewWorkerLease } from './storage/worker-lease.js';

/** The services object `createServices` returns (declared in deps.ts with `Deps`, which the modules import). */
export type { Services } from './deps.js';

export interface ServiceOverrides {
  clock?: Clock;
  random?: Random;
  database?: DatabaseHandle;
  buckets?: BucketStore;
  logger?: Logger;
  events?: ChannelEvents;
  /** Reports Redis's state on /readyz (tests; otherwise derived from REDIS_URL). */
  redisReachable?: () => Promise<boolean>;
  /** Skip the database lease (tests that build many apps on one database pass distinct ids). */
  workerId?: number;
  /** `false`: no background WAL checkpoint thread (CLI commands). Default: on for SQLite files. */
  backgroundCheckpoints?: boolean;
  /** `false`: no maintenance job (storage/maintenance.ts; CLI commands). Default: on. */
  maintenance?: boolean;
}

/** Explicit wiring of every dependency (DESIGN §9.1: no autoload). Runs migrations first. */
export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  // Asynchronous JSON, or readable lines on a terminal (http/log-destination.ts, issue #26 §0).
  const processLog = overrides.logger ? undefined : createProcessLog(config.logLevel);
  const logger = overrides.logger ?? (processLog as NonNullable<typeof processLog>).logger;
  const clock = overrides.clock ?? systemClock;
  const random = overrides.random ?? cryptoRandom;
  const database =
    overrides.database ??
    connectDatabase(config.databaseUrl, {
      durability: config.durability,
      // WAL checkpoints off the event loop (storage/sqlite/wal-checkpoint.ts, docs/performance.md);
      // not for CLI commands, which are over before a checkpoint would matter.
      backgroundCheckpoints:
        overrides.backgroundCheckpoints === false
          ? undefined
          : { onError: (message: string) => logger.warn({ error: message }, 'background WAL checkpoint failed; SQLite will checkpoint on commit') },
    });
  const applied = await migrateToLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  const secrets = serverSecrets(config);
  // Issue #36 §4: an instance with another secret would seal and derive what the others cannot open.
  if (!(await settleSecretCheck(database.db, [secretCheck(secrets[0]), ...secrets.slice(1).map(secretCheck)], clock.now()))) {
    if (!overrides.database) await database.close();
    throw new ConfigError([secretMismatchProblem(config)]);
  }

  const holder = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  let renewTimer: NodeJS.Timeout | undefined;
  let workerId: number;
  if (overrides.workerId !== undefined) {
    workerId = overrides.workerId;
  } else {
    workerId = await leaseWorkerId(database.db, holder, Date.now(), randomBytes(2).readUInt16BE(0) % (MAX_WORKER_ID + 1));
    renewTimer = setInterval(() => {
      renewWorkerLease(database.db, workerId, holder, Date.now()).then(
        (kept) => {
          // Another instance took our id while we were paused past the lease: ids could collide.
          if (!kept) logger.error({ workerId }, 'snowflake worker lease lost; restart this instance');
        },
        (error: unknown) => logger.warn({ err: error }, 'could not renew snowflake worker lease'),
      );
    }, WORKER_LEASE_MS / 3);
    renewTimer.unref();
  }
  // Issue #42 §1: files in the database every instance shares on PostgreSQL, else on this disk.
  const fileStore = config.fileStore ?? (database.dialect === 'postgres' ? 'postgres' : 'fs');
  if (fileStore === 'postgres' && database.dialect !== 'postgres') {
    if (!overrides.database) await database.close();
    throw new ConfigError(['GATEHOUSE_FILE_STORE=postgres needs a PostgreSQL DATABASE_URL (SQLite has no database to share between instances: use fs)']);
  }
  const files: BlobStore = fileStore === 'postgres' ? new DatabaseBlobStore(database.db) : new FsBlobStore(config.filesDir);
  // Purges expired credentials and keeps message partitions, on one instance at a time (a lease).
  const maintenance: MaintenanceTimer | undefined =
    overrides.maintenance === false
      ? undefined
      : startMaintenance(
          {
            db: database.db,
            dialect: database.dialect,
            clock,
            logger,
            messageRetentionDays: config.messageRetentionDays,
            auditRetentionDays: config.auditRetentionDays,
            files,
          },
          holder,
        );
  const metrics = createMetrics();
  const stopObservingQueries = database.observeQueries((timing) => metrics.observeQuery(timing));
  const bucketSetup: BucketSetup = overrides.buckets ? { store: overrides.buckets } : await createBucketStore(config, logger);
  const buckets = instrumentBucketStore(bucketSetup.store, metrics);
  const redisReachable = overrides.redisReachable ?? bucketSetup.reachable;

  // With REDIS_URL, live updates reach the viewers on every instance (DESIGN §8).
  const events = overrides.events ?? (config.redisUrl ? createRedisChannelEvents(config.redisUrl, logger, undefined, bucketSetup.outbox) : new MemoryChannelEvents());

  // Domain events (issue #37 §2): services emit, live views hear them after the commit; the audit
  // log records them in it (modules/audit, subscribed by app.ts and the CLI).
  const bus = new EventBus(logger);
  feedLiveViews(bus, events);

  // PostgreSQL + Redis: rows an instance may answer from memory, forgotten everywhere before a
  // change to them is acknowledged (storage/coherence.ts, docs/performance.md §Bearer checks from memory).
  const watchChanges = database.onCommittedChange;
  const coherence =
    config.redisUrl && watchChanges && database.identity
      ? createCoherence(config.redisUrl, {
          // Instances of one database share a namespace; other databases on the same Redis do not.
          namespace: createHash('sha256').update(await database.identity()).digest('hex').slice(0, 16),
          watch: (tables, listener) => watchChanges(tables, listener),
        })
      : undefined;
  // Repositories read through it where they declared a cache (storage/prepared.ts hotLookup):
  // services do not choose (issue #37 §4).
  if (coherence) attachCoherence(database.db, coherence);

  const outbound = createOutboundClient({ allowPrivate: config.outboundAllowPrivate });
  return {
    config,
    secrets,
    db: database.db,
    dialect: database.dialect,
    database,
    clock,
    random,
    ids: new SnowflakeGenerator(clock, workerId),
    outbound,
    files,
    logger,
    buckets,
    events,
    bus,
    ...(coherence ? { coherence } : {}),
    workerId,
    metrics,
    ...(redisReachable ? { redisReachable } : {}),
    async close() {
      if (renewTimer) clearInterval(renewTimer);
      await maintenance?.stop();
      stopObservingQueries();
      await buckets.close();
      await events.close();
      outbound.close();
      if (coherence && coherenceOf(database.db) === coherence) attachCoherence(database.db, undefined);
      await coherence?.close();
      if (overrides.workerId === undefined) await releaseWorkerLease(database.db, workerId, holder).catch(() => undefined);
      if (!overrides.database) await database.close();
      processLog?.close();
    },
  };
}

interface BucketSetup {
  store: BucketStore;
  /** Present when the store is on Redis: live-update publishes ride with its bucket operations (realtime/redis-outbox.ts). */
  outbox?: RedisOutbox;
  /** Present when the store is on Redis: whether Redis answers now. */
  reachable?: () => Promise<boolean>;
}

/**
 * Memory buckets by default (one instance); with REDIS_URL, buckets shared by every instance,
 * falling back to memory while Redis is unreachable (docs/operations.md).
 */
async function createBucketStore(config: Config, logger: Logger): Promise<BucketSetup> {
  if (!config.redisUrl) return { store: new MemoryBucketStore() };
  const client = connectRedis(config.redisUrl);
  if (!(await waitUntilReady(client))) logger.warn('Redis did not answer at start-up: rate limiting starts on this instance’s memory');
  const outbox = new RedisOutbox(client);
  return { store: new ResilientBucketStore(new RedisBucketStore(client, undefined, outbox), new MemoryBucketStore(), logger), outbox, reachable: () => redisAnswers(client) };
}

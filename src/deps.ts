import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from './config/config.js';
import type { Clock } from './core/clock.js';
import type { Random } from './core/random.js';
import type { SnowflakeGenerator } from './core/snowflake.js';
import type { Metrics } from './http/metrics.js';
import type { OutboundClient } from './http/outbound.js';
import type { BucketStore } from './rate-limit/bucket.js';
import type { ChannelEvents } from './realtime/channel-events.js';
import type { Coherence } from './storage/coherence.js';
import type { EventBus } from './events/event-bus.js';
import type { DatabaseHandle, Dialect } from './storage/connect.js';
import type { Database } from './storage/database.js';
import type { BlobStore } from './storage/blob-store.js';

// Types only (lint holds this file to `import type`): feature modules name what they receive
// without importing services.ts, which builds it and so imports the infrastructure below every
// module (docs/architecture.md, "Layers and import rules").

/**
 * What domain services receive: explicit dependencies, no request, no globals (DESIGN §2).
 * Every service function takes `deps` first.
 */
export interface Deps {
  config: Config;
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  random: Random;
  ids: SnowflakeGenerator;
  logger: Logger;
  /** Rate-limit buckets: memory by default, Redis when REDIS_URL is set. */
  buckets: BucketStore;
  /**
   * Live channel updates (message created, edited, deleted) for open channel views: the live
   * routes subscribe; services do not publish here, they emit domain events on `bus`.
   */
  events: ChannelEvents;
  /** Domain events (events/event-bus.ts): services emit with their Acting; the audit log and live views subscribe. */
  bus: EventBus;
  /**
   * PostgreSQL with REDIS_URL: per-instance memories of rows that every instance forgets before a
   * change to them is acknowledged (storage/coherence.ts). Absent otherwise: SQLite has its row cache.
   */
  coherence?: Coherence;
  /** Server secrets, never in the database (config/server-secret.ts): the first is current, the rest are still accepted. */
  secrets: readonly [string, ...string[]];
  /** DESIGN §4: the one client for outbound requests (timeouts, no redirects, capped bodies, public addresses only). */
  outbound: OutboundClient;
  /** Issue #42 §1: where files' bytes live (GATEHOUSE_FILE_STORE: the filesystem or the database). */
  files: BlobStore;
}

export interface Services extends Deps {
  database: DatabaseHandle;
  workerId: number;
  /** This instance's Prometheus registry (GET /metrics). */
  metrics: Metrics;
  /** With REDIS_URL: whether Redis answers right now (GET /readyz reports it). */
  redisReachable?: () => Promise<boolean>;
  /** Stops timers, releases the worker lease, closes stores and the database. */
  close(): Promise<void>;
}


import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { fullBucketRefusal, type BucketDecision, type BucketRule, type BucketStore } from './bucket.js';
import { BUCKET_RULE_LUA } from '../storage/redis-bucket-script.js';
import type { MemoryBucketStore } from './memory-store.js';
import type { RedisOutbox } from '../realtime/redis-outbox.js';

/**
 * The bucket rule of bucket.ts as one atomic Lua script (storage/redis-bucket-script.ts), so every instance sharing
 * a Redis shares each bucket (SPEC §8 holds across instances). Returns {allowed, count, resetAt}.
 */
const SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local mode = ARGV[5]
local allowed, count, reset
${BUCKET_RULE_LUA}
return {allowed, count, reset}
`;

function toDecision(reply: unknown, rule: BucketRule, now: number): BucketDecision {
  const [allowed, count, resetAt] = (reply as [number, number, number]).map(Number) as [number, number, number];
  return {
    allowed: allowed === 1,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - count),
    resetAt,
    resetAfterMs: Math.max(0, resetAt - now),
  };
}

/** Full buckets remembered at most; past it, refusals go to Redis as before (memory stays bounded). */
const MAX_FULL_BUCKETS = 10_000;

export class RedisBucketStore implements BucketStore {
  /**
   * Buckets of never-reset rules (BucketRule.neverReset) that Redis reported full, by key: the
   * time their window ends. Until then every take is refused whatever any instance does, so this
   * instance answers those refusals without a round trip: a client hammering a webhook far past
   * SPEC §8's 10 per 2 s costs one Redis call per window and instance, not one per request.
   */
  private readonly full = new Map<string, number>();

  constructor(
    readonly client: Redis,
    private readonly prefix = 'gh:rl:',
    /**
     * When given (services.ts: the live-update publisher on this client), each bucket operation
     * also carries the publishes waiting to be sent: one round trip for both (realtime/redis-outbox.ts).
     */
    private readonly outbox?: RedisOutbox,
  ) {
    client.defineCommand('ghBucket', { numberOfKeys: 1, lua: SCRIPT });
  }

  private run(key: string, rule: BucketRule, now: number, cost: number, mode: 'take' | 'peek'): Promise<BucketDecision> {
    if (this.outbox !== undefined) return this.outbox.bucket(mode, this.prefix + key, rule.limit, rule.windowMs, now, cost).then((reply) => toDecision(reply, rule, now));
    const command = (this.client as unknown as { ghBucket: (...args: (string | number)[]) => Promise<unknown> }).ghBucket;
    return command.call(this.client, this.prefix + key, rule.limit, rule.windowMs, now, cost, mode).then((reply) => toDecision(reply, rule, now));
  }

  take(key: string, rule: BucketRule, now: number, cost = 1): Promise<BucketDecision> {
    if (rule.neverReset !== true) return this.run(key, rule, now, cost, 'take');
    const resetAt = this.full.get(key);
    if (resetAt !== undefined) {
      if (resetAt > now && cost >= 1) return Promise.resolve(fullBucketRefusal(rule, resetAt, now));
      if (resetAt <= now) this.full.delete(key);
    }
    return this.run(key, rule, now, cost, 'take').then((decision) => {
      // Full (the take that filled it included): refused until the window ends.
      if (decision.remaining === 0 && decision.resetAt > now) this.rememberFull(key, decision.resetAt, now);
      return decision;
    });
  }

  private rememberFull(key: string, resetAt: number, now: number): void {
    if (this.full.size >= MAX_FULL_BUCKETS) {
      for (const [k, until] of this.full) if (until <= now) this.full.delete(k);
      if (this.full.size >= MAX_FULL_BUCKETS) return;
    }
    this.full.set(key, resetAt);
  }

  peek(key: string, rule: BucketRule, now: number): Promise<BucketDecision> {
    return this.run(key, rule, now, 0, 'peek');
  }

  async reset(key: string): Promise<void> {
    this.full.delete(key);
    await this.client.del(this.prefix + key);
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/**
 * Redis when it answers, this instance's memory when it does not (issue #5: "falls back to its
 * memory store, logs it once, and returns to Redis when it is back"). While on the fallback each
 * instance limits on its own, so a client spreading requests over N instances may get up to N
 * times the limit until Redis returns; nothing is refused or slowed because Redis is down.
 */
export class ResilientBucketStore implements BucketStore {
  private degraded = false;

  constructor(
    private readonly primary: RedisBucketStore,
    private readonly fallback: MemoryBucketStore,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
  ) {}

  /** True while the fallback is in use; for /readyz and tests. */
  get usingFallback(): boolean {
    return this.degraded;
  }

  private async attempt<T>(primary: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    try {
      const result = await primary();
      if (this.degraded) {
        this.degraded = false;
        this.logger.info('rate limiting is back on Redis');
      }
      return result;
    } catch (error) {
      if (!this.degraded) {
        this.degraded = true;
        this.logger.warn({ err: error }, 'Redis unreachable: rate limiting falls back to this instance’s memory');
      }
      return fallback();
    }
  }

  take(key: string, rule: BucketRule, now: number, cost = 1): Promise<BucketDecision> {
    return this.attempt(
      () => this.primary.take(key, rule, now, cost),
      () => this.fallback.take(key, rule, now, cost),
    );
  }

  peek(key: string, rule: BucketRule, now: number): Promise<BucketDecision> {
    return this.attempt(
      () => this.primary.peek(key, rule, now),
      () => this.fallback.peek(key, rule, now),
    );
  }

  async reset(key: string): Promise<void> {
    await this.fallback.reset(key);
    await this.primary.reset(key).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.primary.close();
    await this.fallback.close();
  }
}

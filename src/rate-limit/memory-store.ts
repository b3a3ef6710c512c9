/**
 * The in-process bucket store (the default for one instance): a Map of buckets, swept as it goes,
 * answering synchronously so the hot path times it without a promise (docs/performance.md §Rate
 * limits and the 429 path). Invariant: it decides exactly as bucket.ts's pure rule, and memory
 * stays proportional to the keys in use. Tested by test/unit/bucket.test.ts and
 * test/storage/bucket-stores.test.ts (beside the Redis store).
 */
import { peekBucket, takeFromBucket, type BucketDecision, type BucketRule, type BucketState, type BucketStore } from './bucket.js';

/**
 * Buckets in this process's memory: the default, right for a single instance. Expired buckets
 * are swept every `sweepEvery` operations so memory stays proportional to active keys.
 */
export class MemoryBucketStore implements BucketStore {
  private readonly buckets = new Map<string, BucketState>();
  private operations = 0;

  constructor(private readonly sweepEvery = 10_000) {}

  take(key: string, rule: BucketRule, now: number, cost = 1): Promise<BucketDecision> {
    try {
      return Promise.resolve(this.takeSync(key, rule, now, cost));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Synchronous form: the instrumented store times it in line (http/metrics.ts). */
  takeSync(key: string, rule: BucketRule, now: number, cost = 1): BucketDecision {
    this.maybeSweep(now);
    const { state, decision } = takeFromBucket(this.buckets.get(key), rule, now, cost);
    this.buckets.set(key, state);
    return decision;
  }

  async peek(key: string, rule: BucketRule, now: number): Promise<BucketDecision> {
    return peekBucket(this.buckets.get(key), rule, now);
  }

  async reset(key: string): Promise<void> {
    this.buckets.delete(key);
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }

  /** Active buckets; for tests and metrics. */
  get size(): number {
    return this.buckets.size;
  }

  private maybeSweep(now: number): void {
    this.operations += 1;
    if (this.operations % this.sweepEvery !== 0) return;
    for (const [key, state] of this.buckets) if (state.resetAt <= now) this.buckets.delete(key);
  }
}

/**
 * The bucket rule, pure: `limit` requests per window of `windowMs`, the window starting with the
 * first request after the previous one ended (Discord's per-route buckets; SPEC §8 uses 10 per 2 s
 * per webhook). Stores (memory, Redis) keep the state and apply exactly this rule.
 */
export interface BucketRule {
  limit: number;
  windowMs: number;
  /**
   * No key of this rule is ever reset (BucketStore.reset), so a full bucket refuses every take
   * until its window ends, whoever asks: a store shared by instances may answer those refusals
   * from this instance's memory (redis-store.ts) and stay exact.
   */
  neverReset?: boolean;
}

export interface BucketState {
  count: number;
  resetAt: number;
}

export interface BucketDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the window ends. */
  resetAt: number;
  /** ms until the window ends (0 when already over). */
  resetAfterMs: number;
}

/** Counts one attempt (or `cost`) against the bucket; a refused attempt does not count. */
export function takeFromBucket(state: BucketState | undefined, rule: BucketRule, now: number, cost = 1): { state: BucketState; decision: BucketDecision } {
  const current = state && state.resetAt > now ? state : { count: 0, resetAt: now + rule.windowMs };
  const allowed = current.count + cost <= rule.limit;
  const next = allowed ? { count: current.count + cost, resetAt: current.resetAt } : current;
  return { state: next, decision: decide(next, rule, now, allowed) };
}

/** The bucket as it stands, without counting anything. */
export function peekBucket(state: BucketState | undefined, rule: BucketRule, now: number): BucketDecision {
  const current = state && state.resetAt > now ? state : { count: 0, resetAt: now + rule.windowMs };
  return decide(current, rule, now, current.count < rule.limit);
}

/** The refusal of a full bucket whose window ends at `resetAt`, as takeFromBucket answers it. */
export function fullBucketRefusal(rule: BucketRule, resetAt: number, now: number): BucketDecision {
  return decide({ count: rule.limit, resetAt }, rule, now, false);
}

function decide(state: BucketState, rule: BucketRule, now: number, allowed: boolean): BucketDecision {
  return {
    allowed,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - state.count),
    resetAt: state.resetAt,
    resetAfterMs: Math.max(0, state.resetAt - now),
  };
}

/** Where bucket state lives. Both stores behave identically (the same tests run on both). */
export interface BucketStore {
  take(key: string, rule: BucketRule, now: number, cost?: number): Promise<BucketDecision>;
  /** `take` answered in line, for a store that keeps its state in this process (the memory store). */
  takeSync?(key: string, rule: BucketRule, now: number, cost?: number): BucketDecision;
  peek(key: string, rule: BucketRule, now: number): Promise<BucketDecision>;
  /** Forget a key (e.g. a successful sign-in clears its failure count). */
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

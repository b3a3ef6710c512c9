/**
 * Rate limits of the webhook URL routes (SPEC §8, DESIGN §1), pure: the rules, the bucket keys
 * and the headers every answer carries. docs/webhooks.md states them for users.
 * Invariant: every route of one webhook URL spends one bucket, and a request that proves no
 * webhook spends its address's bucket, never the webhook's.
 * Tested by test/http/webhook-rate-limit.test.ts.
 */
import { hash } from 'node:crypto';
import type { BucketDecision, BucketRule } from '../../rate-limit/bucket.js';

/** SPEC §8: a bucket of 10 requests every 2 seconds, per webhook, over every route of its URL. */
export const WEBHOOK_RULE: BucketRule = { limit: 10, windowMs: 2000, neverReset: true };

/**
 * Requests that prove no webhook (an unknown or deleted id, or a wrong token) must not spend the
 * real webhook's bucket, or anyone knowing an id could silence it. They spend a bucket of their
 * client address instead: 30 per 10 seconds, enough for a misconfigured client to see its 401/404
 * answers, too few to guess tokens or keep hammering a deleted webhook.
 */
export const INVALID_REQUEST_RULE: BucketRule = { limit: 30, windowMs: 10_000, neverReset: true };

export function webhookBucketKey(webhookId: string): string {
  return `wh:${webhookId}`;
}

export function invalidRequestBucketKey(clientAddress: string): string {
  return `wh-invalid:${clientAddress}`;
}

/**
 * X-RateLimit-Bucket: an opaque, stable name of the bucket (as Discord's), a hash rather than the
 * webhook id itself so that clients treat it as an identifier and nothing else; a client library
 * uses it to learn that every route of one webhook shares one bucket.
 */
export function bucketHash(kind: 'webhook' | 'address', key: string): string {
  // Digested on every request (~0.3 µs): a bounded Map of names, evicting its oldest entry, cost
  // ~6 µs per request once the benchmark's 14,000 webhooks outnumbered its bound (V8 walks past
  // every deleted entry to find a Map's first key; docs/performance.md §Rate limits and the 429 path).
  return hash('sha256', `${kind}:${key}`, 'hex').slice(0, 32);
}

/** Seconds with three decimals, as Discord writes them ("1.250"). */
function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/**
 * The headers of every answer on a webhook URL, success or error (DESIGN §1): how many requests
 * the bucket allows, how many remain, when it refills (epoch seconds) and in how long (seconds).
 */
export function rateLimitHeaders(decision: BucketDecision, bucket: string): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': seconds(decision.resetAt),
    'x-ratelimit-reset-after': seconds(decision.resetAfterMs),
    'x-ratelimit-bucket': bucket,
  };
}

/**
 * What a 429 adds to those headers; Retry-After (whole seconds, rounded up) and the body
 * {message, retry_after, global: false, code: 0} come from the error handler (RateLimitedError).
 * "shared" for a webhook's bucket (every holder of the URL shares it), "user" for the bucket of
 * one client address.
 */
export function rateLimitedHeaders(scope: 'shared' | 'user'): Record<string, string> {
  return { 'x-ratelimit-scope': scope };
}

/**
 * What: the webhook an execute's gate checks. On PostgreSQL a per-instance hint, because the
 * message's insert checks the token again in the same statement (messages/webhook-message.repository.ts);
 * on SQLite the lookup itself, already answered from memory and exact (storage/sqlite/row-cache.ts).
 * Invariant: the hint only chooses which bucket a request spends before the insert's check
 * (docs/performance.md §PostgreSQL and Redis round trips); it never stores a message or answers a
 * record. The repository chooses the strategy, not the service (issue #37 §4).
 * Tested: test/http/webhook-execute-round-trips.test.ts, test/reliability/scale-out.test.ts.
 */
import type { Kysely } from 'kysely';
import { matchesHash } from '../../core/secrets.js';
import type { Database } from '../../storage/database.js';
import { onPostgres } from '../../storage/dialect-of.js';
import { findWebhook } from './webhooks.repository.js';
import type { Webhook } from './webhooks.js';

/** Webhooks remembered per instance, to choose a request's bucket without a round trip. */
const MAX_REMEMBERED = 50_000;
const remembered = new WeakMap<Kysely<Database>, Map<string, Webhook>>();

function rememberedOf(db: Kysely<Database>): Map<string, Webhook> {
  let map = remembered.get(db);
  if (map === undefined) {
    map = new Map();
    remembered.set(db, map);
  }
  return map;
}

/**
 * The webhook as last seen here when the presented token matches it, else as the database has it
 * now. Only a hint: the insert above checks again. A stale hint can cost one request per instance
 * the wrong bucket (an old token spends the webhook's bucket once, then is forgotten); it never
 * stores a message or answers a record.
 */
async function provisionalWebhook(db: Kysely<Database>, id: string, token: string): Promise<Webhook | undefined> {
  const map = rememberedOf(db);
  const known = map.get(id);
  if (known !== undefined && matchesHash(token, known.tokenHash)) return known;
  const current = await findWebhook(db, id);
  if (current === undefined) {
    map.delete(id);
    return undefined;
  }
  // Bounded by starting over: a miss costs one indexed select, and churn past 50,000 webhooks is rare.
  if (map.size >= MAX_REMEMBERED) map.clear();
  map.set(id, current);
  return current;
}

/**
 * The webhook an execute's gate checks `token` against: PostgreSQL's hint (provisionalWebhook),
 * SQLite's exact lookup.
 */
export function executeGateWebhook(db: Kysely<Database>, id: string, token: string): Promise<Webhook | undefined> {
  return onPostgres(db) ? provisionalWebhook(db, id, token) : findWebhook(db, id);
}

/**
 * The webhook as the database has it now when `webhook` is a hint (it may predate a change made
 * on another instance; the hint goes), else `webhook` itself: an exact read needs no second one.
 */
export async function confirmedWebhook(db: Kysely<Database>, webhook: Webhook): Promise<Webhook | undefined> {
  const map = remembered.get(db);
  if (map === undefined || map.get(webhook.id) !== webhook) return webhook;
  map.delete(webhook.id);
  return findWebhook(db, webhook.id);
}

/** The insert found the webhook gone or its token changed: the hint goes. */
export function forgetWebhook(db: Kysely<Database>, id: string): void {
  remembered.get(db)?.delete(id);
}

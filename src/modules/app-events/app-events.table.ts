import type { DbId, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * Issue #40 §1–§3: an app's signing key and the endpoints Gatehouse sends to. A row is made the
 * first time the app's key is needed (its verify_key read, or an endpoint saved).
 */
export interface AppEndpointsTable {
  application_id: DbId;
  /** The Ed25519 public key, 64 hex digits: the app's `verify_key` (as Discord). */
  public_key: string;
  /** The Ed25519 private key's 32-byte seed, sealed with the server secret and bound to the app id (core/sealed.ts). */
  sealed_private_key: string;
  /** Verified on save (a signed PING answered `{"type":1}`, a bad signature answered 401); null: none. */
  interactions_endpoint_url: string | null;
  /** Verified on save (a signed PING answered 204); null: none. */
  event_webhooks_url: string | null;
  /** Discord's ApplicationEventWebhookStatus: 1 disabled, 2 enabled, 3 disabled by the server (it kept failing). */
  event_webhooks_status: DbInt;
  /** JSON array of the event types sent (APPLICATION_AUTHORIZED, APPLICATION_DEAUTHORIZED). */
  event_webhooks_types: string;
  /** Why the server disabled the endpoint (status 3), shown to the owner in the portal. */
  event_webhooks_disabled_reason: string | null;
  updated_at: DbInt;
}

/**
 * App events waiting for delivery (issue #40 §1 "a durable outbox"): inserted in the transaction of
 * the change they describe, claimed by one instance's worker at a time (lease, FOR UPDATE SKIP
 * LOCKED on PostgreSQL; storage/outbox.ts), deleted once delivered or dropped.
 */
export interface AppEventOutboxTable {
  /** A snowflake: the queue's order. */
  id: DbId;
  application_id: DbId;
  /** Discord's event type: APPLICATION_AUTHORIZED or APPLICATION_DEAUTHORIZED. */
  event_type: string;
  /** JSON of what the payload is built from at delivery (ids, scopes; no secret). */
  data: string;
  /** When it happened: the payload's `event.timestamp`. */
  event_at: DbInt;
  /** queued; a row that is delivered or dropped is deleted (the delivery log keeps the outcome). */
  status: string;
  attempts: DbInt;
  next_attempt_at: DbInt;
  lease_holder: string | null;
  lease_until: DbIntNullable;
  last_error: string | null;
  created_at: DbInt;
}

/** The delivery log of an app (issue #40 §3): one row per attempt, the last 100 per app kept. */
export interface AppDeliveriesTable {
  id: DbId;
  application_id: DbId;
  /** event (an app event), event-ping (the event URL's check), interactions-ping (the interactions URL's check). */
  kind: string;
  event_type: string | null;
  /** delivered, retrying, dropped, accepted (a check passed), refused (a check failed). */
  outcome: string;
  http_status: DbIntNullable;
  latency_ms: DbIntNullable;
  next_retry_at: DbIntNullable;
  error: string | null;
  created_at: DbInt;
}

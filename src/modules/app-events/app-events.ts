import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { MINUTE, SECOND } from '../../core/clock.js';

/**
 * Pure rules of what Gatehouse sends to apps (issue #40 §1, §3): Discord's request signature, the
 * payloads of interactions PINGs and app events, the retry schedule, and the sentences an app's
 * owner reads when a check or a delivery fails.
 */

// --- Signing (Discord: "Security and Authorization" of interactions and webhook events) -----------

/** PKCS #8 DER of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410 §7). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The Ed25519 private key of a 32-byte seed (the seed comes from the injected random source). */
export function privateKeyFromSeed(seed: Buffer): KeyObject {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The public key as Discord shows `verify_key`: the raw 32 bytes in hex. */
export function publicKeyHex(privateKey: KeyObject): string {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return spki.subarray(spki.length - 32).toString('hex');
}

export interface SignatureHeaders {
  'x-signature-ed25519': string;
  'x-signature-timestamp': string;
}

/**
 * Discord's headers: `X-Signature-Timestamp` is the time in unix seconds, `X-Signature-Ed25519`
 * the hex Ed25519 signature of the timestamp followed by the raw body.
 */
export function signatureHeaders(privateKey: KeyObject, nowMs: number, body: string): SignatureHeaders {
  const timestamp = String(Math.floor(nowMs / 1000));
  const signature = sign(null, Buffer.from(timestamp + body, 'utf8'), privateKey).toString('hex');
  return { 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp };
}

/**
 * Headers whose signature is well formed but does not verify (Discord checks that an
 * interactions endpoint refuses one): the signature of another body.
 */
export function badSignatureHeaders(privateKey: KeyObject, nowMs: number, body: string): SignatureHeaders {
  const good = signatureHeaders(privateKey, nowMs, body);
  return { ...good, 'x-signature-ed25519': signatureHeaders(privateKey, nowMs, `${body} `)['x-signature-ed25519'] };
}

// --- Payloads -----------------------------------------------------------------------------------

/** Discord's interaction types and the PING answer. */
export const INTERACTION_PING = 1;
/** Discord's webhook event body types: 0 PING, 1 Event. */
export const EVENT_BODY_PING = 0;
export const EVENT_BODY_EVENT = 1;

/** The event types an app may subscribe to (Discord's names). */
export const APP_EVENT_TYPES = ['APPLICATION_AUTHORIZED', 'APPLICATION_DEAUTHORIZED'] as const;
export type AppEventType = (typeof APP_EVENT_TYPES)[number];

export function isAppEventType(value: string): value is AppEventType {
  return (APP_EVENT_TYPES as readonly string[]).includes(value);
}

/** Discord's ApplicationEventWebhookStatus. */
export const EventWebhooksStatus = { DISABLED: 1, ENABLED: 2, DISABLED_BY_SERVER: 3 } as const;
export type EventWebhooksStatus = (typeof EventWebhooksStatus)[keyof typeof EventWebhooksStatus];

/** Discord's PING interaction: id, application_id, type 1, token, version 1. */
export function interactionPing(id: string, applicationId: string, token: string): string {
  return JSON.stringify({ id, application_id: applicationId, type: INTERACTION_PING, token, version: 1 });
}

/** Discord's webhook event PING: `{ version: 1, application_id, type: 0 }`. */
export function eventPing(applicationId: string): string {
  return JSON.stringify({ version: 1, application_id: applicationId, type: EVENT_BODY_PING });
}

/** Discord's webhook event body: `{ version: 1, application_id, type: 1, event: { type, timestamp, data } }`. */
export function eventBody(applicationId: string, type: AppEventType, at: number, data: Record<string, unknown>): string {
  return JSON.stringify({ version: 1, application_id: applicationId, type: EVENT_BODY_EVENT, event: { type, timestamp: new Date(at).toISOString(), data } });
}

/**
 * What an outbox row keeps to build its event at delivery: ids and scopes only (the user and
 * server objects are read then). Discord's `integration_type`: 0 a server install, 1 a user install;
 * absent for an authorization that installs nothing.
 */
export interface AppEventData {
  userId: string;
  scopes?: string[];
  integrationType?: 0 | 1;
  serverId?: string;
}

// --- Stored state ------------------------------------------------------------------------------

/** An app's signing key and endpoints (app_endpoints). */
export interface AppEndpoints {
  applicationId: string;
  publicKey: string;
  sealedPrivateKey: string;
  interactionsEndpointUrl: string | null;
  eventWebhooksUrl: string | null;
  eventWebhooksStatus: EventWebhooksStatus;
  eventWebhooksTypes: string[];
  eventWebhooksDisabledReason: string | null;
}

export type DeliveryKind = 'event' | 'event-ping' | 'interactions-ping' | 'interaction';
export type DeliveryOutcome = 'delivered' | 'retrying' | 'dropped' | 'accepted' | 'refused';

export interface Delivery {
  id: string;
  applicationId: string;
  kind: DeliveryKind;
  eventType: string | null;
  outcome: DeliveryOutcome;
  httpStatus: number | null;
  latencyMs: number | null;
  nextRetryAt: number | null;
  error: string | null;
  createdAt: number;
}

// --- Answers ------------------------------------------------------------------------------------

/** Whether an interactions endpoint answered the PING as Discord requires: 200 and a JSON `{"type":1}`. */
export function isPongAnswer(status: number, body: Buffer): boolean {
  if (status !== 200) return false;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null && (parsed as { type?: unknown }).type === INTERACTION_PING;
  } catch {
    return false;
  }
}

/** Discord: an event endpoint acknowledges with 204; a delivery counts as received on any 2xx. */
export function isEventAcknowledged(status: number): boolean {
  return status >= 200 && status < 300;
}

// --- Retries --------------------------------------------------------------------------------------

/** Issue #40 §1: a failed event is retried for at least 10 minutes; Gatehouse keeps trying for 15. */
export const EVENT_RETRY_WINDOW_MS = 15 * MINUTE;

/** The wait after the `attempts`-th failed attempt: 5 s, doubling, at most 5 minutes. */
export function eventRetryDelayMs(attempts: number): number {
  return Math.min(5 * SECOND * 2 ** Math.max(0, attempts - 1), 5 * MINUTE);
}

/** When to try again after a failure at `now`, or undefined when the event is dropped (its window is over). */
export function nextEventAttempt(createdAt: number, attempts: number, now: number): number | undefined {
  const next = now + eventRetryDelayMs(attempts);
  return next - createdAt > EVENT_RETRY_WINDOW_MS ? undefined : next;
}

// --- Endpoint URLs ------------------------------------------------------------------------------

/** Discord's limit on both URLs. */
export const ENDPOINT_URL_MAX = 2048;

/**
 * Why `text` cannot be an endpoint URL, or undefined when it can: absolute, https (http only where
 * the operator lets outbound requests reach private addresses: tests and laptop demos), no
 * credentials, no fragment, at most 2048 characters.
 */
export function endpointUrlProblem(text: string, allowPlainHttp: boolean): string | undefined {
  if (text.length > ENDPOINT_URL_MAX) return `Must be ${ENDPOINT_URL_MAX} or fewer in length.`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'Not a well formed URL.';
  }
  if (url.protocol !== 'https:' && !(allowPlainHttp && url.protocol === 'http:')) return allowPlainHttp ? 'The URL must start with https:// or http://.' : 'The URL must start with https://.';
  if (url.username !== '' || url.password !== '') return 'The URL must not carry a user name or password.';
  if (url.hash !== '') return 'The URL must not have a fragment (#…).';
  return undefined;
}

/** Why an outbound request got no answer, as the app's owner reads it (http/outbound.ts's reasons). */
export function outboundFailureSentence(reason: 'invalid-url' | 'forbidden-address' | 'timeout' | 'too-large' | 'network', timeoutMs: number, detail: string): string {
  switch (reason) {
    case 'invalid-url':
      return 'the URL is not an http(s) URL without credentials';
    case 'forbidden-address':
      return 'its address is not public (loopback, private, link-local and multicast addresses are refused unless the operator sets GATEHOUSE_OUTBOUND_ALLOW_PRIVATE)';
    case 'timeout':
      return `no complete answer within ${timeoutMs / 1000} seconds`;
    case 'too-large':
      return 'the answer was too large';
    case 'network':
      return `the connection failed (${detail.slice(0, 200)})`;
  }
}

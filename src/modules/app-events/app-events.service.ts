import { performance } from 'node:perf_hooks';
import type { KeyObject } from 'node:crypto';
import type { Acting, Who } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { AccessError, RateLimitedError, invalidField } from '../../core/errors.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import { open, seal, sealingKey } from '../../core/sealed.js';
import type { Deps } from '../../deps.js';
import type { DomainEvent, EventType, FieldChange } from '../../events/domain-events.js';
import { changing, type Writer } from '../../events/event-bus.js';
import { OutboundError } from '../../http/outbound.js';
import { nextDueAt, startOutboxWorker } from '../../storage/outbox.js';
import { getManagedApplication } from '../applications/applications.service.js';
import type { Person } from '../directory/people.js';
import { getPersonById } from '../directory/people.service.js';
import type { Server } from '../directory/servers.js';
import { getServer } from '../directory/servers.service.js';
import { presentGuild, presentUser } from '../resources/resources.js';
import {
  APP_EVENT_TYPES,
  EventWebhooksStatus,
  badSignatureHeaders,
  endpointUrlProblem,
  eventBody,
  eventPing,
  interactionPing,
  isAppEventType,
  isEventAcknowledged,
  isPongAnswer,
  nextEventAttempt,
  outboundFailureSentence,
  privateKeyFromSeed,
  publicKeyHex,
  signatureHeaders,
  type AppEndpoints,
  type AppEventData,
  type AppEventType,
  type Delivery,
  type DeliveryKind,
  type DeliveryOutcome,
} from './app-events.js';
import {
  claimDueAppEvents,
  deleteClaimedAppEvent,
  deleteClaimedAppEvents,
  deleteQueuedAppEventsOf,
  disableFailingEventWebhooks,
  findAppEndpoints,
  findEnabledEventEndpoints,
  insertAppEvents,
  insertAppKeysIfMissing,
  insertDeliveries,
  insertDelivery,
  listDeliveries,
  rescheduleAppEvent,
  updateEventWebhooks,
  updateInteractionsEndpointUrl,
  type ClaimedAppEvent,
  type NewAppEvent,
} from './app-events.repository.js';


/**
 * What Gatehouse sends to apps (issue #40 §1–§3; docs/app-events.md, docs/interactions.md): every
 * request is signed with the app's Ed25519 key as Discord signs, and goes through the one
 * outbound client (http/outbound.ts: deadline, no redirects, capped answer, public addresses
 * only unless the operator allows private ones). App events are queued in the transaction of the
 * change they describe (a recorder on the event bus) and delivered by each instance's worker.
 */

/** Discord: an interactions endpoint answers within 3 seconds. */
export const INTERACTION_TIMEOUT_MS = 3_000;
/** Issue #40 §1: an event endpoint gets 10 seconds. */
export const EVENT_TIMEOUT_MS = 10_000;
/** An answer longer than this is refused (a PONG or a 204 is a few bytes; a command answer fits easily). */
const ANSWER_MAX_BYTES = 64 * 1024;

const KEY_PURPOSE = 'gatehouse app signing key';

// --- Keys ---------------------------------------------------------------------------------------

/**
 * The app's endpoints row, with its key pair made on first use (issue #40 §1: every app has one;
 * an app made before this feature gets it the first time its verify_key is read or something is
 * sent to it). The private key's seed is sealed with the server secret, bound to the app id.
 */
export async function appEndpointsOf(deps: Deps, applicationId: string): Promise<AppEndpoints> {
  const found = await findAppEndpoints(deps.db, applicationId);
  if (found) return found;
  const seed = deps.random.bytes(32);
  const sealed = seal(sealingKey(deps.secrets[0], KEY_PURPOSE), deps.random.bytes(12), seed.toString('hex'), applicationId);
  await insertAppKeysIfMissing(deps.db, { applicationId, publicKey: publicKeyHex(privateKeyFromSeed(seed)), sealedPrivateKey: sealed, now: deps.clock.now() });
  const made = await findAppEndpoints(deps.db, applicationId);
  if (!made) throw new Error(`app ${applicationId} has no endpoints row after inserting one`);
  return made;
}

/**
 * Opened signing keys, per set of server secrets (one per running app) and sealed key. Opening
 * and importing a key was a sixth of an interaction's CPU (docs/performance.md, "Interactions
 * and app events"); a sealed key names one key for good (a new key is a new sealed value), and
 * other secrets never see what these opened. Bounded: cleared when full.
 */
const openedKeys = new WeakMap<readonly string[], Map<string, KeyObject>>();
const OPENED_KEYS_MAX = 10_000;

function privateKeyOf(deps: Pick<Deps, 'secrets'>, endpoints: AppEndpoints): KeyObject | undefined {
  let opened = openedKeys.get(deps.secrets);
  if (opened === undefined) openedKeys.set(deps.secrets, (opened = new Map()));
  // The sealed value is bound to the app id (open's associated data), so the pair is the key.
  const cacheKey = `${endpoints.applicationId} ${endpoints.sealedPrivateKey}`;
  const cached = opened.get(cacheKey);
  if (cached !== undefined) return cached;
  for (const secret of deps.secrets) {
    const seed = open(sealingKey(secret, KEY_PURPOSE), endpoints.sealedPrivateKey, endpoints.applicationId);
    if (seed === undefined) continue;
    const key = privateKeyFromSeed(Buffer.from(seed, 'hex'));
    if (opened.size >= OPENED_KEYS_MAX) opened.clear();
    opened.set(cacheKey, key);
    return key;
  }
  return undefined;
}

// --- Sending ------------------------------------------------------------------------------------

/** What one signed request produced: an answer, or why there was none (a sentence for the owner). */
interface SendResult {
  status: number | null;
  body: Buffer;
  latencyMs: number;
  failure: string | null;
}

/**
 * The one sender of signed requests to apps (issue #40 §1): POSTs `body` as JSON to `url`, signed
 * with the app's key (or, for the check Discord makes, with a signature that does not verify),
 * with `timeoutMs` as the deadline. Never throws for the endpoint's faults: they come back as
 * `failure`.
 */
async function sendSigned(deps: Deps, endpoints: AppEndpoints, url: string, body: string, options: { timeoutMs: number; badSignature?: boolean }): Promise<SendResult> {
  const started = performance.now();
  const key = privateKeyOf(deps, endpoints);
  if (key === undefined) return { status: null, body: Buffer.alloc(0), latencyMs: 0, failure: "the app's signing key does not open with the server secrets (GATEHOUSE_SECRET changed)" };
  const now = deps.clock.now();
  const signature = options.badSignature ? badSignatureHeaders(key, now, body) : signatureHeaders(key, now, body);
  try {
    const answer = await deps.outbound.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Gatehouse (app events and interactions)', ...signature },
      body,
      timeoutMs: options.timeoutMs,
      maxBytes: ANSWER_MAX_BYTES,
    });
    const latencyMs = Math.round(performance.now() - started);
    if (answer.status >= 300 && answer.status < 400) return { status: answer.status, body: answer.body, latencyMs, failure: `it answered a redirect (${answer.status}), which is not followed` };
    return { status: answer.status, body: answer.body, latencyMs, failure: null };
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { status: null, body: Buffer.alloc(0), latencyMs: Math.round(performance.now() - started), failure: outboundFailureSentence(error.reason, options.timeoutMs, error.message) };
  }
}

async function logDelivery(deps: Deps, entry: Omit<Delivery, 'id' | 'createdAt'>): Promise<void> {
  await insertDelivery(deps.db, { ...entry, id: deps.ids.next(), createdAt: deps.clock.now() });
}

function logEntry(applicationId: string, kind: DeliveryKind, eventType: string | null, outcome: DeliveryOutcome, sent: SendResult, extra: { error?: string | null; nextRetryAt?: number | null } = {}): Omit<Delivery, 'id' | 'createdAt'> {
  return {
    applicationId,
    kind,
    eventType,
    outcome,
    httpStatus: sent.status,
    latencyMs: sent.status === null ? null : sent.latencyMs,
    nextRetryAt: extra.nextRetryAt ?? null,
    error: extra.error ?? sent.failure,
  };
}

/** What an app's interactions endpoint answered (or why it did not). */
export interface InteractionAnswer {
  status: number | null;
  body: Buffer;
  latencyMs: number;
  /** Why there is no usable answer, as the app's owner reads it; null when the endpoint answered. */
  failure: string | null;
}

/**
 * Sends an interaction (Discord's JSON, already built) to the app's verified interactions
 * endpoint, signed, with Discord's 3-second deadline, and hands back its answer for the caller to
 * check (issue #40 §2: commands invoked from the chat build on this). Undefined when the app has
 * no interactions endpoint URL.
 */
export async function callInteractionsEndpoint(deps: Deps, applicationId: string, interaction: string): Promise<InteractionAnswer | undefined> {
  const endpoints = await appEndpointsOf(deps, applicationId);
  if (endpoints.interactionsEndpointUrl === null) return undefined;
  return sendSigned(deps, endpoints, endpoints.interactionsEndpointUrl, interaction, { timeoutMs: INTERACTION_TIMEOUT_MS });
}

/**
 * Records in the app's delivery log what became of an interaction sent to its endpoint (issue #40
 * §2: the owner sees why an answer was refused or missing): `command` as `/name`, `error` null
 * when the answer was used.
 */
export async function logInteractionDelivery(deps: Deps, applicationId: string, command: string, answer: InteractionAnswer, error: string | null): Promise<void> {
  const sent: SendResult = { status: answer.status, body: answer.body, latencyMs: answer.latencyMs, failure: answer.failure };
  await logDelivery(deps, logEntry(applicationId, 'interaction', command, error === null ? 'accepted' : 'refused', sent, { error }));
}

// --- Verifying endpoints ------------------------------------------------------------------------

/**
 * Discord's check of an interactions endpoint URL: a signed PING must be answered 200 `{"type":1}`,
 * and the same PING with a signature that does not verify must be answered 401 (an endpoint that
 * does not check signatures would accept forged interactions). Undefined when both pass, else the
 * sentence naming the check that failed. Both requests are in the delivery log.
 */
async function checkInteractionsEndpoint(deps: Deps, endpoints: AppEndpoints, url: string): Promise<string | undefined> {
  const ping = interactionPing(deps.ids.next(), endpoints.applicationId, deps.random.bytes(32).toString('base64url'));
  const first = await sendSigned(deps, endpoints, url, ping, { timeoutMs: INTERACTION_TIMEOUT_MS });
  let problem: string | undefined;
  if (first.failure !== null) problem = `The signed PING got no answer: ${first.failure}.`;
  else if (!isPongAnswer(first.status ?? 0, first.body)) problem = `The signed PING was answered ${first.status}, not 200 with {"type":1}.`;
  await logDelivery(deps, logEntry(endpoints.applicationId, 'interactions-ping', 'PING', problem ? 'refused' : 'accepted', first, { error: problem ?? null }));
  if (problem) return problem;

  const second = await sendSigned(deps, endpoints, url, ping, { timeoutMs: INTERACTION_TIMEOUT_MS, badSignature: true });
  if (second.failure !== null) problem = `The PING with a bad signature got no answer: ${second.failure}.`;
  else if (second.status !== 401) problem = `The PING with a bad signature was answered ${second.status}, not 401: the endpoint must verify X-Signature-Ed25519.`;
  await logDelivery(deps, logEntry(endpoints.applicationId, 'interactions-ping', 'PING (bad signature)', problem ? 'refused' : 'accepted', second, { error: problem ?? null }));
  return problem;
}

/** Discord's check of an event webhooks URL: a signed PING (type 0) answered 204. */
async function checkEventEndpoint(deps: Deps, endpoints: AppEndpoints, url: string): Promise<string | undefined> {
  const sent = await sendSigned(deps, endpoints, url, eventPing(endpoints.applicationId), { timeoutMs: EVENT_TIMEOUT_MS });
  let problem: string | undefined;
  if (sent.failure !== null) problem = `The signed PING got no answer: ${sent.failure}.`;
  else if (sent.status !== 204) problem = `The signed PING was answered ${sent.status}, not 204.`;
  await logDelivery(deps, logEntry(endpoints.applicationId, 'event-ping', 'PING', problem ? 'refused' : 'accepted', sent, { error: problem ?? null }));
  return problem;
}

// --- Settings -----------------------------------------------------------------------------------

/** A change to an app's endpoints; absent fields stay as they are (Discord's PATCH semantics). */
export interface EndpointsPatch {
  /** null or '' removes it. */
  interactionsEndpointUrl?: string | null;
  /** null or '' removes it. */
  eventWebhooksUrl?: string | null;
  /** Discord's status: 1 disabled, 2 enabled (3 is the server's, not settable). */
  eventWebhooksStatus?: number;
  eventWebhooksTypes?: readonly string[];
}

/** The app `acting` may change the endpoints of: its owner's (or the operator's) from the portal, or the bot's own app. */
async function managedAppId(deps: Deps, actor: Actor, applicationId: string): Promise<string> {
  if (actor.kind === 'bot') {
    if (actor.applicationId !== applicationId) throw new AccessError(404, 10002, 'Unknown Application');
    return applicationId;
  }
  return (await getManagedApplication(deps, actor, applicationId)).id;
}

/**
 * Saves that check an endpoint URL, per person (a bot saving its own app's URLs counts for its
 * app): each one sends requests to the URL (two for an interactions endpoint, one for events), so
 * without a limit saving would be a cheap way to make Gatehouse send traffic anywhere.
 */
export const ENDPOINT_CHECKS_RULE = { limit: 5, windowMs: 60_000 } as const satisfies BucketRule;

/** Counts one save that checks a URL, or throws RateLimitedError (429, nothing sent) over ENDPOINT_CHECKS_RULE. */
async function throttleEndpointChecks(deps: Deps, actor: Actor, applicationId: string): Promise<void> {
  const key = actor.kind === 'person' ? `endpoint-checks:person:${actor.id}` : `endpoint-checks:app:${applicationId}`;
  const decision = await deps.buckets.take(key, ENDPOINT_CHECKS_RULE, deps.clock.now());
  if (decision.allowed) return;
  const seconds = Math.max(1, Math.ceil(decision.resetAfterMs / 1000));
  throw new RateLimitedError(decision.resetAfterMs, `An endpoint URL can be checked ${ENDPOINT_CHECKS_RULE.limit} times a minute (each check sends requests to it). Try again in ${seconds} seconds.`);
}

/**
 * Changes an app's interactions endpoint and event webhooks (the portal, `PATCH
 * /applications/@me`). A new interactions URL is kept only when it passes Discord's two checks,
 * an event URL when its PING is answered 204 (checked whenever events are switched on or the URL
 * changes); otherwise nothing changes and the refusal (50035, at the field) names the check that
 * failed. A save that sends a check counts against ENDPOINT_CHECKS_RULE (429 over it, nothing
 * sent or changed). Emits app.updated with what changed.
 */
export async function updateAppEndpoints(deps: Deps, acting: Acting<Actor>, applicationId: string, patch: EndpointsPatch): Promise<AppEndpoints> {
  const appId = await managedAppId(deps, acting.actor, applicationId);
  const current = await appEndpointsOf(deps, appId);
  const allowHttp = deps.config.outboundAllowPrivate;
  const blank = (v: string | null | undefined) => (v === undefined ? undefined : v === null || v.trim() === '' ? null : v.trim());

  const interactionsUrl = blank(patch.interactionsEndpointUrl);
  const eventUrl = blank(patch.eventWebhooksUrl);
  for (const [field, value] of [['interactions_endpoint_url', interactionsUrl], ['event_webhooks_url', eventUrl]] as const) {
    const problem = typeof value === 'string' ? endpointUrlProblem(value, allowHttp) : undefined;
    if (problem) throw invalidField([field], 'URL_TYPE_INVALID_URL', problem);
  }
  if (patch.eventWebhooksStatus !== undefined && patch.eventWebhooksStatus !== EventWebhooksStatus.DISABLED && patch.eventWebhooksStatus !== EventWebhooksStatus.ENABLED) {
    throw invalidField(['event_webhooks_status'], 'BASE_TYPE_CHOICES', 'Value must be one of (1, 2).');
  }
  const types = patch.eventWebhooksTypes ?? current.eventWebhooksTypes;
  const unknown = types.find((t) => !isAppEventType(t));
  if (unknown !== undefined) throw invalidField(['event_webhooks_types'], 'BASE_TYPE_CHOICES', `Unknown event type "${unknown.slice(0, 64)}": one of ${APP_EVENT_TYPES.join(', ')}.`);

  const nextEventUrl = eventUrl === undefined ? current.eventWebhooksUrl : eventUrl;
  const wasEnabled = current.eventWebhooksStatus === EventWebhooksStatus.ENABLED;
  const enable = patch.eventWebhooksStatus === undefined ? wasEnabled : patch.eventWebhooksStatus === EventWebhooksStatus.ENABLED;
  if (enable && nextEventUrl === null) throw invalidField(['event_webhooks_status'], 'APPLICATION_EVENT_WEBHOOKS_URL_REQUIRED', 'Events can be turned on only with an event webhooks URL.');
  // A server-disabled endpoint stays so until its owner saves it again (which checks it again).
  const nextStatus: EventWebhooksStatus = enable ? EventWebhooksStatus.ENABLED : patch.eventWebhooksStatus === undefined && eventUrl === undefined ? current.eventWebhooksStatus : EventWebhooksStatus.DISABLED;

  const checkInteractions = typeof interactionsUrl === 'string' && interactionsUrl !== current.interactionsEndpointUrl;
  const eventUrlChanged = nextEventUrl !== current.eventWebhooksUrl;
  const checkEvents = nextEventUrl !== null && enable && (eventUrlChanged || !wasEnabled);
  if (checkInteractions || checkEvents) await throttleEndpointChecks(deps, acting.actor, appId);

  if (checkInteractions) {
    const problem = await checkInteractionsEndpoint(deps, current, interactionsUrl);
    if (problem) throw invalidField(['interactions_endpoint_url'], 'APPLICATION_INTERACTIONS_ENDPOINT_URL_INVALID', `The interactions endpoint URL could not be verified. ${problem}`);
  }
  if (checkEvents) {
    const problem = await checkEventEndpoint(deps, current, nextEventUrl);
    if (problem) throw invalidField(['event_webhooks_url'], 'APPLICATION_EVENT_WEBHOOKS_URL_INVALID', `The event webhooks URL could not be verified. ${problem}`);
  }

  const changes: FieldChange[] = [];
  const nextInteractions = interactionsUrl === undefined ? current.interactionsEndpointUrl : interactionsUrl;
  if (nextInteractions !== current.interactionsEndpointUrl) changes.push({ key: 'interactions_endpoint_url', old: current.interactionsEndpointUrl, new: nextInteractions });
  if (eventUrlChanged) changes.push({ key: 'event_webhooks_url', old: current.eventWebhooksUrl, new: nextEventUrl });
  if (nextStatus !== current.eventWebhooksStatus) changes.push({ key: 'event_webhooks_status', old: current.eventWebhooksStatus, new: nextStatus });
  const typesText = JSON.stringify([...new Set(types)].sort());
  if (typesText !== JSON.stringify([...current.eventWebhooksTypes].sort())) changes.push({ key: 'event_webhooks_types', old: JSON.stringify(current.eventWebhooksTypes), new: typesText });
  if (changes.length === 0) return current;

  const now = deps.clock.now();
  await changing(deps, acting, async (trx, emit) => {
    if (nextInteractions !== current.interactionsEndpointUrl) await updateInteractionsEndpointUrl(trx, appId, nextInteractions, now);
    await updateEventWebhooks(trx, appId, { url: nextEventUrl, status: nextStatus, types: JSON.parse(typesText) as string[], disabledReason: nextStatus === EventWebhooksStatus.DISABLED_BY_SERVER ? current.eventWebhooksDisabledReason : null }, now);
    emit({ type: 'app.updated', applicationId: appId, changes });
  });
  return appEndpointsOf(deps, appId);
}

/** The portal's view of an app's endpoints and its delivery log (newest first, at most 100). */
export async function appEndpointsView(deps: Deps, actor: Actor, applicationId: string): Promise<{ endpoints: AppEndpoints; deliveries: Delivery[] }> {
  const appId = await managedAppId(deps, actor, applicationId);
  const [endpoints, deliveries] = await Promise.all([appEndpointsOf(deps, appId), listDeliveries(deps.db, appId, 100)]);
  return { endpoints, deliveries };
}

// --- Queuing app events (the recorder) ----------------------------------------------------------

/** The domain events app events are made of (issue #40 §3). */
const SOURCE_EVENTS = ['grant.created', 'bot.installed', 'user_install.created', 'grant.revoked', 'user_install.deleted'] as const satisfies readonly EventType[];

/**
 * The app events one change makes, by app: a consent (grant.created) is APPLICATION_AUTHORIZED,
 * with `integration_type` 0 and the server when it installed the bot there, 1 when it installed
 * the app for the person; an install without a consent in the same change (the code exchange of
 * an app that requires the code grant, a user install from the settings) is one too. Ending the
 * person's grants or their user install is APPLICATION_DEAUTHORIZED. One of each per person and
 * app per change.
 */
function appEventsOf(events: readonly DomainEvent[], acting: Acting<Who>): Array<{ applicationId: string; type: AppEventType; data: AppEventData }> {
  const out = new Map<string, { applicationId: string; type: AppEventType; data: AppEventData }>();
  const actorId = acting.actor.kind === 'person' ? acting.actor.id : undefined;
  const authorized = (applicationId: string, userId: string | undefined, patch: Partial<AppEventData>) => {
    if (userId === undefined) return;
    const key = `AUTH ${applicationId} ${userId}`;
    const before = out.get(key)?.data ?? { userId };
    out.set(key, { applicationId, type: 'APPLICATION_AUTHORIZED', data: { ...before, ...patch, scopes: patch.scopes ?? before.scopes ?? [] } });
  };
  for (const event of events) {
    switch (event.type) {
      case 'grant.created':
        authorized(event.applicationId, event.userId, { scopes: event.scopes.split(' ').filter(Boolean) });
        break;
      case 'bot.installed': {
        const key = `AUTH ${event.applicationId} ${actorId}`;
        const scopes = out.get(key)?.data.scopes ?? event.scopes.split(' ').filter(Boolean);
        authorized(event.applicationId, actorId, { integrationType: 0, serverId: event.serverId, scopes });
        break;
      }
      case 'user_install.created': {
        const key = `AUTH ${event.applicationId} ${event.userId}`;
        const scopes = out.get(key)?.data.scopes ?? ['applications.commands'];
        authorized(event.applicationId, event.userId, { integrationType: 1, scopes });
        break;
      }
      case 'grant.revoked':
      case 'user_install.deleted':
        out.set(`DEAUTH ${event.applicationId} ${event.userId}`, { applicationId: event.applicationId, type: 'APPLICATION_DEAUTHORIZED', data: { userId: event.userId } });
        break;
      default:
        break;
    }
  }
  return [...out.values()];
}

const recording = new WeakSet<object>();

/**
 * Subscribes the app-event outbox to the domain events (issue #40 §1: "no event is lost"): the
 * app events a change makes are inserted in that change's own transaction, for the apps whose
 * event webhooks are on and subscribe to that type; the worker delivers them after the commit.
 * Called once per process by app.ts.
 */
export function recordAppEvents(deps: Pick<Deps, 'bus' | 'ids'>): void {
  if (recording.has(deps.bus)) return;
  recording.add(deps.bus);
  deps.bus.record(SOURCE_EVENTS, async (db: Writer, acting: Acting<Who>, events: readonly DomainEvent[]) => {
    const wanted = appEventsOf(events, acting);
    if (wanted.length === 0) return;
    const subscribed = await findEnabledEventEndpoints(db, [...new Set(wanted.map((w) => w.applicationId))]);
    const rows: NewAppEvent[] = [];
    for (const w of wanted) {
      const endpoints = subscribed.find((s) => s.applicationId === w.applicationId);
      if (!endpoints || !endpoints.eventWebhooksTypes.includes(w.type)) continue;
      rows.push({ id: deps.ids.next(), applicationId: w.applicationId, eventType: w.type, data: JSON.stringify(w.data), eventAt: acting.at });
    }
    await insertAppEvents(db, rows, acting.at);
  });
}

// --- Delivering (the worker) --------------------------------------------------------------------

/** How long a claimed event is this worker's: much longer than its 10 s request, which starts when it is claimed. */
const EVENT_LEASE_MS = 2 * 60_000;
/** Events one worker has in flight at most. */
const EVENT_WINDOW = 50;
/** Free places in the window that make the worker claim again: one claim per half window, not one per finished event. */
const EVENT_REFILL_AT = 25;

export interface DeliveryReport {
  delivered: number;
  retrying: number;
  dropped: number;
}

/**
 * What the events of one claim read once between them rather than once each (docs/performance.md,
 * "Interactions and app events"): the apps' endpoints, the people and the servers. As fresh as a
 * per-event read was, since a claim's events were all read at once when it started them.
 */
interface ClaimReads {
  endpoints: Map<string, Promise<AppEndpoints | undefined>>;
  people: Map<string, Promise<Person | undefined>>;
  servers: Map<string, Promise<Server | undefined>>;
}

function newClaimReads(): ClaimReads {
  return { endpoints: new Map(), people: new Map(), servers: new Map() };
}

function readOnce<V>(reads: Map<string, Promise<V>>, key: string, read: () => Promise<V>): Promise<V> {
  let value = reads.get(key);
  if (value === undefined) reads.set(key, (value = read()));
  return value;
}

/** The `data` of Discord's event: the user and scopes, and for a server install the guild. */
async function eventData(deps: Deps, data: AppEventData, type: AppEventType, reads: ClaimReads): Promise<Record<string, unknown>> {
  const person = await readOnce(reads.people, data.userId, () => getPersonById(deps, data.userId));
  const user = person ? presentUser(person) : { id: data.userId };
  if (type === 'APPLICATION_DEAUTHORIZED') return { user };
  const serverId = data.serverId;
  const server = serverId === undefined ? undefined : await readOnce(reads.servers, serverId, () => getServer(deps, serverId));
  return {
    ...(data.integrationType === undefined ? {} : { integration_type: data.integrationType }),
    user,
    scopes: data.scopes ?? [],
    ...(server ? { guild: presentGuild(server) } : {}),
  };
}

/**
 * What deliveries leave to write in one go (docs/performance.md, "Interactions and app events"):
 * the log entries, and the delivered events' rows. Written before each claim and at the end of a
 * round; a crash before that only re-sends delivered events once their leases lapse (at least
 * once, as a crash between a send and its delete always could).
 */
interface PendingWrites {
  log: Delivery[];
  delivered: string[];
}

function queueLog(deps: Deps, pending: PendingWrites, entry: Omit<Delivery, 'id' | 'createdAt'>): void {
  pending.log.push({ ...entry, id: deps.ids.next(), createdAt: deps.clock.now() });
}

async function writePending(deps: Deps, holder: string, pending: PendingWrites): Promise<void> {
  const { log, delivered } = pending;
  pending.log = [];
  pending.delivered = [];
  await deleteClaimedAppEvents(deps.db, delivered, holder);
  await insertDeliveries(deps.db, log);
}

async function deliverOne(deps: Deps, holder: string, event: ClaimedAppEvent, report: DeliveryReport, pending: PendingWrites, reads: ClaimReads): Promise<void> {
  const endpoints = await readOnce(reads.endpoints, event.applicationId, () => findAppEndpoints(deps.db, event.applicationId));
  const url = endpoints?.eventWebhooksUrl ?? null;
  if (!endpoints || url === null || endpoints.eventWebhooksStatus !== EventWebhooksStatus.ENABLED || !endpoints.eventWebhooksTypes.includes(event.eventType)) {
    // Turned off (by its owner, or by the server) since the event was queued: nothing is sent.
    if (await deleteClaimedAppEvent(deps.db, event.id, holder)) {
      queueLog(deps, pending, { applicationId: event.applicationId, kind: 'event', eventType: event.eventType, outcome: 'dropped', httpStatus: null, latencyMs: null, nextRetryAt: null, error: 'event webhooks were turned off for this event before it was sent' });
      report.dropped += 1;
    }
    return;
  }
  const type = event.eventType as AppEventType;
  const body = eventBody(event.applicationId, type, event.eventAt, await eventData(deps, JSON.parse(event.data) as AppEventData, type, reads));
  const sent = await sendSigned(deps, endpoints, url, body, { timeoutMs: EVENT_TIMEOUT_MS });
  const failure = sent.failure ?? (isEventAcknowledged(sent.status ?? 0) ? null : `it answered ${sent.status}, not 204`);
  if (failure === null) {
    pending.delivered.push(event.id);
    queueLog(deps, pending, logEntry(event.applicationId, 'event', type, 'delivered', sent));
    report.delivered += 1;
    return;
  }
  const now = deps.clock.now();
  const next = nextEventAttempt(event.createdAt, event.attempts, now);
  if (next !== undefined) {
    await rescheduleAppEvent(deps.db, event.id, holder, next, failure);
    queueLog(deps, pending, logEntry(event.applicationId, 'event', type, 'retrying', sent, { error: failure, nextRetryAt: next }));
    report.retrying += 1;
    return;
  }
  // Issue #40 §1: retried for its whole window, then dropped and recorded; an endpoint that kept
  // failing that long is turned off, and its owner reads why in the portal.
  if (!(await deleteClaimedAppEvent(deps.db, event.id, holder))) return;
  queueLog(deps, pending, logEntry(event.applicationId, 'event', type, 'dropped', sent, { error: `given up after ${event.attempts} attempts: ${failure}` }));
  report.dropped += 1;
  const reason = `Every attempt to deliver a ${type} event for 15 minutes failed (the last: ${failure}), so ${deps.config.serviceName} turned event webhooks off. Save the settings again to turn them back on.`;
  if (await disableFailingEventWebhooks(deps.db, event.applicationId, url, reason, now)) {
    deps.logger.warn({ applicationId: event.applicationId, reason: failure }, 'app event webhooks disabled: deliveries kept failing');
    for (const dropped of await deleteQueuedAppEventsOf(deps.db, event.applicationId)) {
      queueLog(deps, pending, { applicationId: event.applicationId, kind: 'event', eventType: dropped, outcome: 'dropped', httpStatus: null, latencyMs: null, nextRetryAt: null, error: 'event webhooks were turned off' });
      report.dropped += 1;
    }
  }
}

/**
 * Delivers the app events that are due until none is left: up to EVENT_WINDOW events in flight,
 * the next ones claimed as earlier ones finish (a slow answer holds only its own place, not a
 * whole batch). `holder` names this worker in the leases; with several instances each event is
 * claimed, and so sent, by one of them (storage/outbox.ts).
 */
export async function deliverAppEvents(deps: Deps, holder: string): Promise<DeliveryReport> {
  const report: DeliveryReport = { delivered: 0, retrying: 0, dropped: 0 };
  const pending: PendingWrites = { log: [], delivered: [] };
  const inFlight = new Set<Promise<void>>();
  let drained = false;
  while (!drained || inFlight.size > 0) {
    const room = EVENT_WINDOW - inFlight.size;
    if (!drained && room >= EVENT_REFILL_AT) {
      await writePending(deps, holder, pending);
      const now = deps.clock.now();
      const batch = await claimDueAppEvents(deps.db, holder, now, now + EVENT_LEASE_MS, room);
      if (batch.length < room) drained = true;
      const reads = newClaimReads();
      for (const event of batch) {
        const delivery: Promise<void> = deliverOne(deps, holder, event, report, pending, reads)
          .catch((error: unknown) => {
            // A database fault: the lease lapses and a later round takes the event again.
            deps.logger.warn({ err: error, appEventId: event.id }, 'app event delivery failed; it will be retried');
          })
          .finally(() => inFlight.delete(delivery));
        inFlight.add(delivery);
      }
      continue;
    }
    await Promise.race(inFlight);
  }
  await writePending(deps, holder, pending);
  return report;
}

export interface AppEventWorker {
  /** Runs a round now (or after the running one). */
  deliverNow(): Promise<DeliveryReport>;
  stop(): Promise<void>;
}

/**
 * The longest the worker sleeps between rounds: the fallback that finds events this instance was
 * not told of (queued by another process, such as the command line, or left under a crashed
 * instance's lease). Retries need no poll: the worker sleeps until the next one is due.
 */
export const APP_EVENT_FALLBACK_POLL_MS = 30_000;

/**
 * Starts this instance's app-event worker: a round as soon as a change that queued app events
 * commits (a listener on the same domain events, which hears them after the commit; the instance
 * that made the change sends its events), then a sleep until the next queued event is due (a
 * retry's time, read from the outbox), at most APP_EVENT_FALLBACK_POLL_MS.
 */
export function startAppEventWorker(deps: Deps, holder: string, options: { intervalMs?: number; firstRoundAfterMs?: number } = {}): AppEventWorker {
  const worker = startOutboxWorker(() => deliverAppEvents(deps, holder), {
    intervalMs: options.intervalMs ?? APP_EVENT_FALLBACK_POLL_MS,
    onError: (error) => deps.logger.warn({ err: error }, 'app event round failed; next round retries'),
    schedule: { now: () => deps.clock.now(), nextDueAt: () => nextDueAt(deps.db, 'app_event_outbox') },
    ...(options.firstRoundAfterMs === undefined ? {} : { firstRoundAfterMs: options.firstRoundAfterMs }),
  });
  const stopListening = deps.bus.on(SOURCE_EVENTS, () => worker.poke());
  return {
    deliverNow: worker.runNow,
    async stop() {
      stopListening();
      await worker.stop();
    },
  };
}

import type { Actor } from './actor.js';

/**
 * Who changes something, from where, in which request and when: built once per request (pages,
 * API, bot auth: http/acting.ts) or by the CLI (cliActing), and the parameter after `deps` of every
 * service function that changes state (issue #37 §1). The service decides from `actor` whether it
 * may; the rest is what the domain events it emits (events/domain-events.ts) and the audit log
 * record: the address and request id say where a change came from, `reason` is the bot's
 * `X-Audit-Log-Reason`.
 *
 * There is no default: a call without one does not compile (test/unit/lint-rules.test.ts refuses a
 * default value for an `Acting` or `Actor` parameter).
 */
export interface Acting<A extends Who = Actor> {
  readonly actor: A;
  /** The client's address as the server sees it (behind a proxy: the forwarded one); null from the CLI. */
  readonly address: string | null;
  /** The request's id (`x-request-id` or generated), as in the access log; null from the CLI. */
  readonly requestId: string | null;
  /** When the change was asked for: milliseconds since the epoch, by the injected clock. */
  readonly at: number;
  /** Why, when the caller says (a bot's `X-Audit-Log-Reason`, at most 512 characters). */
  readonly reason: string | null;
}

/** A webhook URL's holder: acts only on its own webhook and its channel (SPEC §4). */
export interface WebhookActor {
  kind: 'webhook';
  /** The webhook's id. */
  id: string;
}

/** Nobody signed in yet: a sign-in attempt, a client authenticating at the token endpoint. */
export interface Anonymous {
  kind: 'anonymous';
}

/** Every kind of acting party. Only an `Actor` holds rights in servers; services that need rights take `Acting<Actor>`. */
export type Who = Actor | WebhookActor | Anonymous;

export const ANONYMOUS: Anonymous = Object.freeze({ kind: 'anonymous' });

/** Discord's limit on `X-Audit-Log-Reason` (after percent-decoding). */
export const AUDIT_REASON_MAX_LENGTH = 512;

/** The same request acting as someone else (a sign-in that has just identified its person, say). */
export function actingAs<A extends Who>(acting: Acting<Who>, actor: A): Acting<A> {
  return { actor, address: acting.address, requestId: acting.requestId, at: acting.at, reason: acting.reason };
}

/** The CLI's acting context: the operator, on the machine itself, now. */
export function cliActing(clock: { now(): number }, reason: string | null = null): Acting<Actor> {
  return { actor: { kind: 'operator' }, address: null, requestId: null, at: clock.now(), reason };
}

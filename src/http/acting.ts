import type { FastifyRequest } from 'fastify';
import { ANONYMOUS, AUDIT_REASON_MAX_LENGTH, type Acting, type Anonymous, type Who } from '../core/acting.js';
import type { Actor, PersonActor } from '../core/actor.js';
import { hasForbiddenControl } from '../core/text.js';

/**
 * The acting context of a request (issue #37 §1): who (the route's authentication decides), from
 * which address, in which request, when, and why (`X-Audit-Log-Reason`). Routes build it once and
 * pass it to the services they call; nothing below the routes reads the request.
 */
export function requestActing<A extends Who>(request: FastifyRequest, clock: { now(): number }, actor: A): Acting<A> {
  return { actor, address: request.ip, requestId: request.id, at: clock.now(), reason: auditReason(request.headers['x-audit-log-reason']) };
}

/** The signed-in person of a page route (`signedInPages`) acting. */
export function personActing(request: FastifyRequest & { readonly signedInViewer: { id: string } }, clock: { now(): number }): Acting<PersonActor> {
  return requestActing(request, clock, { kind: 'person', id: request.signedInViewer.id });
}

/** Nobody signed in (sign-in, sign-up, the token endpoint before the client is known). */
export function anonymousActing(request: FastifyRequest, clock: { now(): number }): Acting<Anonymous> {
  return requestActing(request, clock, ANONYMOUS);
}

/** A bot or person actor the route's authentication found. */
export function actorActing(request: FastifyRequest, clock: { now(): number }, actor: Actor): Acting<Actor> {
  return requestActing(request, clock, actor);
}

/**
 * Discord's `X-Audit-Log-Reason`: percent-encoded UTF-8 (discord.js encodes it so), at most 512
 * characters kept. A value that does not decode is kept as sent; control characters are dropped
 * rather than refusing the change the reason explains.
 */
export function auditReason(header: string | string[] | undefined): string | null {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw.trim() === '') return null;
  let text = raw;
  try {
    text = decodeURIComponent(raw);
  } catch {
    // Not percent-encoding: the header's own text.
  }
  if (hasForbiddenControl(text)) text = [...text].filter((c) => !hasForbiddenControl(c)).join('');
  const trimmed = [...text.trim()].slice(0, AUDIT_REASON_MAX_LENGTH).join('');
  return trimmed === '' ? null : trimmed;
}

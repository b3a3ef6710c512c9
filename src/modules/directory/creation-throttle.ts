import { DAY, HOUR } from '../../core/clock.js';
import { RateLimitedError } from '../../core/errors.js';
import type { BucketRule, BucketStore } from '../../rate-limit/bucket.js';
import { addressBlock } from '../accounts/sign-in-throttle.js';

/**
 * Issue #36 §4: creating servers and sending invitations are limited per person and per address
 * (IPv6 by /64, as sign-ups), in the shared bucket store, so the limits hold across instances
 * when REDIS_URL is set. Each window starts with its first action (rate-limit/bucket.ts).
 *  - Servers: 10 per person and 30 per address a day. A person sets up a handful of servers at
 *    most on a busy day; each costs rows (roles, a channel, a membership) and shows in lists, and
 *    accounts are cheap (10 sign-ups an hour per address), hence the address limit, with room for
 *    a classroom or office behind one address.
 *  - Invitations (by username, and invite links: both invite someone): 50 per person and 150 per
 *    address an hour. An invitation by username lands on someone's home page unasked, so this is
 *    the spam limit; 50 an hour still lets a moderator invite a whole club in one sitting.
 * Only actions from the web count (the service is given the client's address); the operator's
 * CLI is not limited. A refusal is a RateLimitedError: 429 with Retry-After, as a page or, on the
 * API, Discord's 429 body (http/error-handler.ts).
 */
export const SERVER_PERSON_RULE: BucketRule = { limit: 10, windowMs: DAY };
export const SERVER_ADDRESS_RULE: BucketRule = { limit: 30, windowMs: DAY };
export const INVITATION_PERSON_RULE: BucketRule = { limit: 50, windowMs: HOUR };
export const INVITATION_ADDRESS_RULE: BucketRule = { limit: 150, windowMs: HOUR };

export type Throttled = 'servers' | 'invitations';

const RULES: Record<Throttled, { person: BucketRule; address: BucketRule; message: string }> = {
  servers: { person: SERVER_PERSON_RULE, address: SERVER_ADDRESS_RULE, message: 'You have created as many servers as allowed for now.' },
  invitations: { person: INVITATION_PERSON_RULE, address: INVITATION_ADDRESS_RULE, message: 'You have sent as many invitations as allowed for now.' },
};

/**
 * Counts one `what` by this person from this address, or throws RateLimitedError (nothing
 * counted) when either bucket is full. Both are peeked first, so a refusal by one does not use up
 * the other; each take is atomic, so parallel requests cannot overshoot a limit.
 */
export async function throttleCreation(buckets: BucketStore, now: number, what: Throttled, personId: string, address: string): Promise<void> {
  const rules = RULES[what];
  const personKey = `${what}:person:${personId}`;
  const addressKey = `${what}:address:${addressBlock(address)}`;
  const [byPerson, byAddress] = await Promise.all([buckets.peek(personKey, rules.person, now), buckets.peek(addressKey, rules.address, now)]);
  for (const decision of [byPerson, byAddress]) if (!decision.allowed) throw new RateLimitedError(decision.resetAfterMs, rules.message);
  for (const [key, rule] of [
    [personKey, rules.person],
    [addressKey, rules.address],
  ] as const) {
    const taken = await buckets.take(key, rule, now);
    if (!taken.allowed) throw new RateLimitedError(taken.resetAfterMs, rules.message);
  }
}

import { ANONYMOUS, type Acting, type Who } from '../../src/core/acting.js';
import { OPERATOR, person, type Actor, type PersonActor } from '../../src/core/actor.js';
import { MANUAL_CLOCK_START } from '../../src/core/clock.js';

export { ANONYMOUS, OPERATOR };

/**
 * An acting context for tests that call services directly: `actor`, no address or request, at
 * `at` (default: where the test apps' manual clock starts, so the audit rows it leaves are not
 * already past the retention the maintenance job purges).
 */
export function actingOf<A extends Who>(actor: A, at = MANUAL_CLOCK_START): Acting<A> {
  return { actor, address: null, requestId: null, at, reason: null };
}

/** The person with this id acting (their own account's changes, a session of theirs). */
export function personActingOf(id: string, at = MANUAL_CLOCK_START): Acting<PersonActor> {
  return actingOf(person(id), at);
}

/** The operator acting (what the CLI does). */
export function operatorActing(at = MANUAL_CLOCK_START): Acting<Actor> {
  return actingOf(OPERATOR, at);
}

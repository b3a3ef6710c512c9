import { ANONYMOUS, type Acting, type Who } from '../../src/core/acting.js';
import { OPERATOR, person, type Actor, type PersonActor } from '../../src/core/actor.js';

export { ANONYMOUS, OPERATOR };

/** An acting context for tests that call services directly: `actor`, no address or request, at `at` (default 0). */
export function actingOf<A extends Who>(actor: A, at = 0): Acting<A> {
  return { actor, address: null, requestId: null, at, reason: null };
}

/** The person with this id acting (their own account's changes, a session of theirs). */
export function personActingOf(id: string, at = 0): Acting<PersonActor> {
  return actingOf(person(id), at);
}

/** The operator acting (what the CLI does). */
export function operatorActing(at = 0): Acting<Actor> {
  return actingOf(OPERATOR, at);
}

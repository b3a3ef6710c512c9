import type { Acting } from '../../core/acting.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { requireOperator } from '../directory/operators.service.js';
import { findPersonForOperator } from './people-admin.service.js';
import { deleteSessionsOfUser } from './sessions.repository.js';

/**
 * Ends every session of a person, for the operator (issue #39: the admin pages' "End sessions"):
 * they are signed out everywhere, and their open live views re-check at once and end (issue #21
 * §5, access.changed). Unlike disabling, they may sign in again, and their apps' grants stay.
 * Unknown people are a 404 10013; anyone but the operator a 403 50013.
 */
export async function endSessionsByOperator(deps: Deps, acting: Acting, personId: string): Promise<{ ended: number }> {
  await requireOperator(deps, acting.actor);
  const person = await findPersonForOperator(deps, { id: personId });
  const ended = await changing(deps, acting, async (trx, emit) => {
    const count = await deleteSessionsOfUser(trx, person.id);
    if (count > 0) {
      emit({ type: 'session.ended', userId: person.id, why: 'ended-by-operator' });
      emit({ type: 'access.changed', topicId: person.id });
    }
    return count;
  });
  return { ended };
}

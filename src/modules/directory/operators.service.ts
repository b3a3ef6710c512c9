import { ApiError } from '../../core/errors.js';
import type { Actor } from '../../core/actor.js';
import type { Deps } from '../../deps.js';
import { getPersonById } from './people.service.js';

/**
 * Whether the actor may act as the operator (issue #39): the CLI (`gatehouse …`, the operator
 * actor), or a person marked as an instance administrator whose account is not disabled.
 */
export async function isOperator(deps: Deps, actor: Actor): Promise<boolean> {
  if (actor.kind === 'operator') return true;
  if (actor.kind !== 'person') return false;
  const person = await getPersonById(deps, actor.id);
  return person?.admin === true && person.disabledAt === null;
}

/** isOperator, or 403 50013 (DESIGN §1's code for a missing right). */
export async function requireOperator(deps: Deps, actor: Actor): Promise<void> {
  if (!(await isOperator(deps, actor))) throw new ApiError(403, 50013, 'Only the operator of this service can do this.');
}

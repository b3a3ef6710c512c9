import { ApiError, ApiErrors, invalidField } from '../../core/errors.js';
import type { Actor } from '../../core/actor.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import type { Person } from './people.js';
import { getPersonById, getPersonByUsername } from './people.service.js';

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

/** What the operator's lists (`apps list`, `servers list`, the admin pages) are asked for. */
export interface OperatorPageQuery {
  /** An owner's username (a leading @ allowed); unknown → 404 Unknown User. */
  owner?: string | undefined;
  /** The id the previous page ended with. */
  after?: string | undefined;
  limit: number;
}

/**
 * One page of an operator's list, oldest first: the owner filter resolved, `after` checked (a
 * bad one is 50035 with `afterMessage`), `limit` clamped to 1–`max`, and each item beside its
 * owner, every owner read once. `read` returns up to `limit + 1` rows; the extra one says a next
 * page exists.
 */
export async function operatorPage<T extends { id: string; ownerId: string }>(
  deps: Deps,
  query: OperatorPageQuery,
  rules: { max: number; afterMessage: string },
  read: (filter: { ownerId: string | undefined; after: string | undefined; limit: number }) => Promise<T[]>,
): Promise<{ items: Array<{ item: T; owner: Person | undefined }>; next: string | undefined }> {
  let ownerId: string | undefined;
  if (query.owner !== undefined) {
    const owner = await getPersonByUsername(deps, query.owner.trim().replace(/^@/, ''));
    if (!owner) throw ApiErrors.unknownUser();
    ownerId = owner.id;
  }
  if (query.after !== undefined && !isSnowflake(query.after)) throw invalidField(['after'], 'BASE_TYPE_INVALID', rules.afterMessage);
  const limit = Math.min(Math.max(Math.trunc(query.limit), 1), rules.max);
  const rows = await read({ ownerId, after: query.after, limit });
  const page = rows.slice(0, limit);
  const owners = new Map<string, Person | undefined>();
  for (const row of page) if (!owners.has(row.ownerId)) owners.set(row.ownerId, await getPersonById(deps, row.ownerId));
  return { items: page.map((item) => ({ item, owner: owners.get(item.ownerId) })), next: rows.length > limit ? page[page.length - 1]?.id : undefined };
}

import type { Actor } from '../../core/actor.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { requireOperator } from './operators.service.js';
import type { Person } from './people.js';
import { getPersonById, getPersonByUsername } from './people.service.js';
import type { Server, ServerContents } from './servers.js';
import { countServerContents, findServer, listServersPage } from './servers.repository.js';

/**
 * The operator's reads of servers (issue #39; docs/operations.md "Apps and servers"): the paged
 * list and one server with what deleting it removes. Deleting is servers.service.ts deleteServer
 * and transferring server-transfer.service.ts transferServer, which both take the operator.
 */

/** The largest page the list returns; the CLI's default. */
export const SERVERS_PAGE_MAX = 100;

export interface AdministeredServer {
  server: Server;
  owner: Person | undefined;
}

export interface ServersPage {
  servers: AdministeredServer[];
  /** The id to pass as `after` for the next page; undefined on the last. */
  next: string | undefined;
}

/** Servers oldest first, `limit` (1–100) a page, optionally one owner's (a username; unknown → 404 Unknown User). */
export async function listServers(deps: Deps, actor: Actor, query: { owner?: string | undefined; after?: string | undefined; limit: number }): Promise<ServersPage> {
  await requireOperator(deps, actor);
  let ownerId: string | undefined;
  if (query.owner !== undefined) {
    const owner = await getPersonByUsername(deps, query.owner.trim().replace(/^@/, ''));
    if (!owner) throw ApiErrors.unknownUser();
    ownerId = owner.id;
  }
  if (query.after !== undefined && !isSnowflake(query.after)) throw invalidField(['after'], 'BASE_TYPE_INVALID', 'Must be a server id.');
  const limit = Math.min(Math.max(Math.trunc(query.limit), 1), SERVERS_PAGE_MAX);
  const rows = await listServersPage(deps.db, { ownerId, after: query.after, limit });
  const page = rows.slice(0, limit);
  const owners = new Map<string, Person | undefined>();
  for (const server of page) if (!owners.has(server.ownerId)) owners.set(server.ownerId, await getPersonById(deps, server.ownerId));
  return { servers: page.map((server) => ({ server, owner: owners.get(server.ownerId) })), next: rows.length > limit ? page[page.length - 1]?.id : undefined };
}

/** One server with its owner and what deleting it removes (`servers show`, the confirmation of `servers delete`); 10004 when unknown. */
export async function showServer(deps: Deps, actor: Actor, serverId: string): Promise<AdministeredServer & { contents: ServerContents }> {
  await requireOperator(deps, actor);
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) throw ApiErrors.unknownServer();
  const [owner, contents] = await Promise.all([getPersonById(deps, server.ownerId), countServerContents(deps.db, server.id)]);
  return { server, owner, contents };
}

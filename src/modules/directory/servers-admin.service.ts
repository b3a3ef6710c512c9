import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Deps } from '../../deps.js';
import { operatorPage, requireOperator, type OperatorPageQuery } from './operators.service.js';
import type { Person } from './people.js';
import { getPersonById } from './people.service.js';
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
export async function listServers(deps: Deps, actor: Actor, query: OperatorPageQuery): Promise<ServersPage> {
  await requireOperator(deps, actor);
  const { items, next } = await operatorPage(deps, query, { max: SERVERS_PAGE_MAX, afterMessage: 'Must be a server id.' }, (filter) => listServersPage(deps.db, filter));
  return { servers: items.map(({ item, owner }) => ({ server: item, owner })), next };
}

/** One server with its owner and what deleting it removes (`servers show`, the confirmation of `servers delete`); 10004 when unknown. */
export async function showServer(deps: Deps, actor: Actor, serverId: string): Promise<AdministeredServer & { contents: ServerContents }> {
  await requireOperator(deps, actor);
  const server = isSnowflake(serverId) ? await findServer(deps.db, serverId) : undefined;
  if (!server) throw ApiErrors.unknownServer();
  const [owner, contents] = await Promise.all([getPersonById(deps, server.ownerId), countServerContents(deps.db, server.id)]);
  return { server, owner, contents };
}

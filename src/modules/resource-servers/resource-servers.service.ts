import type { Acting } from '../../core/acting.js';
import type { Actor } from '../../core/actor.js';
import { ApiErrors, invalidField } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { isUniqueViolation } from '../../storage/types.js';
import { getManagedApplication } from '../applications/applications.service.js';
import { deleteResourceServer, findResourceServerById, findResourceServerByIdentifier, insertResourceServer, listResourceServersOf } from './resource-servers.repository.js';
import { canonicalResource, checkDelegatedScopes, checkIdentifier, checkScopes, RESOURCE_SERVERS_PER_APP_MAX, type ResourceServer } from './resource-servers.js';

export type { ResourceServer } from './resource-servers.js';

/** What an app's owner (or the operator) declares: the identifier and the scopes with their consent-screen lines. */
export interface NewResourceServer {
  identifier: string;
  scopes: readonly string[];
  scopeDescriptions: readonly string[];
  /** RFC 9068 JWT access tokens instead of opaque ones. */
  jwtAccessTokens?: boolean;
  /** RFC 8693 (issue #41): Gatehouse scopes it may use for the person through token exchange. */
  delegatedScopes?: readonly string[];
}

/**
 * Declares an API `appId` serves (issue #41 §1): a unique identifier (RFC 8707) and its scopes.
 * Problems are one 50035 on `identifier` or `scopes`; somebody else's app or none is 404 10002.
 * Records resource_server.added.
 */
export async function addResourceServer(deps: Deps, acting: Acting, appId: string, input: NewResourceServer): Promise<ResourceServer> {
  const app = await getManagedApplication(deps, acting.actor, appId);
  const identifier = checkIdentifier(input.identifier);
  if (!identifier.ok) throw invalidField(['identifier'], 'RESOURCE_IDENTIFIER_INVALID', identifier.reason);
  const scopes = checkScopes(input.scopes, input.scopeDescriptions);
  if (!scopes.ok) throw invalidField(['scopes'], 'RESOURCE_SCOPES_INVALID', scopes.reason);
  const delegated = checkDelegatedScopes(input.delegatedScopes ?? []);
  if (!delegated.ok) throw invalidField(['delegated_scopes'], 'RESOURCE_DELEGATED_SCOPES_INVALID', delegated.reason);
  // Gatehouse's own API is addressed by the base URL (RFC 9728 protected-resource metadata).
  if (identifier.identifier === canonicalResource(deps.config.baseUrl)) throw invalidField(['identifier'], 'RESOURCE_IDENTIFIER_TAKEN', 'This identifier is Gatehouse’s own API.');
  const existing = await listResourceServersOf(deps.db, app.id);
  if (existing.length >= RESOURCE_SERVERS_PER_APP_MAX) throw invalidField(['identifier'], 'RESOURCE_SERVERS_LIMIT', `An application can serve at most ${RESOURCE_SERVERS_PER_APP_MAX} resource servers.`);
  const server: ResourceServer = { id: deps.ids.next(), applicationId: app.id, identifier: identifier.identifier, scopes: scopes.scopes, accessTokenFormat: input.jwtAccessTokens === true ? 'jwt' : 'opaque', delegatedScopes: delegated.scopes, createdAt: deps.clock.now() };
  try {
    await changing(deps, acting, async (trx, emit) => {
      await insertResourceServer(trx, server);
      emit({ type: 'resource_server.added', applicationId: app.id, resourceServerId: server.id, identifier: server.identifier, scopes: server.scopes.map((s) => s.name).join(' '), ...(server.delegatedScopes.length > 0 ? { delegatedScopes: server.delegatedScopes.join(' ') } : {}) });
    });
  } catch (error) {
    // The unique index decides under concurrency, not the read above.
    if (isUniqueViolation(error)) throw invalidField(['identifier'], 'RESOURCE_IDENTIFIER_TAKEN', 'Another resource server already has this identifier.');
    throw error;
  }
  return server;
}

/** The resource servers of `appId`, oldest first, for its owner or the operator (404 10002 otherwise). */
export async function listResourceServers(deps: Deps, actor: Actor, appId: string): Promise<ResourceServer[]> {
  const app = await getManagedApplication(deps, actor, appId);
  return listResourceServersOf(deps.db, app.id);
}

/**
 * Removes a resource server of `appId`, named by its id or its identifier. Its authorizations end
 * and every token for it stops working at once (ON DELETE CASCADE). An app that is not the
 * actor's → 404 10002; a resource server it does not have → 404 0. Records resource_server.removed.
 */
export async function removeResourceServer(deps: Deps, acting: Acting, appId: string, which: string): Promise<ResourceServer> {
  const app = await getManagedApplication(deps, acting.actor, appId);
  const canonical = canonicalResource(which);
  const server = (await listResourceServersOf(deps.db, app.id)).find((s) => s.id === which || s.identifier === which || s.identifier === canonical);
  if (!server) throw ApiErrors.notFound();
  await changing(deps, acting, async (trx, emit) => {
    if (!(await deleteResourceServer(trx, server.id))) throw ApiErrors.notFound();
    emit({ type: 'resource_server.removed', applicationId: app.id, resourceServerId: server.id, identifier: server.identifier });
  });
  return server;
}

/** What a `resource` parameter (RFC 8707) names. */
export type ResourceTarget = { kind: 'gatehouse' } | { kind: 'resource'; server: ResourceServer } | { kind: 'invalid'; description: string };

/**
 * The target of a `resource` parameter: Gatehouse's own API (absent, or its identifier, the base
 * URL: RFC 9728), a registered resource server, or invalid_target's reason (RFC 8707 §2).
 */
export async function resolveResource(deps: Deps, raw: string | undefined): Promise<ResourceTarget> {
  if (raw === undefined) return { kind: 'gatehouse' };
  const canonical = canonicalResource(raw);
  if (canonical === undefined) return { kind: 'invalid', description: 'resource must be an absolute http(s) URI without a fragment' };
  if (canonical === canonicalResource(deps.config.baseUrl)) return { kind: 'gatehouse' };
  const server = await findResourceServerByIdentifier(deps.db, canonical);
  return server ? { kind: 'resource', server } : { kind: 'invalid', description: 'resource is not a registered resource server' };
}

/** The resource server a grant or token is for (its format and identifier at issuance). */
export async function resourceServerById(deps: Deps, id: string): Promise<ResourceServer | undefined> {
  return findResourceServerById(deps.db, id);
}

import { describeScope } from '../../core/scopes.js';
import type { ResourceServer } from '../resource-servers/resource-servers.js';

/**
 * Delegation to a resource server (issue #41; RFC 8693 token exchange, grants/token-exchange.ts):
 * the Gatehouse scopes an API's app may use for the person who authorized a token for that API,
 * shown on the consent screen beneath the API's own scopes and recorded on the authorization.
 */

/** The consent screen's section for delegated scopes: who may act, and what, in the screen's usual words. */
export interface DelegatedConsent {
  /** The application serving the resource server: it is the one that exchanges tokens. */
  applicationName: string;
  scopes: { name: string; description: string }[];
}

/** The consent view's delegated section for `resource` (none when it delegates nothing), served by `applicationName`. */
export function delegatedView(resource: ResourceServer, applicationName: string | undefined): { delegated?: DelegatedConsent } {
  if (resource.delegatedScopes.length === 0) return {};
  return { delegated: { applicationName: applicationName ?? 'another application', scopes: resource.delegatedScopes.map((name) => ({ name, description: describeScope(name) })) } };
}

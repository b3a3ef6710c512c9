import { OAuthError } from '../../../core/errors.js';
import type { Deps } from '../../../deps.js';
import { resolveResource, type ResourceServer } from '../../resource-servers/resource-servers.service.js';

/**
 * RFC 8707 resource indicators at the token endpoint (issue #41 §1): the grants read `resource`
 * through these, so every grant refuses an unknown or mismatched one alike, with invalid_target.
 */

/** The API reference's line for the token endpoint's `resource` parameter. */
export const RESOURCE_PARAMETER = 'RFC 8707: the API the token is for (a registered resource server\'s identifier); without it, Gatehouse\'s own API';

/**
 * RFC 8707 §2.2: on a code or refresh token, `resource` may only repeat what the authorization
 * was for — the resource server `grantResource` (null: Gatehouse's own API). Anything else is
 * invalid_target, and nothing is consumed.
 */
export async function requireSameResource(deps: Deps, raw: string, grantResource: string | null): Promise<void> {
  const target = await resolveResource(deps, raw);
  if (target.kind === 'invalid') throw new OAuthError('invalid_target', target.description);
  const named = target.kind === 'resource' ? target.server.id : null;
  if (named !== grantResource) throw new OAuthError('invalid_target', 'resource is not the one this authorization was granted for');
}

/** The resource server `resource` names, undefined for Gatehouse's own API; invalid_target otherwise (RFC 8707 §2). */
export async function targetResource(deps: Deps, raw: string | undefined): Promise<ResourceServer | undefined> {
  const target = await resolveResource(deps, raw);
  if (target.kind === 'invalid') throw new OAuthError('invalid_target', target.description);
  return target.kind === 'resource' ? target.server : undefined;
}

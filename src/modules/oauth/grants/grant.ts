import type { Acting, Who } from '../../../core/acting.js';
import type { Deps } from '../../../deps.js';
import type { AuthenticatedClient } from '../client-auth.service.js';
import type { TokenResponse } from './issuance.js';

/** The token endpoint's form parameters as strings; an empty value is already absent (RFC 6749 §3.2). */
export type TokenParams = Readonly<Record<string, string | undefined>>;

/**
 * One grant type of the token endpoint (RFC 6749 §4, §6; issue #37 §3), registered in
 * registry.ts. The endpoint reads `grant_type`, authenticates the client (client-auth.service.ts)
 * and hands the rest to the grant; issuance.ts issues what the grant decides.
 */
export interface GrantType {
  /**
   * The form parameters the grant reads besides grant_type and client authentication, each with
   * its description for the API reference: the endpoint reads exactly these (and refuses each
   * one repeated), so a parameter not listed here never reaches `exchange`.
   */
  parameters: Readonly<Record<string, string>>;
  /**
   * Runs the grant for an authenticated client; throws an OAuthError to refuse. `acting` is the
   * token request's (nobody known: the client is no actor), for the events a grant records on a
   * refusal that ends an authorization (issue #37 §2); a successful exchange records nothing.
   */
  exchange(deps: Deps, acting: Acting<Who>, client: AuthenticatedClient, params: TokenParams): Promise<TokenResponse>;
}

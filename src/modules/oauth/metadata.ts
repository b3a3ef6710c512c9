import { supportedScopes } from '../../core/scopes.js';

/** Where the endpoints live, relative to {base_url} (SPEC §4, §9). */
export const AUTHORIZE_PATH = '/app/oauth2/authorize';
export const TOKEN_PATH = '/api/oauth2/token';
export const REVOKE_PATH = '/api/oauth2/token/revoke';
export const WELL_KNOWN_PATH = '/.well-known/oauth-authorization-server';
/** The human-readable API reference (http/openapi.routes.ts). */
export const SERVICE_DOCUMENTATION_PATH = '/api/docs';

/** RFC 8414 §2 authorization server metadata, as Gatehouse publishes it. */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint: string;
  response_types_supported: string[];
  response_modes_supported: string[];
  grant_types_supported: string[];
  scopes_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  revocation_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
  service_documentation: string;
}

/**
 * The metadata document (OAUTH-CHECKLIST H2, H3): issuer is the configured base URL exactly, and
 * every endpoint hangs off it. Claims with no values are left out (RFC 8414 §3.2).
 * `grantTypes` is the grant registry's list (grants/registry.ts GRANT_TYPES), passed in by the
 * routes: the grants import the OpenID Connect service, which imports this file.
 */
export function authorizationServerMetadata(baseUrl: string, grantTypes: readonly string[]): AuthorizationServerMetadata {
  const authMethods = ['client_secret_basic', 'client_secret_post', 'none'];
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}${AUTHORIZE_PATH}`,
    token_endpoint: `${baseUrl}${TOKEN_PATH}`,
    revocation_endpoint: `${baseUrl}${REVOKE_PATH}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...grantTypes],
    scopes_supported: supportedScopes(),
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${baseUrl}${SERVICE_DOCUMENTATION_PATH}`,
  };
}

/**
 * The paths the document is served at (RFC 8414 §3, H1): the well-known path, and, when the
 * issuer has a path component, the well-known segment inserted between host and that path
 * (`https://h/.well-known/oauth-authorization-server/p`).
 */
export function metadataPaths(baseUrl: string): string[] {
  const path = new URL(baseUrl).pathname.replace(/\/+$/, '');
  return path === '' ? [WELL_KNOWN_PATH] : [WELL_KNOWN_PATH, `${WELL_KNOWN_PATH}${path}`];
}

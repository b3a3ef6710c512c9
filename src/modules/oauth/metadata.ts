import { supportedScopes } from '../../core/scopes.js';

/** Where the endpoints live, relative to {base_url} (SPEC §4, §9). */
export const AUTHORIZE_PATH = '/app/oauth2/authorize';
export const TOKEN_PATH = '/api/oauth2/token';
export const REVOKE_PATH = '/api/oauth2/token/revoke';
/** RFC 7591 (issue #41 §3): dynamic client registration; RFC 7592's client URIs hang below it. */
export const REGISTER_PATH = '/api/oauth2/register';
/** RFC 7662 (issue #41 §1). */
export const INTROSPECT_PATH = '/api/oauth2/token/introspect';
/** RFC 8628 §3.1 (issue #41 §2): the device authorization endpoint. */
export const DEVICE_AUTHORIZATION_PATH = '/api/oauth2/device/authorize';
export const WELL_KNOWN_PATH = '/.well-known/oauth-authorization-server';
/** The signing keys of ID tokens and RFC 9068 JWT access tokens (oidc/oidc.routes.ts serves it). */
export const JWKS_PATH = '/.well-known/jwks.json';
/** The human-readable API reference (http/openapi.routes.ts). */
export const SERVICE_DOCUMENTATION_PATH = '/api/docs';

/** RFC 9728 §3: where Gatehouse's own API describes itself as a protected resource. */
const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * RFC 9728 §3.1: the metadata URL of the resource `baseUrl` (Gatehouse's own API is identified by
 * the base URL): the well-known segment between host and any path.
 */
export function protectedResourceMetadataUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_PATH}${path}`;
}

/** RFC 9728 §2 protected-resource metadata of Gatehouse's own API (issue #41 §1). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
  resource_documentation: string;
}

/** The document: the resource is the base URL, its one authorization server the issuer (the same URL). */
export function protectedResourceMetadata(baseUrl: string, serviceName: string): ProtectedResourceMetadata {
  return {
    resource: baseUrl,
    authorization_servers: [baseUrl],
    scopes_supported: supportedScopes(),
    // RFC 6750 §2.1 only: tokens in a query or a form body are refused (RFC 9700 §4.3.2).
    bearer_methods_supported: ['header'],
    resource_name: `${serviceName} API`,
    resource_documentation: `${baseUrl}${SERVICE_DOCUMENTATION_PATH}`,
  };
}

/** RFC 8414 §2 authorization server metadata, as Gatehouse publishes it. */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint: string;
  introspection_endpoint: string;
  /** RFC 7591 §3 (issue #41 §3): only while GATEHOUSE_CLIENT_REGISTRATION is not off. */
  registration_endpoint?: string;
  device_authorization_endpoint: string;
  jwks_uri: string;
  response_types_supported: string[];
  response_modes_supported: string[];
  grant_types_supported: string[];
  scopes_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  revocation_endpoint_auth_methods_supported: string[];
  introspection_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
  client_id_metadata_document_supported?: boolean;
  service_documentation: string;
}

/**
 * The metadata document (OAUTH-CHECKLIST H2, H3): issuer is the configured base URL exactly, and
 * every endpoint hangs off it. Claims with no values are left out (RFC 8414 §3.2).
 * `grantTypes` is the grant registry's list (grants/registry.ts GRANT_TYPES), passed in by the
 * routes: the grants import the OpenID Connect service, which imports this file.
 */
export function authorizationServerMetadata(baseUrl: string, grantTypes: readonly string[], registration = false, clientIdMetadata = false): AuthorizationServerMetadata {
  const authMethods = ['client_secret_basic', 'client_secret_post', 'none'];
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}${AUTHORIZE_PATH}`,
    token_endpoint: `${baseUrl}${TOKEN_PATH}`,
    revocation_endpoint: `${baseUrl}${REVOKE_PATH}`,
    introspection_endpoint: `${baseUrl}${INTROSPECT_PATH}`,
    ...(registration ? { registration_endpoint: `${baseUrl}${REGISTER_PATH}` } : {}),
    // RFC 8628 §4.
    device_authorization_endpoint: `${baseUrl}${DEVICE_AUTHORIZATION_PATH}`,
    // RFC 8414 §2: where the keys are. A resource server reading only this document (the MCP
    // SDK's discovery does) verifies RFC 9068 JWT access tokens with them.
    jwks_uri: `${baseUrl}${JWKS_PATH}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...grantTypes],
    scopes_supported: supportedScopes(),
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    // RFC 7662 §2.1: introspection is for authenticated (confidential) clients only.
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    // draft-ietf-oauth-client-id-metadata-document §5 (issue #41 §3, GATEHOUSE_CLIENT_ID_METADATA).
    ...(clientIdMetadata ? { client_id_metadata_document_supported: true } : {}),
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

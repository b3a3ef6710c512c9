import { authorizationServerMetadata, type AuthorizationServerMetadata } from '../oauth/metadata.js';
import { SIGNING_ALGS } from './oidc-keys.service.js';

/** Where the OpenID Connect endpoints live, relative to {base_url} (issue #22). */
export const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const USERINFO_PATH = '/api/oauth2/userinfo';
export const END_SESSION_PATH = '/app/oauth2/logout';

/** The claims an ID token or UserInfo can carry (OpenID Connect Core §2, §5.1). */
/**
 * Issue #38 §4: the acr values this server can vouch for (docs/accounts.md §Second factors). Both
 * mean "signed in with two factors": amr includes mfa. A password alone meets none of them.
 */
export const ACR_VALUES_SUPPORTED = ['urn:gatehouse:mfa', 'http://schemas.openid.net/pape/policies/2007/06/multi-factor'];

export const CLAIMS_SUPPORTED = ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'amr', 'acr', 'name', 'preferred_username', 'picture', 'email', 'email_verified'];

/** The prompt values the authorization endpoint understands (Core §3.1.2.1). */
export const PROMPT_VALUES = ['none', 'login', 'consent', 'select_account'];

/** OpenID Connect Discovery 1.0 §3 provider metadata. */
export interface OpenIdConfiguration extends AuthorizationServerMetadata {
  userinfo_endpoint: string;
  end_session_endpoint: string;
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  claims_supported: string[];
  claim_types_supported: string[];
  prompt_values_supported: string[];
  acr_values_supported: string[];
  claims_parameter_supported: boolean;
  request_parameter_supported: boolean;
  request_uri_parameter_supported: boolean;
  require_request_uri_registration: boolean;
  frontchannel_logout_supported: boolean;
  backchannel_logout_supported: boolean;
}

/**
 * Discovery §3: the RFC 8414 document (same issuer, endpoints, scopes, response types and modes,
 * auth methods, PKCE methods, the grant registry's grant types — one source, so the two cannot
 * disagree) plus the OpenID fields.
 */
export function openIdConfiguration(baseUrl: string, grantTypes: readonly string[], registration = false, clientIdMetadata = false): OpenIdConfiguration {
  return {
    ...authorizationServerMetadata(baseUrl, grantTypes, registration, clientIdMetadata),
    userinfo_endpoint: `${baseUrl}${USERINFO_PATH}`,
    end_session_endpoint: `${baseUrl}${END_SESSION_PATH}`,
    // Core §8: the person's id is the same for every app (public subject identifiers).
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...SIGNING_ALGS],
    claims_supported: CLAIMS_SUPPORTED,
    // Issue #38 §4: the acr values a two-factor sign-in meets (ACR_VALUES_SUPPORTED above).
    acr_values_supported: ACR_VALUES_SUPPORTED,
    claim_types_supported: ['normal'],
    prompt_values_supported: PROMPT_VALUES,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    require_request_uri_registration: false,
    frontchannel_logout_supported: false,
    backchannel_logout_supported: false,
  };
}

/**
 * Discovery §4: `{issuer}/.well-known/openid-configuration` — appended to the issuer's path, so
 * for an issuer with a path the server also answers under that path (a proxy that strips the
 * prefix sends the plain one).
 */
export function discoveryPaths(baseUrl: string): string[] {
  const path = new URL(baseUrl).pathname.replace(/\/+$/, '');
  return path === '' ? [DISCOVERY_PATH] : [DISCOVERY_PATH, `${path}${DISCOVERY_PATH}`];
}

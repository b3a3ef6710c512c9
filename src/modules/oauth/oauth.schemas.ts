import { Type, type TOptional, type TString } from '@sinclair/typebox';
import { WebhookRecordBody } from '../webhooks/webhooks.schemas.js';
import { AuthorizationResourceBody, GuildBody, PartialGuildListBody, UserResourceBody } from '../resources/resources.schemas.js';

/**
 * TypeBox schemas of the token, revocation, metadata and identity endpoints. They validate and
 * document (OpenAPI); protocol messages keep RFC names, resources are Discord's (resources.schemas.ts,
 * DESIGN §1).
 */

const param = (description: string) => Type.Optional(Type.String({ description }));

/**
 * RFC 6749 §4.1.3 / §6 token request (SPEC §2.2), form-urlencoded, from the grant registry's
 * parameters (grants/registry.ts). Unknown parameters are ignored. With `grantTypes`, grant_type
 * carries them as its enum: for the API reference only (token.routes.ts), since validating it
 * would answer an unknown grant type with a schema error instead of RFC 6749 §5.2's
 * unsupported_grant_type.
 */
export function tokenRequestBody(parameters: readonly { name: string; description: string }[], grantTypes?: readonly string[]) {
  const properties: Record<string, TOptional<TString>> = {};
  for (const { name, description } of parameters) {
    properties[name] = Type.Optional(name === 'grant_type' && grantTypes ? Type.String({ description, enum: [...grantTypes] }) : Type.String({ description }));
  }
  return Type.Object(properties, { additionalProperties: true });
}

export const TokenResponseBody = Type.Object({
  access_token: Type.String({ description: 'Valid 1 hour' }),
  // RFC 8693 §2.2.1: present on a token exchange's answer.
  issued_token_type: Type.Optional(Type.String({ description: 'Token exchange (RFC 8693): urn:ietf:params:oauth:token-type:access_token' })),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
  refresh_token: Type.Optional(Type.String({ description: 'Valid 30 days; replaced on every refresh. Absent for client_credentials (RFC 6749 §4.4.3)' })),
  scope: Type.String({ description: 'Space-separated scopes of the access token' }),
  id_token: Type.Optional(Type.String({ description: 'With scope openid: the OpenID Connect ID token (a JWS; docs/oidc.md)' })),
  // Bot installs through the code flow: the server the bot was added to, under SPEC's name and Discord's.
  server: Type.Optional(GuildBody),
  guild: Type.Optional(GuildBody),
  // Issue #23: webhook.incoming's webhook, in the webhook presenter's shape (token and url shown once).
  webhook: Type.Optional(WebhookRecordBody),
});

/** RFC 6749 §5.2 error response. */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ description: 'The error code, e.g. invalid_grant or invalid_client' }),
    error_description: Type.Optional(Type.String()),
  },
  { description: 'An OAuth 2.0 error (RFC 6749 §5.2)' },
);

/** RFC 7009 §2.1 revocation request (SPEC §2.4). */
export const RevokeRequestBody = Type.Object(
  {
    token: param('the access or refresh token to revoke'),
    token_type_hint: param('`access_token` or `refresh_token`; only a hint'),
    client_id: param('the application id (or use HTTP Basic)'),
    client_secret: param('client_secret_post; confidential apps only'),
  },
  { additionalProperties: true },
);

/** RFC 8628 §3.1 device authorization request. */
export const DeviceAuthorizationRequestBody = Type.Object(
  {
    client_id: param('the application id (or use HTTP Basic); a public application sends it alone'),
    client_secret: param('client_secret_post; confidential apps only'),
    scope: param('space-separated scopes (a resource server\'s, all of them by default, when resource is sent)'),
    resource: param('RFC 8707: the API the token is for (a registered resource server\'s identifier); without it, this service\'s API'),
  },
  { additionalProperties: true },
);

/** RFC 8628 §3.2 device authorization response. */
export const DeviceAuthorizationResponseBody = Type.Object({
  device_code: Type.String({ description: 'what the device polls the token endpoint with (secret)' }),
  user_code: Type.String({ description: 'what the person types on verification_uri, as XXXX-XXXX' }),
  verification_uri: Type.String(),
  verification_uri_complete: Type.String({ description: 'verification_uri with the user code filled in (for a QR code or a link)' }),
  expires_in: Type.Integer({ description: 'seconds until the device code and user code expire' }),
  interval: Type.Integer({ description: 'seconds to wait between polls' }),
});

/** RFC 7662 §2.1 introspection request. */
export const IntrospectRequestBody = Type.Object(
  {
    token: param('the access token to describe'),
    token_type_hint: param('`access_token` or `refresh_token`; only a hint'),
    client_id: param('the resource server application\'s id (or use HTTP Basic)'),
    client_secret: param('client_secret_post'),
  },
  { additionalProperties: true },
);

/** RFC 7662 §2.2 introspection response: `active` alone when the token is not one the caller may see. */
export const IntrospectResponseBody = Type.Object({
  active: Type.Boolean(),
  scope: Type.Optional(Type.String({ description: 'Space-separated scopes of the token' })),
  client_id: Type.Optional(Type.String({ description: 'The application the token was issued to' })),
  username: Type.Optional(Type.String({ description: 'The username of the person the token speaks for; absent for an application\'s own token' })),
  sub: Type.Optional(Type.String({ description: 'The person\'s id, or for an application\'s own token (client credentials) its client id' })),
  aud: Type.Optional(Type.String({ description: 'The resource the token is for (RFC 8707): a resource server\'s identifier, or the base URL for this service\'s API' })),
  exp: Type.Optional(Type.Integer({ description: 'Expiry, seconds since the epoch' })),
  iat: Type.Optional(Type.Integer({ description: 'Issued at, seconds since the epoch' })),
  token_type: Type.Optional(Type.Literal('Bearer')),
});

/** RFC 9728 §2 protected-resource metadata. */
export const ProtectedResourceMetadataBody = Type.Object({
  resource: Type.String(),
  authorization_servers: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  bearer_methods_supported: Type.Array(Type.String()),
  resource_name: Type.String(),
  resource_documentation: Type.String(),
});

export const EmptyObject = Type.Object({}, { additionalProperties: false });

/** RFC 8414 §2. */
export const AuthorizationServerMetadataBody = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  introspection_endpoint: Type.String(),
  registration_endpoint: Type.Optional(Type.String()),
  device_authorization_endpoint: Type.String(),
  jwks_uri: Type.String({ description: 'The JWK Set of the keys signing ID tokens and JWT access tokens (RFC 9068).' }),
  response_types_supported: Type.Array(Type.String()),
  response_modes_supported: Type.Array(Type.String()),
  grant_types_supported: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
  code_challenge_methods_supported: Type.Array(Type.String()),
  authorization_response_iss_parameter_supported: Type.Boolean(),
  client_id_metadata_document_supported: Type.Optional(Type.Boolean({ description: 'A client_id may be the https URL of a client ID metadata document (draft-ietf-oauth-client-id-metadata-document).' })),
  service_documentation: Type.String(),
});

/** SPEC §2.5 user record: Discord's user object. */
export const UserRecordBody = UserResourceBody;

/** SPEC §2.7 authorization info. */
export const AuthorizationInfoBody = AuthorizationResourceBody;

export const ServerListBody = PartialGuildListBody;

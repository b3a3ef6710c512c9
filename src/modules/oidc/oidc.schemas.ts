import { Type } from '@sinclair/typebox';
import { HINT_MAX_LENGTH } from './oidc-request.js';

/** TypeBox schemas of the OpenID Connect endpoints (issue #22). Protocol messages keep their spec names. */

const strings = Type.Array(Type.String());

/** OpenID Connect Discovery 1.0 §3 (a superset of the RFC 8414 document). */
export const OpenIdConfigurationBody = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  introspection_endpoint: Type.String(),
  registration_endpoint: Type.Optional(Type.String()),
  device_authorization_endpoint: Type.String(),
  jwks_uri: Type.String(),
  userinfo_endpoint: Type.String(),
  end_session_endpoint: Type.String(),
  response_types_supported: strings,
  response_modes_supported: strings,
  grant_types_supported: strings,
  scopes_supported: strings,
  subject_types_supported: strings,
  id_token_signing_alg_values_supported: strings,
  claims_supported: strings,
  claim_types_supported: strings,
  prompt_values_supported: strings,
  acr_values_supported: strings,
  token_endpoint_auth_methods_supported: strings,
  revocation_endpoint_auth_methods_supported: strings,
  introspection_endpoint_auth_methods_supported: strings,
  code_challenge_methods_supported: strings,
  authorization_response_iss_parameter_supported: Type.Boolean(),
  client_id_metadata_document_supported: Type.Optional(Type.Boolean({ description: 'A client_id may be the https URL of a client ID metadata document (draft-ietf-oauth-client-id-metadata-document).' })),
  claims_parameter_supported: Type.Boolean(),
  request_parameter_supported: Type.Boolean(),
  request_uri_parameter_supported: Type.Boolean(),
  require_request_uri_registration: Type.Boolean(),
  frontchannel_logout_supported: Type.Boolean(),
  backchannel_logout_supported: Type.Boolean(),
  service_documentation: Type.String(),
});

/** RFC 7517 §5 JWK Set; each key carries kid, alg and use. */
export const JwksBody = Type.Object({
  keys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), use: Type.String(), kty: Type.String() }, { additionalProperties: true })),
});

/** OpenID Connect Core §5.3.2 UserInfo response. */
export const UserInfoBody = Type.Object({
  sub: Type.String({ description: "The person's id, as the ID token's sub" }),
  name: Type.Optional(Type.String({ description: 'scope identify' })),
  preferred_username: Type.Optional(Type.String({ description: 'scope identify' })),
  picture: Type.Optional(Type.String({ description: 'scope identify, when the person has an avatar' })),
  email: Type.Optional(Type.String({ description: 'scope email, when the person has an address' })),
  email_verified: Type.Optional(Type.Boolean({ description: 'scope email' })),
});

/** RP-Initiated Logout 1.0 §2 request parameters (query of GET, fields of the confirmation form). */
export const EndSessionQuery = Type.Object(
  {
    id_token_hint: Type.Optional(Type.String({ maxLength: 8192 })),
    client_id: Type.Optional(Type.String({ maxLength: 32 })),
    post_logout_redirect_uri: Type.Optional(Type.String({ maxLength: 2048 })),
    state: Type.Optional(Type.String({ maxLength: 2048 })),
    logout_hint: Type.Optional(Type.String({ maxLength: HINT_MAX_LENGTH })),
    ui_locales: Type.Optional(Type.String({ maxLength: HINT_MAX_LENGTH })),
  },
  { additionalProperties: true },
);

export const EndSessionConfirmBody = Type.Object(
  {
    client_id: Type.Optional(Type.String({ maxLength: 32 })),
    post_logout_redirect_uri: Type.Optional(Type.String({ maxLength: 2048 })),
    state: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: true },
);

/** The developer portal's OpenID Connect settings form. */
export const OpenIdSettingsBody = Type.Object(
  {
    idTokenAlg: Type.Optional(Type.String({ maxLength: 16 })),
    postLogoutRedirectUris: Type.Optional(Type.String({ maxLength: 30000 })),
  },
  { additionalProperties: true },
);

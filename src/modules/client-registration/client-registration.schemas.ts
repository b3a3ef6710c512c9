import { Type } from '@sinclair/typebox';

const metadataFields = {
  redirect_uris: Type.Array(Type.String(), { description: 'Exact redirect URIs: https; http only on 127.0.0.1 or [::1] (any port, RFC 8252 §7.3); private-use schemes such as com.example.app:/cb for public clients. Required with the authorization_code grant.' }),
  client_name: Type.String({ description: '2–32 characters, shown on the consent screen with "registered automatically, not reviewed"' }),
  token_endpoint_auth_method: Type.String({ enum: ['none', 'client_secret_basic', 'client_secret_post'], description: 'none: a public client (PKCE S256); the others: a confidential client with a client secret. Default client_secret_basic.' }),
  grant_types: Type.Array(Type.String(), { description: 'From grant_types_supported; client_credentials for confidential clients only. Default ["authorization_code"].' }),
  response_types: Type.Array(Type.String(), { description: '["code"] with the authorization_code grant, otherwise []' }),
  scope: Type.Optional(Type.String({ description: 'Space-separated scopes the client expects to ask for (recorded)' })),
  logo_uri: Type.Optional(Type.String({ description: 'An https image URL' })),
  client_uri: Type.Optional(Type.String({ description: 'An https URL about the client' })),
};

/** RFC 7591 §2 client metadata (the API reference's body; the route checks it itself, so refusals are RFC 7591's errors). */
export const RegistrationRequestBody = Type.Object(
  {
    redirect_uris: Type.Optional(metadataFields.redirect_uris),
    client_name: Type.Optional(metadataFields.client_name),
    token_endpoint_auth_method: Type.Optional(metadataFields.token_endpoint_auth_method),
    grant_types: Type.Optional(metadataFields.grant_types),
    response_types: Type.Optional(metadataFields.response_types),
    scope: metadataFields.scope,
    logo_uri: metadataFields.logo_uri,
    client_uri: metadataFields.client_uri,
  },
  { description: 'RFC 7591 client metadata; fields Gatehouse does not understand are ignored. RFC 7592 updates also carry client_id (and may carry client_secret).' },
);

/** RFC 7591 §3.2.1 / RFC 7592 §3 client information response. */
export const ClientInformationBody = Type.Object(
  {
    client_id: Type.String(),
    client_secret: Type.Optional(Type.String({ description: 'Confidential clients, in the registration response only (stored hashed)' })),
    client_id_issued_at: Type.Integer({ description: 'Seconds since the epoch' }),
    client_secret_expires_at: Type.Optional(Type.Integer({ description: '0: the secret does not expire' })),
    registration_access_token: Type.String({ description: 'RFC 7592: the bearer token for registration_client_uri (stored hashed)' }),
    registration_client_uri: Type.String(),
    ...metadataFields,
  },
  { description: 'The client as registered' },
);

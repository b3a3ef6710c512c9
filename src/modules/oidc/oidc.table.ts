import type { DbId, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * ID-token signing keys (issue #22): per algorithm the oldest generation not yet retired signs;
 * retired_at may lie ahead (a rotation's new key waits, published, until then: issue #36 §6), and
 * retired keys stay published until their tokens expire.
 */
export interface OidcSigningKeysTable {
  kid: string;
  alg: string;
  generation: DbInt;
  public_jwk: string;
  private_jwk: string;
  created_at: DbInt;
  retired_at: DbIntNullable;
}

/** What an `openid` grant's ID tokens repeat: the sign-in time, and the request's nonce. */
export interface OidcGrantsTable {
  grant_id: DbId;
  auth_time: DbInt;
  nonce: string | null;
  /** Issue #38 §4: the sign-in's RFC 8176 methods, space-separated; null for grants made before they were kept. */
  amr: string | null;
  /** Issue #38 §4: the acr_values value the sign-in met, when the request asked for one. */
  acr: string | null;
}

/** Per-app OpenID Connect settings; an app without a row uses the defaults (RS256, no logout URIs). */
export interface OidcClientsTable {
  application_id: DbId;
  id_token_alg: string;
  post_logout_redirect_uris: string;
  updated_at: DbInt;
}

import type { ColumnType } from 'kysely';
import type { DbId, DbIdNullable, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * An authorization ("grant"): what one consent produced, from its code through every rotated
 * refresh token. Revocation, deauthorization and code/refresh-token reuse end the whole grant
 * (SPEC §3: "the whole authorization ends"): its tokens are deleted and revoked_at is set.
 */
export interface OAuthGrantsTable {
  id: DbId;
  application_id: DbId;
  user_id: DbId;
  /** Space-separated scopes granted by the consent. */
  scopes: string;
  created_at: DbInt;
  revoked_at: DbIntNullable;
  /** Bot installs (issue #4): the server chosen on the consent screen and granted permissions. */
  server_id: DbIdNullable;
  permissions: string | null;
  /** `webhook.incoming` (issue #23): the channel chosen on the consent screen; the code exchange creates the webhook there. */
  webhook_channel_id?: DbIdNullable;
  /** RFC 8707 (issue #41): the resource server the grant's tokens are for; null for Gatehouse's own API. */
  resource_server_id?: DbIdNullable;
  /** 1 for the grant of an application's own tokens (client credentials): no person authorized it. */
  app_only?: ColumnType<number | bigint | string, number | undefined, number>;
  /** RFC 8693 (issue #41): the resource server's delegated scopes the person approved with this grant; empty: none. */
  delegated_scopes?: string;
}

/** Authorization codes: 10 minutes, single use (SPEC §3, §8); only the hash is kept. */
export interface OAuthCodesTable {
  code_hash: string;
  grant_id: DbId;
  application_id: DbId;
  user_id: DbId;
  /** The redirect_uri the code was issued for (the registered one actually used). */
  redirect_uri: string;
  /** 1 when the authorization request carried redirect_uri (RFC 6749 §4.1.3: then the token request must too). */
  redirect_uri_sent: DbInt;
  scopes: string;
  /** BASE64URL(SHA256(verifier)); null when the request had no PKCE. */
  code_challenge: string | null;
  created_at: DbInt;
  expires_at: DbInt;
  /** Set by the one exchange that consumed it (atomic UPDATE … WHERE used_at IS NULL). */
  used_at: DbIntNullable;
}

/** Access tokens: 1 hour (SPEC §8). Looked up by hash on every bearer request. */
export interface OAuthAccessTokensTable {
  token_hash: string;
  grant_id: DbId;
  application_id: DbId;
  user_id: DbId;
  /** Scopes of the request that produced this token (may be narrower than the grant). */
  scopes: string;
  created_at: DbInt;
  expires_at: DbInt;
  /** RFC 8707 (issue #41): the token's audience; null for Gatehouse's own API, which refuses any other. */
  resource_server_id?: DbIdNullable;
  /** 1 for a token that speaks for its application alone (client credentials, RFC 6749 §4.4). */
  app_only?: ColumnType<number | bigint | string, number | undefined, number>;
}

/**
 * Refresh tokens: 30 days, rotated on every use (SPEC §3). A rotated token keeps its row with
 * used_at set, so a second presentation is recognised as reuse (RFC 9700 §4.14.2) — or, within
 * the grace window and from the same client, as a retry that gets the same successor back.
 * Successor tokens are derived from the presented token (HMAC), so they can be re-derived for a
 * retry without ever storing a token in plaintext.
 */
export interface OAuthRefreshTokensTable {
  token_hash: string;
  grant_id: DbId;
  application_id: DbId;
  user_id: DbId;
  scopes: string;
  created_at: DbInt;
  expires_at: DbInt;
  used_at: DbIntNullable;
  /** Hash of the refresh token that replaced this one. */
  successor_hash: string | null;
  /** Random per-token key mixed into the HMAC that derives the successors, so an old refresh token alone does not yield them. */
  rotation_key: string | null;
  /** The grant's resource server (RFC 8707), carried to the successors. */
  resource_server_id?: DbIdNullable;
}

/** Remembered consent per person and app: a later request for no more than these scopes skips the screen. */
export interface OAuthConsentsTable {
  user_id: DbId;
  application_id: DbId;
  scopes: string;
  updated_at: DbInt;
}


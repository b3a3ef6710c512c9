import type { DbId, DbInt, DbIntNullable } from '../../storage/types.js';

/** Issue #41 §3: an application that registered itself (RFC 7591); goes with its application. */
export interface RegisteredClientsTable {
  application_id: DbId;
  /** SHA-256 of the RFC 7592 registration access token. */
  registration_token_hash: string;
  /** JSON: the registered metadata without a column in `applications` (RegisteredMetadata). */
  metadata: string;
  /** The client address it registered from (the per-address limit's key, for the operator). */
  registered_address: string | null;
  created_at: DbInt;
}

/** The operator's initial access tokens (RFC 7591 §3), SHA-256 only. */
export interface RegistrationTokensTable {
  id: DbId;
  token_hash: string;
  /** Null: never expires. */
  expires_at: DbIntNullable;
  created_at: DbInt;
}

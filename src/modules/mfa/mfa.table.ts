import type { DbId, DbInt, DbIntNullable } from '../../storage/types.js';

/** Issue #38 §4: one TOTP authenticator per person; the seed sealed with the server secret. */
export interface MfaTotpTable {
  user_id: DbId;
  /** seal(GATEHOUSE_SECRET, the base32 seed), bound to the person's id. */
  sealed_secret: string;
  /** Null while the enrolment waits for its confirming code: not yet a second factor. */
  enabled_at: DbIntNullable;
  /** The last RFC 6238 time step accepted: a code works once. */
  last_step: DbIntNullable;
  created_at: DbInt;
}

/** Issue #38 §4: ten single-use recovery codes, SHA-256 hashed. */
export interface MfaRecoveryCodesTable {
  code_hash: string;
  user_id: DbId;
  created_at: DbInt;
  used_at: DbIntNullable;
}

/** A password accepted, the second factor still to come: not a session (issue #38 §4). */
export interface MfaPendingSignInsTable {
  /** SHA-256 of the random value in the browser's cookie: the pending sign-in is bound to that browser. */
  id_hash: string;
  user_id: DbId;
  user_agent: string | null;
  created_at: DbInt;
  expires_at: DbInt;
}

/** The methods a session was signed in with (RFC 8176 amr), read into its ID tokens. */
export interface MfaSessionMethodsTable {
  /** The session's id hash (sessions.id_hash). */
  session_hash: string;
  user_id: DbId;
  /** Space-separated RFC 8176 values, e.g. "pwd otp mfa". */
  amr: string;
  created_at: DbInt;
}

import type { DbId, DbIdNullable, DbInt, DbIntNullable } from '../../storage/types.js';

/** Issue #38 §4: a person's WebAuthn credentials (passkeys), one row each. */
export interface PasskeysTable {
  /** The credential id the authenticator chose, base64url. */
  credential_id: string;
  user_id: DbId;
  /** What the person called it ("Laptop", "Phone"). */
  name: string;
  /** The COSE public key, base64url: public, so stored as is. */
  public_key: string;
  /** The signature counter last seen (WebAuthn §6.1.1): a lower one means a cloned authenticator. */
  sign_count: DbInt;
  /** Comma-separated transports the browser reported, as hints for later sign-ins. */
  transports: string;
  created_at: DbInt;
  last_used_at: DbIntNullable;
}

/** Issue #38 §4: the challenge of one registration or sign-in ceremony, SHA-256 hashed, single use. */
export interface PasskeyChallengesTable {
  challenge_hash: string;
  /** 'register' (the person registering) or 'sign-in' (anyone: a discoverable passkey names its person). */
  purpose: string;
  user_id: DbIdNullable;
  expires_at: DbInt;
}

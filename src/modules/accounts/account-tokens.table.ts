import type { DbId, DbInt, DbIntNullable } from '../../storage/types.js';

/**
 * Issue #38 §2–§3: e-mail verification and password reset links. The link carries a random
 * token; the table keeps only its SHA-256 hash (core/secrets.ts), so a database read gives no
 * usable link. `email` is the address a verification link proves (null for a reset link).
 */
export interface AccountTokensTable {
  token_hash: string;
  purpose: string;
  user_id: DbId;
  email: string | null;
  created_at: DbInt;
  expires_at: DbInt;
  /** Set when the link is used: every link works once. */
  used_at: DbIntNullable;
}

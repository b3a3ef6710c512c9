import type { DbId, DbInt } from '../../storage/types.js';

/** Server-side sessions: the cookie holds the random id, the table only its SHA-256 hash. */
export interface SessionsTable {
  id_hash: string;
  user_id: DbId;
  created_at: DbInt;
  last_seen_at: DbInt;
  /** min(created + max age, last seen + idle timeout), recomputed when the session is used. */
  expires_at: DbInt;
  user_agent: string | null;
  /** Issue #38 §5: the address the session signed in from, shown on Settings → Sessions. */
  address: string | null;
}

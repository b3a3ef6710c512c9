import type { DbInt } from '../../storage/types.js';

/** A secret waiting for its one read (migration 2026-11-25-30-chat-manage-one-time-reveals). */
export interface OneTimeRevealsTable {
  id: string;
  session_hash: string;
  sealed: string;
  expires_at: DbInt;
}

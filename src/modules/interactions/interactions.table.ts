import type { DbBool, DbId, DbIdNullable, DbInt } from '../../storage/types.js';

/**
 * Issue #40 §2: an interaction the app may still answer: its token (SHA-256 hash only, DESIGN §3)
 * authorizes the callback and follow-ups until `expires_at` (Discord: 15 minutes).
 */
export interface InteractionsTable {
  id: DbId;
  token_hash: string;
  application_id: DbId;
  bot_user_id: DbId;
  channel_id: DbId;
  /** The invoker. */
  user_id: DbId;
  command_name: string;
  /** Answered with flag 64 (deferred or not): shown to the invoker only. */
  ephemeral: DbBool;
  /** Discord: an interaction is answered (acknowledged) once; a second answer is 40060. */
  acknowledged: DbBool;
  /** The answer's message (`@original`), once posted. */
  original_message_id: DbIdNullable;
  created_at: DbInt;
  expires_at: DbInt;
}

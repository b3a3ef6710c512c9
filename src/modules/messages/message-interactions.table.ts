import type { DbBool, DbId, DbInt } from '../../storage/types.js';

/**
 * Issue #40 §2 "the message shows who used which command": Discord's `interaction_metadata` of a
 * message an app posted in answer to a command (its answer, a deferred placeholder or a follow-up).
 */
export interface MessageInteractionsTable {
  message_id: DbId;
  interaction_id: DbId;
  interaction_type: DbInt;
  /** Who used the command. */
  user_id: DbId;
  command_name: string;
  /** Discord's flag LOADING (128): a deferred answer's placeholder, shown as "<App> is thinking…". */
  loading: DbBool;
}

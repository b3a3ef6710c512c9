import type { DbInt } from './types.js';

/** The check value of the database's server secret, one row with id 1 (storage/server-secret-check.ts). */
export interface ServerSecretCheckTable {
  id: number;
  check_value: string;
  recorded_at: DbInt;
}

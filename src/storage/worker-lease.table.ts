import type { DbInt } from './types.js';

/** Snowflake worker ids leased by running instances (core/snowflake.ts). */
export interface WorkerLeasesTable {
  worker_id: DbInt;
  holder: string;
  expires_at: DbInt;
}

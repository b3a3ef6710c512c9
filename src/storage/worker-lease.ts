import type { Kysely } from 'kysely';
import { MAX_WORKER_ID } from '../core/snowflake.js';
import type { Database } from './database.js';
import { isUniqueViolation } from './types.js';

/** A lease lasts this long and is renewed at a third of it, so a crashed instance frees its id soon. */
export const WORKER_LEASE_MS = 60_000;

/**
 * Leases a snowflake worker id (0..1023) that no live instance holds: insert a free id, or take
 * over one whose lease expired. Both are single atomic statements, so two instances starting at
 * once can never get the same id. Start from a random id to avoid everyone contending for 0.
 */
export async function leaseWorkerId(db: Kysely<Database>, holder: string, now: number, start: number): Promise<number> {
  for (let i = 0; i <= MAX_WORKER_ID; i += 1) {
    const workerId = (start + i) % (MAX_WORKER_ID + 1);
    const taken = await db
      .updateTable('worker_leases')
      .set({ holder, expires_at: now + WORKER_LEASE_MS })
      .where('worker_id', '=', workerId)
      .where('expires_at', '<', now)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) === 1) return workerId;
    try {
      await db.insertInto('worker_leases').values({ worker_id: workerId, holder, expires_at: now + WORKER_LEASE_MS }).execute();
      return workerId;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  throw new Error('no snowflake worker id is free: 1024 instances hold a lease');
}

/** Extends our lease; false when another instance took it over (we were paused past expiry). */
export async function renewWorkerLease(db: Kysely<Database>, workerId: number, holder: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('worker_leases')
    .set({ expires_at: now + WORKER_LEASE_MS })
    .where('worker_id', '=', workerId)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseWorkerLease(db: Kysely<Database>, workerId: number, holder: string): Promise<void> {
  await db.deleteFrom('worker_leases').where('worker_id', '=', workerId).where('holder', '=', holder).execute();
}

/**
 * A named lease in the same table, for work that one instance at a time must do (the maintenance
 * job, storage/maintenance.ts): ids above MAX_WORKER_ID, which leaseWorkerId never hands out.
 */
export const MAINTENANCE_LEASE_ID = MAX_WORKER_ID + 1;

/**
 * Takes lease `leaseId` for `holder` until now + durationMs, or extends it when `holder` already
 * has it; false when another holder's lease is still running. Each step is one atomic statement
 * (a conditional UPDATE, else an INSERT that a concurrent one makes fail as a duplicate), so two
 * instances asking at once never both get it.
 */
export async function takeLease(db: Kysely<Database>, leaseId: number, holder: string, now: number, durationMs: number): Promise<boolean> {
  const taken = await db
    .updateTable('worker_leases')
    .set({ holder, expires_at: now + durationMs })
    .where('worker_id', '=', leaseId)
    .where((eb) => eb.or([eb('expires_at', '<', now), eb('holder', '=', holder)]))
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) === 1) return true;
  try {
    await db.insertInto('worker_leases').values({ worker_id: leaseId, holder, expires_at: now + durationMs }).execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

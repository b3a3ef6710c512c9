import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { leaseWorkerId, releaseWorkerLease, renewWorkerLease, WORKER_LEASE_MS } from '../../src/storage/worker-lease.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('snowflake worker-id leases (unique ids across instances)', () => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await createTestDatabase();
    await migrateToLatest(t.handle.db);
  });
  afterEach(async () => t.drop());

  it('instances starting at the same moment get different worker ids', async () => {
    const now = 1_000_000;
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => leaseWorkerId(t.handle.db, `instance-${i}`, now, 5)));
    expect(new Set(ids).size).toBe(10);
  });

  it('an expired lease is taken over; a live one is not', async () => {
    const a = await leaseWorkerId(t.handle.db, 'a', 0, 42);
    expect(a).toBe(42);
    expect(await leaseWorkerId(t.handle.db, 'b', WORKER_LEASE_MS - 1, 42)).not.toBe(42);
    expect(await leaseWorkerId(t.handle.db, 'c', WORKER_LEASE_MS + 1, 42)).toBe(42);
    expect(await renewWorkerLease(t.handle.db, 42, 'a', WORKER_LEASE_MS + 2)).toBe(false);
  });

  it('renewal keeps the lease and release frees it', async () => {
    const id = await leaseWorkerId(t.handle.db, 'a', 0, 7);
    expect(await renewWorkerLease(t.handle.db, id, 'a', WORKER_LEASE_MS - 10)).toBe(true);
    expect(await leaseWorkerId(t.handle.db, 'b', WORKER_LEASE_MS + 1, 7)).not.toBe(7);
    await releaseWorkerLease(t.handle.db, id, 'a');
    expect(await leaseWorkerId(t.handle.db, 'c', WORKER_LEASE_MS + 1, 7)).toBe(7);
  });
});

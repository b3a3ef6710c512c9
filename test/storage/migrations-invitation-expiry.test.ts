import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { migrateUpTo, type TestDatabase } from '../support/database.js';
import { freshDatabaseEachTest } from '../support/migration-tests.js';

/**
 * Issue #36 §3: migration 2026-11-27-20 gives every invitation an expiry. One pending before it
 * expires 7 days after it was sent, so an old invitation stops working at once instead of
 * outliving its sender forever.
 */

const BEFORE = '2026-11-27-10-webhook-secrets-sealed';
const DAY = 86_400_000;

describe('migration 2026-11-27-20 (invitations expire)', () => {
  let t: TestDatabase;
  let db: Kysely<unknown>;
  freshDatabaseEachTest((fresh, untyped) => {
    t = fresh;
    db = untyped;
  });

  it('an invitation pending before it expires 7 days after it was sent', async () => {
    await migrateUpTo(t.handle, BEFORE);
    await sql`insert into users (id, username, username_key, name, created_at) values (1, 'a', 'a', 'A', 0), (4, 'b', 'b', 'B', 0)`.execute(db);
    await sql`insert into servers (id, name, owner_id, created_at) values (2, 'S', 1, 0)`.execute(db);
    const sentAt = Date.UTC(2026, 0, 1);
    await sql`insert into member_invitations (id, server_id, user_id, inviter_id, role_ids, created_at) values (5, 2, 4, 1, '', ${sentAt})`.execute(db);

    await migrateToLatest(t.handle.db);

    const rows = await sql<{ expires_at: string | number }>`select expires_at from member_invitations`.execute(db);
    expect(rows.rows.map((r) => Number(r.expires_at))).toEqual([sentAt + 7 * DAY]);
  });
});

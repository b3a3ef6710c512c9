import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { migrateUpTo, type TestDatabase } from '../support/database.js';
import { freshDatabaseEachTest } from '../support/migration-tests.js';

/**
 * Issue #36 §2: migration 2026-11-27-10 moves each GitHub secret onto its webhook's row. A
 * migration never sees the server secret, so a secret set before comes over as `plain:<secret>`
 * (sealed at its first use, test/http/webhook-github-signed-only.test.ts) and the table of plain
 * secrets goes.
 */

const BEFORE = '2026-11-25-40-invite-codes';

describe('migration 2026-11-27-10 (GitHub secrets onto the webhook row, to be sealed)', () => {
  let t: TestDatabase;
  let db: Kysely<unknown>;
  freshDatabaseEachTest((fresh, untyped) => {
    t = fresh;
    db = untyped;
  });

  it('carries each secret over as plain:<secret> on its webhook, leaves the others null, and drops webhook_github_secrets', async () => {
    await migrateUpTo(t.handle, BEFORE);
    await sql`insert into users (id, username, username_key, name, created_at) values (1, 'a', 'a', 'A', 0)`.execute(db);
    await sql`insert into servers (id, name, owner_id, created_at) values (2, 'S', 1, 0)`.execute(db);
    await sql`insert into channels (id, server_id, name, created_at) values (3, 2, 'c', 0)`.execute(db);
    for (const id of [10, 11]) {
      await sql`insert into webhooks (id, token_hash, server_id, channel_id, name, creator_id, created_at) values (${id}, ${`hash-${id}`}, 2, 3, 'w', 1, 0)`.execute(db);
    }
    await sql`insert into webhook_github_secrets (webhook_id, secret, updated_at) values (10, 'hunter2', 0)`.execute(db);

    await migrateToLatest(t.handle.db);

    const rows = await sql<{ id: string | number; github_secret_sealed: string | null }>`select id, github_secret_sealed from webhooks order by id`.execute(db);
    expect(rows.rows.map((r) => [Number(r.id), r.github_secret_sealed])).toEqual([
      [10, 'plain:hunter2'],
      [11, null],
    ]);
    await expect(sql`select 1 from webhook_github_secrets`.execute(db)).rejects.toThrow();
  });
});

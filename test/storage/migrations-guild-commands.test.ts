import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { migrateUpTo, type TestDatabase } from '../support/database.js';
import { freshDatabaseEachTest } from '../support/migration-tests.js';

/**
 * Issue #40 §2: migration 2026-12-02-30 gives commands a server (guild commands). The global
 * commands stored before it stay, with their fields, as global ones (on SQLite the table is
 * rebuilt), and names are then unique per app among its global commands and per app and server
 * among that server's.
 */

const BEFORE = '2026-12-02-20-command-contexts';

describe('migration 2026-12-02-30 (guild commands)', () => {
  let t: TestDatabase;
  let db: Kysely<unknown>;
  freshDatabaseEachTest((fresh, untyped) => {
    t = fresh;
    db = untyped;
  });

  it('keeps every global command as it was, and makes a name unique per app globally and per app and server', async () => {
    await migrateUpTo(t.handle, BEFORE);
    await sql`insert into users (id, username, username_key, name, created_at) values (1, 'a', 'a', 'A', 0)`.execute(db);
    await sql`insert into servers (id, name, owner_id, created_at) values (2, 'S', 1, 0), (3, 'T', 1, 0)`.execute(db);
    await sql`insert into applications (id, owner_id, name, confidential, redirect_uris, created_at, updated_at) values (4, 1, 'App', 1, '[]', 0, 0)`.execute(db);
    await sql`insert into application_commands (id, application_id, name, description, options, type, created_at, default_member_permissions, integration_types, contexts)
      values (5, 4, 'ping', 'Pong', '[{"name":"n","description":"N","type":4}]', 1, 7, '8192', 1, 3)`.execute(db);

    await migrateToLatest(t.handle.db);

    const rows = await sql<Record<string, unknown>>`select id, application_id, name, description, options, type, created_at, default_member_permissions, integration_types, contexts, guild_id from application_commands`.execute(db);
    expect(rows.rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' || (typeof v === 'string' && /^\d+$/.test(v)) ? Number(v) : v])))).toEqual([
      { id: 5, application_id: 4, name: 'ping', description: 'Pong', options: '[{"name":"n","description":"N","type":4}]', type: 1, created_at: 7, default_member_permissions: 8192, integration_types: 1, contexts: 3, guild_id: null },
    ]);
    // The same name in a server, and in another server: allowed; twice in one scope: refused.
    await sql`insert into application_commands (id, application_id, name, description, created_at, guild_id) values (6, 4, 'ping', 'Here', 0, 2), (7, 4, 'ping', 'There', 0, 3)`.execute(db);
    await expect(sql`insert into application_commands (id, application_id, name, description, created_at) values (8, 4, 'ping', 'Again', 0)`.execute(db)).rejects.toThrow();
    await expect(sql`insert into application_commands (id, application_id, name, description, created_at, guild_id) values (9, 4, 'ping', 'Again', 0, 2)`.execute(db)).rejects.toThrow();
    // Deleting a server deletes its commands, not the global ones.
    await sql`delete from servers where id = 3`.execute(db);
    const left = await sql<{ id: string | number }>`select id from application_commands order by id`.execute(db);
    expect(left.rows.map((r) => Number(r.id))).toEqual([5, 6]);
  });
});

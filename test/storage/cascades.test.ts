import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { CASCADES_FROM, withCascades } from '../../src/storage/cascades.js';
import { connectDatabase } from '../../src/storage/connect.js';
import { migrateToLatest } from '../../src/storage/migrate.js';

/**
 * storage/cascades.ts: the caches watch the tables whose deletes cascade into the tables they
 * read (issue #37 §4); the map must be the schema's, so it is compared with the migrated database's
 * foreign keys (the same migrations build PostgreSQL's).
 */
describe('deletes that cascade', () => {
  it('the map is exactly the migrated schema’s ON DELETE CASCADE foreign keys, and no key has another action', async () => {
    const handle = connectDatabase(':memory:');
    try {
      await migrateToLatest(handle.db);
      const tables = (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(handle.db)).rows.map((row) => row.name);
      const schema: Record<string, string[]> = {};
      const otherActions: string[] = [];
      for (const table of tables) {
        const keys = (await sql<{ table: string; on_delete: string; on_update: string }>`select * from pragma_foreign_key_list(${table})`.execute(handle.db)).rows;
        for (const key of keys) {
          if (key.on_delete === 'CASCADE') schema[table] = [...new Set([...(schema[table] ?? []), key.table])].sort();
          else if (key.on_delete !== 'NO ACTION' || key.on_update !== 'NO ACTION') otherActions.push(`${table} → ${key.table}: ${key.on_delete}/${key.on_update}`);
        }
      }
      expect(Object.fromEntries(Object.entries(CASCADES_FROM).map(([table, parents]) => [table, [...parents].sort()]))).toEqual(schema);
      // SET NULL or an ON UPDATE action would change rows too: the map would have to say so.
      expect(otherActions).toEqual([]);
    } finally {
      await handle.close();
    }
  });

  it('a table read brings the tables whose deletes reach it, transitively', () => {
    expect(withCascades(['oauth_access_tokens', 'users'])).toEqual(['applications', 'oauth_access_tokens', 'oauth_grants', 'resource_servers', 'users']);
    expect(withCascades(['applications'])).toEqual(['applications', 'users']);
  });
});

import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesOpenToOthers } from '../../src/config/file-modes.js';
import { readOrCreateSecretFile } from '../../src/config/server-secret.js';
import { connectDatabase, sqliteFiles } from '../../src/storage/connect.js';
import { migrateToLatest } from '../../src/storage/migrate.js';

/**
 * Issue #36 §4: ./data was created 0755 and gatehouse.db 0644, though the docs promise 0700. On a
 * real temporary folder: the folder is created 0700, the database, its WAL and shared-memory file
 * and the secret file 0600, and files left wider by hand or an earlier version are reported.
 */
const mode = (path: string) => statSync(path).mode & 0o777;
if (process.platform === 'win32') console.warn('test/storage/sqlite-file-modes.test.ts: skipped: Windows has no POSIX file modes');

describe.skipIf(process.platform === 'win32')('issue #36 §4: the SQLite database and the secret file are private to the server', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-modes-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a new ./data folder is 0700; gatehouse.db, its -wal and -shm files and gatehouse.secret are 0600', async () => {
    const data = join(dir, 'data');
    const file = join(data, 'gatehouse.db');
    const handle = connectDatabase(file);
    try {
      await migrateToLatest(handle.db);
      await sql`insert into worker_leases (worker_id, holder, expires_at) values (1, 'test', 0)`.execute(handle.db);
      readOrCreateSecretFile(join(data, 'gatehouse.secret'));
      expect(mode(data)).toBe(0o700);
      // Each of the three exists while the database is open in WAL mode.
      expect(sqliteFiles(file).map(mode)).toEqual([0o600, 0o600, 0o600]);
      expect(mode(join(data, 'gatehouse.secret'))).toBe(0o600);
    } finally {
      await handle.close();
    }
  });

  it('an existing database keeps its mode and its data: it is opened, not recreated', async () => {
    const file = join(dir, 'kept.db');
    const first = connectDatabase(file);
    await migrateToLatest(first.db);
    await sql`insert into worker_leases (worker_id, holder, expires_at) values (7, 'kept', 0)`.execute(first.db);
    await first.close();
    chmodSync(file, 0o640);
    const again = connectDatabase(file);
    try {
      const { rows } = await sql<{ holder: string }>`select holder from worker_leases`.execute(again.db);
      expect(rows.map((r) => r.holder)).toEqual(['kept']);
      expect(mode(file)).toBe(0o640);
    } finally {
      await again.close();
    }
  });

  it('at start, each of those files that others may open is reported with the command that fixes it; private and missing ones are not', () => {
    const open = join(dir, 'gatehouse.db');
    const closed = join(dir, 'gatehouse.secret');
    writeFileSync(open, '');
    writeFileSync(closed, '');
    chmodSync(open, 0o644);
    chmodSync(closed, 0o600);
    expect(filesOpenToOthers([open, closed, join(dir, 'gatehouse.db-wal')])).toEqual([`${open} is open to other users of this machine (mode 0644); run "chmod 600 ${open}"`]);
    chmodSync(closed, 0o620);
    expect(filesOpenToOthers([closed])).toHaveLength(1);
  });

  it('sqliteFiles: the database, its WAL and its index; nothing in memory or on PostgreSQL', () => {
    expect(sqliteFiles('sqlite:./data/x.db')).toEqual(['./data/x.db', './data/x.db-wal', './data/x.db-shm']);
    expect(sqliteFiles(':memory:')).toEqual([]);
    expect(sqliteFiles('postgres://db/x')).toEqual([]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteCore } from '../../src/storage/sqlite/core.js';
import type { WriteEvents } from '../../src/storage/sqlite/events.js';
import { WriteGroups } from '../../src/storage/sqlite/write-groups.js';

/**
 * What SQLite's write groups announce (src/storage/sqlite/events.ts): the row cache hears every
 * change of the database through these events alone, so each path that changes what a read would
 * return must announce itself. Pure SQLite, so these run whatever TEST_DATABASE_URL says.
 */
let dir: string;
let native: SQLite.Database;
let heard: string[];
let groups: WriteGroups;

const recorder: WriteEvents = {
  onWrite: (table) => heard.push(`write ${table ?? '(unknown)'}`),
  onCommitFailed: () => heard.push('commit failed'),
  onRollback: () => heard.push('rollback'),
  onForeignCommit: () => heard.push('foreign commit'),
};

/** A query outside any db.transaction(), as Kysely's connection runs it. */
const run = (sql: string, parameters: unknown[] = []) => groups.execute({}, CompiledQuery.raw(sql, parameters));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gh-write-events-'));
  native = new SQLite(join(dir, 'test.db'));
  native.pragma('journal_mode = WAL');
  native.pragma('foreign_keys = ON');
  native.exec(`create table items (id integer primary key, name text not null);
    create table messages (id integer primary key, content text not null);
    create table parents (id integer primary key);
    create table children (id integer primary key, parent_id integer not null references parents (id) deferrable initially deferred);`);
  heard = [];
  groups = new WriteGroups(native, recorder);
});

afterEach(() => {
  if (native.open) groups.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the write groups announce', () => {
  it('each write, before it runs, with the table it writes; reads announce nothing', async () => {
    await Promise.all([run('insert into items (id, name) values (1, ?)', ['a']), run('insert into "messages" ("id", "content") values (1, ?)', ['hi'])]);
    await run('select name from items where id = 1');
    await run('update items set name = ? where id = 1', ['b']);
    expect(heard).toEqual(['write items', 'write messages', 'write items']);
  });

  it('a control statement or a write whose table it cannot read as a write of an unknown table', async () => {
    await run('pragma user_version = 3');
    await run('with gone as (select 1) delete from items');
    expect(heard).toEqual(['write (unknown)', 'write (unknown)']);
  });

  it('a group lost when an error ends its transaction, and when its COMMIT fails', async () => {
    await run('insert into items (id, name) values (1, ?)', ['kept']);
    heard = [];
    const outcomes = await Promise.allSettled([run('insert into items (id, name) values (2, ?)', ['lost']), run("insert or rollback into items (id, name) values (1, 'clash')")]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(heard).toEqual(['write items', 'write items', 'commit failed']);
    heard = [];
    // A deferred foreign key is checked at COMMIT: the statement runs, its group's COMMIT fails.
    await expect(run('insert into children (id, parent_id) values (1, 99)')).rejects.toThrow(/FOREIGN KEY/);
    expect(heard).toEqual(['write children', 'commit failed']);
  });

  it('a db.transaction() rolled back to its savepoint, after the writes it undoes', async () => {
    const transaction = {};
    await groups.begin(transaction);
    await groups.execute(transaction, CompiledQuery.raw('insert into items (id, name) values (1, ?)', ['undone']));
    await groups.end(transaction, 'ROLLBACK');
    expect(heard).toEqual(['write items', 'rollback']);
    expect(await run('select count(*) as n from items')).toMatchObject({ rows: [{ n: 0 }] });
  });
});

describe('the SQLite core announces', () => {
  it('a commit by another connection to the row cache, once, at the next cached lookup after it', async () => {
    const core = new SqliteCore(native);
    const heardForeign = vi.spyOn(core.rows, 'onForeignCommit');
    const lookup = core.bind('select name from items where id = ?', { operation: 'select', cacheable: true });
    await lookup(['1']);
    await nextTurn();
    await lookup(['1']);
    const before = heardForeign.mock.calls.length;
    const other = new SQLite(join(dir, 'test.db'));
    other.prepare('insert into items (id, name) values (1, ?)').run('from elsewhere');
    other.close();
    await nextTurn();
    expect((await lookup(['1'])).rows).toEqual([{ name: 'from elsewhere' }]);
    expect(heardForeign.mock.calls.length).toBe(before + 1);
    core.groups.close();
  });
});

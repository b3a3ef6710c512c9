import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../src/storage/connect.js';
import { GroupCommitSqliteDialect } from '../../src/storage/sqlite/dialect.js';
import { StatementCache } from '../../src/storage/sqlite/statements.js';

/**
 * The SQLite driver behind every SQLite database (src/storage/sqlite/, DESIGN §5): writes
 * of one event-loop turn share one COMMIT, each acknowledged only after it; errors stay with the
 * statement that caused them; db.transaction() keeps its atomicity. Pure SQLite, so these run
 * whatever TEST_DATABASE_URL says.
 */
interface Tables {
  items: { id: number; name: string; used_at: number | null };
}

let dir: string;
let native: SQLite.Database;
let dialect: GroupCommitSqliteDialect;
let db: Kysely<Tables>;

/** What another connection sees: only committed data. */
function committedNames(): string[] {
  const other = new SQLite(join(dir, 'test.db'), { readonly: true });
  try {
    return (other.prepare('select name from items order by id').all() as { name: string }[]).map((row) => row.name);
  } finally {
    other.close();
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gh-group-commit-'));
  native = new SQLite(join(dir, 'test.db'));
  native.pragma('journal_mode = WAL');
  dialect = new GroupCommitSqliteDialect(native);
  db = new Kysely<Tables>({ dialect });
  await sql`create table items (id integer primary key, name text not null unique, used_at integer)`.execute(db);
});

afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('group commit', () => {
  it('concurrent writes of one turn share one commit, and each resolves only once it is committed', async () => {
    const before = dialect.core.commits;
    const settled: string[] = [];
    const writes = Array.from({ length: 50 }, (_, i) =>
      db
        .insertInto('items')
        .values({ id: i + 1, name: `item-${i}` })
        .execute()
        .then(() => {
          // The acknowledgement comes after COMMIT: another connection already sees the row.
          expect(committedNames()).toContain(`item-${i}`);
          settled.push(`item-${i}`);
        }),
    );
    await Promise.all(writes);
    expect(settled).toHaveLength(50);
    expect(dialect.core.commits - before).toBe(1);
    expect(committedNames()).toHaveLength(50);
  });

  it('a failing statement rejects only its own caller; the rest of its group is committed', async () => {
    await db.insertInto('items').values({ id: 1, name: 'taken' }).execute();
    const outcomes = await Promise.allSettled([
      db.insertInto('items').values({ id: 2, name: 'first' }).execute(),
      db.insertInto('items').values({ id: 3, name: 'taken' }).execute(),
      db.insertInto('items').values({ id: 4, name: 'second' }).execute(),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(committedNames()).toEqual(['taken', 'first', 'second']);
  });

  it('a read in the same turn as a write sees it, and answers only after the commit', async () => {
    const write = db.insertInto('items').values({ id: 1, name: 'fresh' }).execute();
    const read = db
      .selectFrom('items')
      .select('name')
      .execute()
      .then((rows) => {
        expect(committedNames()).toEqual(['fresh']);
        return rows.map((row) => row.name);
      });
    await write;
    expect(await read).toEqual(['fresh']);
  });

  it('reads with no write pending answer at once; a write after them in the same turn still commits', async () => {
    await db.insertInto('items').values({ id: 1, name: 'old' }).execute();
    const before = dialect.core.commits;
    let readAnswered = false;
    const read = db
      .selectFrom('items')
      .select('name')
      .execute()
      .then((rows) => {
        readAnswered = true;
        return rows.map((row) => row.name);
      });
    // Microtasks only: the turn does not end, so no flush can run meanwhile.
    for (let i = 0; i < 100 && !readAnswered; i += 1) await Promise.resolve();
    expect(readAnswered).toBe(true);
    const write = db.insertInto('items').values({ id: 2, name: 'new' }).execute();
    expect(await read).toEqual(['old']);
    await write;
    expect(committedNames()).toEqual(['old', 'new']);
    expect(dialect.core.commits - before).toBe(1);
  });

  it('a transaction runs alone, is undone as a whole on error, and the writes around it are kept', async () => {
    const early = db.insertInto('items').values({ id: 1, name: 'before' }).execute();
    const failed = db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 2, name: 'inside' }).execute();
      // Concurrent plain writes wait for the transaction instead of joining it.
      const seen = await trx.selectFrom('items').select('name').orderBy('id').execute();
      expect(seen.map((row) => row.name)).toEqual(['before', 'inside']);
      throw new Error('changed my mind');
    });
    const late = db.insertInto('items').values({ id: 3, name: 'after' }).execute();
    await expect(failed).rejects.toThrow('changed my mind');
    await Promise.all([early, late]);
    expect(committedNames()).toEqual(['before', 'after']);
  });

  it('a transaction shares the commit of its group and resolves only after it', async () => {
    const before = dialect.core.commits;
    const plain = db.insertInto('items').values({ id: 1, name: 'plain' }).execute();
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 2, name: 'first' }).execute();
      await trx.insertInto('items').values({ id: 3, name: 'second' }).execute();
    });
    await transaction;
    expect(committedNames()).toEqual(['plain', 'first', 'second']);
    await plain;
    expect(dialect.core.commits - before).toBe(1);
  });

  it('single use holds: of 20 racing consumes of one row, in and out of transactions, exactly one wins', async () => {
    await db.insertInto('items').values({ id: 1, name: 'code' }).execute();
    const consume = async (inTransaction: boolean): Promise<boolean> => {
      const run = async (q: Kysely<Tables>): Promise<boolean> => {
        const result = await q.updateTable('items').set({ used_at: 1 }).where('id', '=', 1).where('used_at', 'is', null).executeTakeFirst();
        return result.numUpdatedRows === 1n;
      };
      return inTransaction ? db.transaction().execute((trx) => run(trx)) : run(db);
    };
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => consume(i % 2 === 0)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('when an error ends the whole transaction, every waiter of the group is told instead of acknowledged', async () => {
    const good = db.insertInto('items').values({ id: 1, name: 'lost' }).execute();
    // ON CONFLICT ROLLBACK ends the group's transaction: the earlier insert is gone with it.
    const bad = sql`insert or rollback into items (id, name) values (2, 'lost')`.execute(db);
    const outcomes = await Promise.allSettled([good, bad]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(committedNames()).toEqual([]);
    await db.insertInto('items').values({ id: 3, name: 'next' }).execute();
    expect(committedNames()).toEqual(['next']);
  });
});

/**
 * Statements bound once by storage/prepared.ts (the hot paths): the same promises as any query —
 * acknowledged after the group's COMMIT, waiting for a db.transaction() — with their timing taken
 * in line by the core.
 */
describe('bound statements', () => {
  const insertSql = () => db.insertInto('items').values({ id: 0, name: '' }).compile().sql;
  const renameSql = () => db.updateTable('items').set({ name: '' }).where('id', '=', 0).compile().sql;

  it('share the turn\'s commit with other writes and are acknowledged only once committed', async () => {
    const insert = dialect.core.bind(insertSql(), { operation: 'insert', cacheable: false });
    const before = dialect.core.commits;
    const acknowledged = [1, 2, 3].map((id) =>
      insert([id, `bound-${id}`]).then((result) => {
        expect(committedNames()).toContain(`bound-${id}`);
        return result.numAffectedRows;
      }),
    );
    const plain = db.insertInto('items').values({ id: 4, name: 'plain' }).execute();
    expect(await Promise.all(acknowledged)).toEqual([1n, 1n, 1n]);
    await plain;
    expect(dialect.core.commits - before).toBe(1);
  });

  it('wait while a db.transaction() holds the connection, then run after it', async () => {
    const rename = dialect.core.bind(renameSql(), { operation: 'update', cacheable: false });
    await db.insertInto('items').values({ id: 1, name: 'first' }).execute();
    const order: string[] = [];
    let pending: Promise<unknown> | undefined;
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('items').set({ name: 'in transaction' }).where('id', '=', 1).execute();
      pending = rename(['after transaction', 1]).then(() => order.push('bound'));
      // Still inside: the bound write has not run (it would have joined the savepoint otherwise).
      const seen = await trx.selectFrom('items').select('name').where('id', '=', 1).executeTakeFirstOrThrow();
      expect(seen.name).toBe('in transaction');
      order.push('transaction');
    });
    await pending;
    expect(order).toEqual(['transaction', 'bound']);
    expect(committedNames()).toEqual(['after transaction']);
  });

  it('are timed in line, failures included, and a write group\'s COMMIT is timed as "commit"', async () => {
    const seen: string[] = [];
    dialect.core.timer = (operation, durationMs, failed) => {
      expect(durationMs).toBeGreaterThanOrEqual(0);
      seen.push(`${operation}:${failed ? 'error' : 'ok'}`);
    };
    const insert = dialect.core.bind(insertSql(), { operation: 'insert', cacheable: false });
    const lookup = dialect.core.bind(db.selectFrom('items').select('name').where('id', '=', 0).compile().sql, { operation: 'select', cacheable: true });
    await insert([1, 'timed']);
    await expect(insert([2, 'timed'])).rejects.toThrow(/UNIQUE/);
    expect((await lookup(['1'])).rows).toEqual([{ name: 'timed' }]);
    // A cached answer runs no statement and is not timed.
    expect((await lookup(['1'])).rows).toEqual([{ name: 'timed' }]);
    // The failed insert is rejected at once, and the lookup joins its still-open group: it runs
    // before that group's COMMIT and answers after it.
    expect(seen).toEqual(['insert:ok', 'commit:ok', 'insert:error', 'select:ok', 'commit:ok']);
    // Kysely's own queries are timed by its log hook (storage/query-observers.ts), not twice here.
    seen.length = 0;
    await db.insertInto('items').values({ id: 3, name: 'through kysely' }).execute();
    expect(seen).toEqual(['commit:ok']);
  });

  it('refuse a control statement when bound', () => {
    expect(() => dialect.core.bind('PRAGMA data_version', { operation: 'raw', cacheable: false })).toThrow(/plain SELECT, INSERT, UPDATE or DELETE/);
  });
});

/**
 * All-or-none groups of statements run in one synchronous step (storage/prepared.ts atomically,
 * the token endpoint's rotation and redemption on SQLite): a savepoint inside the turn's group.
 */
describe('atomic steps', () => {
  const insert = 'insert into items (id, name) values (?, ?)';

  it('are all or none: a throw undoes the steps before it, and the other writes of the group are kept', async () => {
    await db.insertInto('items').values({ id: 10, name: 'taken' }).execute();
    const plain = db.insertInto('items').values({ id: 1, name: 'plain' }).execute();
    const failed = dialect.core.groups.atomically((run) => {
      run(insert, [2, 'first step'], 'insert');
      run(insert, [3, 'taken'], 'insert'); // UNIQUE(name): fails
      return 'unreachable';
    });
    const kept = dialect.core.groups.atomically((run) => {
      run(insert, [4, 'kept'], 'insert');
      return run('update items set used_at = 1 where id = ? and used_at is null', [4], 'update').numAffectedRows;
    });
    await expect(failed).rejects.toThrow(/UNIQUE/);
    expect(await kept).toBe(1n);
    await plain;
    expect(committedNames()).toEqual(['plain', 'kept', 'taken']);
  });

  it('share the turn\'s commit and settle with their value only once it is committed', async () => {
    const before = dialect.core.commits;
    const plain = db.insertInto('items').values({ id: 1, name: 'plain' }).execute();
    const atomic = dialect.core.groups.atomically((run) => {
      run(insert, [2, 'atomic'], 'insert');
      return 'done';
    });
    expect(committedNames()).toEqual([]);
    expect(await atomic).toBe('done');
    expect(committedNames()).toEqual(['plain', 'atomic']);
    await plain;
    expect(dialect.core.commits - before).toBe(1);
  });

  it('wait while a db.transaction() holds the connection, then run after it', async () => {
    const order: string[] = [];
    let pending: Promise<unknown> | undefined;
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 1, name: 'in transaction' }).execute();
      pending = dialect.core.groups.atomically((run) => run(insert, [2, 'atomic'], 'insert')).then(() => order.push('atomic'));
      const seen = await trx.selectFrom('items').select('name').execute();
      expect(seen.map((row) => row.name)).toEqual(['in transaction']);
      order.push('transaction');
    });
    await pending;
    expect(order).toEqual(['transaction', 'atomic']);
    expect(committedNames()).toEqual(['in transaction', 'atomic']);
  });

  it('of 20 racing single-use steps of one row, in and out of transactions, exactly one wins', async () => {
    await db.insertInto('items').values({ id: 1, name: 'code' }).execute();
    const consume = (i: number): Promise<boolean> =>
      i % 2 === 0
        ? dialect.core.groups.atomically((run) => run('update items set used_at = 1 where id = 1 and used_at is null', [], 'update').numAffectedRows === 1n)
        : db.transaction().execute(async (trx) => (await trx.updateTable('items').set({ used_at: 1 }).where('id', '=', 1).where('used_at', 'is', null).executeTakeFirst()).numUpdatedRows === 1n);
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => consume(i)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });
});

describe('statement cache', () => {
  it('reuses a prepared statement per SQL text and drops the least recently used beyond its bound', () => {
    const cache = new StatementCache(native, 2);
    const a = cache.prepare('select 1');
    expect(cache.prepare('select 1')).toBe(a);
    cache.prepare('select 2');
    cache.prepare('select 1');
    cache.prepare('select 3');
    expect(cache.size).toBe(2);
    expect(cache.prepare('select 1')).toBe(a);
    const third = cache.prepare('select 3');
    expect(cache.prepare('select 2')).not.toBe(third);
  });
});

describe('GATEHOUSE_DURABILITY on SQLite', () => {
  it('normal runs synchronous=NORMAL and strict synchronous=FULL, both through the group-commit driver', async () => {
    for (const [durability, expected] of [
      ['normal', 1],
      ['strict', 2],
    ] as const) {
      const handle = connectDatabase(join(dir, `${durability}.db`), { durability });
      try {
        const { rows } = await sql<{ synchronous: bigint }>`pragma synchronous`.execute(handle.db);
        expect(Number(rows[0]?.synchronous)).toBe(expected);
        await sql`create table t (x integer)`.execute(handle.db);
        await Promise.all([1, 2, 3].map((x) => sql`insert into t (x) values (${x})`.execute(handle.db)));
        const { rows: count } = await sql<{ n: bigint }>`select count(*) as n from t`.execute(handle.db);
        expect(Number(count[0]?.n)).toBe(3);
      } finally {
        await handle.close();
      }
    }
  });
});

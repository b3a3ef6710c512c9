import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, sql, type QueryResult } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommitSqliteDialect } from '../../src/storage/sqlite/dialect.js';
import { hotLookup, prepareQuery } from '../../src/storage/prepared.js';
import { assertCacheable, convertOnce, lookupKey, RowCache, writeInvalidatesRows } from '../../src/storage/sqlite/row-cache.js';

/**
 * The row cache of SQLite's hot point lookups (src/storage/sqlite/row-cache.ts): a lookup is answered
 * from memory only while no write since it was read could have changed it — a write in this
 * process to any table but the exempt ones, or a commit by another connection. Pure SQLite, so
 * these run whatever TEST_DATABASE_URL says.
 */
interface Tables {
  webhooks: { id: number; name: string };
  messages: { id: number; webhook_id: number; content: string };
}

let dir: string;
let native: SQLite.Database;
let dialect: GroupCommitSqliteDialect;
let db: Kysely<Tables>;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The webhook's name through the cache, as storage/prepared.ts reads a cacheable lookup: a
 * statement bound once to the core, called with an id given as a string, as the repositories give
 * theirs (SQLite compares it with the integer column).
 */
async function cachedName(id: number): Promise<string | undefined> {
  const query = db.selectFrom('webhooks').select('name').where('id', '=', 0).compile();
  const lookup = dialect.core.bind(query.sql, { operation: 'select', cacheable: true });
  const result = (await lookup([String(id)])) as QueryResult<{ name: string }>;
  return result.rows[0]?.name;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gh-row-cache-'));
  native = new SQLite(join(dir, 'test.db'));
  native.pragma('journal_mode = WAL');
  dialect = new GroupCommitSqliteDialect(native);
  db = new Kysely<Tables>({ dialect });
  await sql`create table webhooks (id integer primary key, name text not null)`.execute(db);
  await sql`create table messages (id integer primary key, webhook_id integer not null references webhooks (id) on delete cascade, content text not null)`.execute(db);
  await db.insertInto('webhooks').values({ id: 1, name: 'first' }).execute();
});

afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('row cache', () => {
  it('answers a repeated lookup from memory until a write could change it', async () => {
    expect(await cachedName(1)).toBe('first');
    const misses = dialect.core.rows.misses;
    expect(await cachedName(1)).toBe('first');
    expect(dialect.core.rows.hits).toBe(1);
    expect(dialect.core.rows.misses).toBe(misses);
  });

  it('a write in this process to the looked-up table is seen by the very next lookup (a rename, a revocation)', async () => {
    expect(await cachedName(1)).toBe('first');
    await db.updateTable('webhooks').set({ name: 'renamed' }).where('id', '=', 1).execute();
    expect(await cachedName(1)).toBe('renamed');
    await db.deleteFrom('webhooks').where('id', '=', 1).execute();
    expect(await cachedName(1)).toBeUndefined();
  });

  // Issue #37 §4: both caches learn an upsert (PostgreSQL's: test/storage/committed-changes.test.ts).
  it('an INSERT … ON CONFLICT DO UPDATE of a looked-up row is seen by the very next lookup; DO NOTHING changes nothing', async () => {
    expect(await cachedName(1)).toBe('first');
    await db.insertInto('webhooks').values({ id: 1, name: 'ignored' }).onConflict((oc) => oc.column('id').doNothing()).execute();
    expect(await cachedName(1)).toBe('first');
    await db.insertInto('webhooks').values({ id: 1, name: 'upserted' }).onConflict((oc) => oc.column('id').doUpdateSet({ name: 'upserted' })).execute();
    expect(await cachedName(1)).toBe('upserted');
  });

  it('a plain INSERT leaves cached lookups in place, and a row it adds is found by the very next lookup of its key', async () => {
    expect(await cachedName(1)).toBe('first');
    // A miss: were it kept, the INSERT below (which ends no generation) would leave it stale.
    expect(await cachedName(2)).toBeUndefined();
    await db.insertInto('webhooks').values({ id: 2, name: 'second' }).execute();
    const hits = dialect.core.rows.hits;
    expect(await cachedName(1)).toBe('first');
    expect(dialect.core.rows.hits).toBe(hits + 1);
    expect(await cachedName(2)).toBe('second');
    // In one group: the lookup of a key an INSERT of the same turn adds.
    const [missing] = await Promise.all([cachedName(3), db.insertInto('webhooks').values({ id: 3, name: 'third' }).execute()]);
    expect(missing).toBeUndefined();
    expect(await cachedName(3)).toBe('third');
  });

  it('writes to messages (the hot path’s one write) leave cached lookups in place', async () => {
    expect(await cachedName(1)).toBe('first');
    await db.insertInto('messages').values({ id: 10, webhook_id: 1, content: 'hi' }).execute();
    await db.updateTable('messages').set({ content: 'edited' }).where('id', '=', 10).execute();
    await db.deleteFrom('messages').where('id', '=', 10).execute();
    const hits = dialect.core.rows.hits;
    expect(await cachedName(1)).toBe('first');
    expect(dialect.core.rows.hits).toBe(hits + 1);
  });

  it('a commit by another connection (another process on the file) is seen from the next event-loop turn on', async () => {
    expect(await cachedName(1)).toBe('first');
    const other = new SQLite(join(dir, 'test.db'));
    try {
      other.prepare("update webhooks set name = 'elsewhere' where id = 1").run();
    } finally {
      other.close();
    }
    await nextTurn();
    expect(await cachedName(1)).toBe('elsewhere');
  });

  it('a lookup answered while a write to its table was still to come in the same group is not kept', async () => {
    expect(await cachedName(1)).toBe('first');
    // A message insert opens the turn's write group; the lookup joins it and answers after COMMIT,
    // by which time the rename below has run: what it read must not be kept as current.
    await db.updateTable('webhooks').set({ name: 'second' }).where('id', '=', 1).execute();
    const insert = db.insertInto('messages').values({ id: 11, webhook_id: 1, content: 'x' }).execute();
    const lookup = cachedName(1);
    const rename = db.updateTable('webhooks').set({ name: 'third' }).where('id', '=', 1).execute();
    await Promise.all([insert, rename]);
    expect(await lookup).toBe('second');
    expect(await cachedName(1)).toBe('third');
  });

  it('a db.transaction() that rolls back leaves nothing of its writes in memory', async () => {
    expect(await cachedName(1)).toBe('first');
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.updateTable('webhooks').set({ name: 'never' }).where('id', '=', 1).execute();
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await cachedName(1)).toBe('first');
  });

  it('keeps at most its bound of lookups per statement; a new lookup takes the place of the one picked', () => {
    const picked: number[] = [];
    const cache = new RowCache(2, (size) => {
      picked.push(size);
      return 1;
    });
    const result = (n: number): QueryResult<unknown> => ({ rows: [{ n }] });
    cache.set('select a', '1', cache.generation, result(1));
    cache.set('select a', '2', cache.generation, result(2));
    cache.set('select a', '3', cache.generation, result(3));
    cache.set('select b', '1', cache.generation, result(4));
    expect(picked).toEqual([2]);
    expect(cache.size).toBe(3);
    expect(cache.get('select a', '1')).toEqual(result(1));
    expect(cache.get('select a', '2')).toBeUndefined();
    expect(cache.get('select a', '3')).toEqual(result(3));
    expect(cache.get('select b', '1')).toEqual(result(4));
    // Read again, a kept lookup is replaced in place: nothing is evicted for it.
    cache.set('select a', '3', cache.generation, result(5));
    expect(picked).toEqual([2]);
    expect(cache.get('select a', '3')).toEqual(result(5));
  });

  it('still answers from memory when requests cycle over more lookups than its bound (a round-robin sender)', () => {
    // A fixed sequence stands in for the random pick: what matters is that the victim is not
    // always the oldest, which would miss every lookup of a cycle longer than the bound.
    let seed = 12345;
    const cache = new RowCache(100, (size) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % size;
    });
    const result: QueryResult<unknown> = { rows: [{ n: 1 }] };
    for (let round = 0; round < 20; round += 1) {
      for (let key = 0; key < 140; key += 1) {
        if (cache.get('select a', String(key)) === undefined) cache.set('select a', String(key), cache.generation, result);
      }
    }
    expect(cache.size).toBe(100);
    expect(cache.hits / (cache.hits + cache.misses)).toBeGreaterThan(0.3);
  });

  it('refuses a result read in a generation that has ended since', () => {
    const cache = new RowCache();
    const generation = cache.generation;
    cache.invalidate();
    cache.set('select a', '1', generation, { rows: [] });
    expect(cache.get('select a', '1')).toBeUndefined();
  });

  it('keeps no miss: a plain INSERT, which ends no generation, could add its row', () => {
    const cache = new RowCache();
    cache.set('select a', '1', cache.generation, { rows: [] });
    expect(cache.get('select a', '1')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('exempts plain writes to the exempt tables and plain INSERTs into any table; any other write, or one it cannot read, ends the generation', () => {
    expect(writeInvalidatesRows('insert into "messages" ("id", "content") values (?, ?)')).toBe(false);
    expect(writeInvalidatesRows('update "messages" set "content" = ? where "id" = ?')).toBe(false);
    expect(writeInvalidatesRows('delete from "messages" where "id" = ?')).toBe(false);
    // The token endpoint's single-use rows: used up by an UPDATE, read by no cached lookup.
    expect(writeInvalidatesRows('update "oauth_refresh_tokens" set "used_at" = ?, "successor_hash" = ? where "token_hash" = ?')).toBe(false);
    expect(writeInvalidatesRows('update "oauth_codes" set "used_at" = ? where "code_hash" = ?')).toBe(false);
    // A plain INSERT only adds a row, and a kept answer is a row found by a unique key.
    expect(writeInvalidatesRows('insert into "webhooks" ("id") values (?)')).toBe(false);
    expect(writeInvalidatesRows('insert into "oauth_access_tokens" ("token_hash", "grant_id") values (?, ?)')).toBe(false);
    // Writes that can change or delete an existing row are not plain INSERTs.
    expect(writeInvalidatesRows('insert into "webhooks" ("id", "name") values (?, ?) on conflict ("id") do update set "name" = ?')).toBe(true);
    expect(writeInvalidatesRows('insert or replace into "webhooks" ("id") values (?)')).toBe(true);
    expect(writeInvalidatesRows('replace into "webhooks" ("id") values (?)')).toBe(true);
    expect(writeInvalidatesRows('update "webhooks" set "name" = ?')).toBe(true);
    expect(writeInvalidatesRows('delete from "oauth_access_tokens" where "grant_id" = ?')).toBe(true);
    expect(writeInvalidatesRows('update "oauth_access_tokens" set "expires_at" = ?')).toBe(true);
    expect(writeInvalidatesRows('delete from "users" where "id" = ?')).toBe(true);
    // INSERT … SELECT adds rows too, whatever it reads.
    expect(writeInvalidatesRows('insert into "messages_archive" select * from "messages"')).toBe(false);
    expect(writeInvalidatesRows('with gone as (select 1) delete from "messages"')).toBe(true);
    expect(writeInvalidatesRows('create table t (x)')).toBe(true);
  });

  it('keys a lookup by its string parameters, and does not cache lookups with other values', () => {
    expect(lookupKey(['123'])).toBe('123');
    expect(lookupKey(['a', 'b'])).toBe('a\u0000b');
    // A value holding the separator could pass for two others: not cached.
    expect(lookupKey(['a\u0000', 'b'])).toBeUndefined();
    expect(lookupKey([1])).toBeUndefined();
    expect(lookupKey(['a', null])).toBeUndefined();
    expect(lookupKey([Buffer.from('a')])).toBeUndefined();
  });
});

describe('rows converted once (convertOnce)', () => {
  it('a cached row, answered again, gives the same converted value; a row read afresh is converted afresh', async () => {
    let conversions = 0;
    const toName = convertOnce((row: { name: string }) => {
      conversions += 1;
      return { name: row.name.toUpperCase(), tags: [row.name] };
    });
    const lookup = dialect.core.bind(db.selectFrom('webhooks').select('name').where('id', '=', 0).compile().sql, { operation: 'select', cacheable: true });
    const first = toName((await lookup(['1'])).rows[0] as { name: string });
    const again = toName((await lookup(['1'])).rows[0] as { name: string });
    expect(again).toBe(first);
    expect(conversions).toBe(1);
    await db.updateTable('webhooks').set({ name: 'renamed' }).where('id', '=', 1).execute();
    expect(toName((await lookup(['1'])).rows[0] as { name: string })).toEqual({ name: 'RENAMED', tags: ['renamed'] });
    expect(conversions).toBe(2);
  });

  it('freezes the shared value and its arrays: a caller cannot change another request\'s answer', () => {
    const convert = convertOnce((row: { name: string }) => ({ name: row.name, tags: [row.name] }));
    const value = convert({ name: 'a' });
    expect(() => {
      (value as { name: string }).name = 'b';
    }).toThrow(TypeError);
    expect(() => value.tags.push('b')).toThrow(TypeError);
    expect(value).toEqual({ name: 'a', tags: ['a'] });
  });
});

describe('rows as objects (raw mode)', () => {
  it('match better-sqlite3’s own: every column in order, later duplicate names winning, nulls, big integers and blobs', async () => {
    native.defaultSafeIntegers(true);
    const query = sql<Record<string, unknown>>`select 1 as a, null as b, 9007199254740993 as c, x'0102' as d, 'x' as a`;
    const { rows } = await query.execute(db);
    const direct = native.prepare(`select 1 as a, null as b, 9007199254740993 as c, x'0102' as d, 'x' as a`).all();
    expect(rows).toEqual(direct);
    expect(Object.keys(rows[0] ?? {})).toEqual(['a', 'b', 'c', 'd']);
    expect(rows[0]).toEqual({ a: 'x', b: null, c: 9007199254740993n, d: Buffer.from([1, 2]) });
  });
});

describe('the row cache contract is checked where a lookup is declared (issue #25 item 1)', () => {
  it('declaring a cacheable lookup of messages (the experiment of ARCHITECTURE-REVIEW §2.2) throws, naming the table and the rule', () => {
    const declare = () =>
      prepareQuery<{ id: string; webhookId: string }>()((db, v) => db.selectFrom('messages').select(['id', 'content']).where('id', '=', v.id).where('webhook_id', '=', v.webhookId), { cacheable: true });
    expect(declare).toThrow(/may not read "messages": writes to it do not invalidate the row cache/);
    expect(() => hotLookup({ table: 'messages', key: 'id', convert: (row) => ({ id: String(row.id) }) })).toThrow(/may not read "messages"/);
  });

  it('a cacheable lookup that only joins messages is refused too', () => {
    expect(() =>
      prepareQuery<{ id: string }>()((db, v) => db.selectFrom('webhooks').innerJoin('messages', 'messages.webhook_id', 'webhooks.id').select('webhooks.id').where('webhooks.id', '=', v.id), { cacheable: true }),
    ).toThrow(/may not read "messages"/);
  });

  it('a cacheable lookup that calls the clock is refused: its answer must be a pure function of its parameters', () => {
    expect(() =>
      prepareQuery<{ hash: string }>()((db, v) => db.selectFrom('oauth_access_tokens').select('user_id').where('token_hash', '=', v.hash).where('expires_at', '>', sql<number>`unixepoch()`), { cacheable: true }),
    ).toThrow(/pure function of its parameters, but calls "unixepoch"/);
    for (const clock of ['now()', 'CURRENT_TIMESTAMP', "datetime('now')", "strftime('%s', 'now')", 'random()']) {
      expect(() => assertCacheable(`select "id" from "webhooks" where "id" = ? and "created_at" < ${clock}`), clock).toThrow(/pure function/);
    }
  });

  it('the same statements without the cache, and cached lookups of other tables, are accepted', () => {
    expect(() => prepareQuery<{ id: string }>()((db, v) => db.selectFrom('messages').selectAll().where('id', '=', v.id))).not.toThrow();
    expect(() => prepareQuery<{ now: number }>()((db, v) => db.selectFrom('webhooks').select('id').where('created_at', '<', v.now), { cacheable: true })).not.toThrow();
    expect(() => assertCacheable('select "id", "messages_sent" from "webhooks" where "id" = ?')).not.toThrow();
  });

  it('the SQLite core refuses to bind such a statement as cacheable, whoever binds it', () => {
    const query = db.selectFrom('messages').select('content').where('id', '=', 0).compile();
    expect(() => dialect.core.bind(query.sql, { operation: 'select', cacheable: true })).toThrow(/may not read "messages"/);
    expect(() => dialect.core.bind(query.sql, { operation: 'select', cacheable: false })).not.toThrow();
  });
});

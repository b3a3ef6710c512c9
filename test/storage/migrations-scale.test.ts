import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { listMessagePartitions, dropExpiredMessagePartitions, ensureMessagePartitions, PARTITION_WEEK_MS, partitionName, snowflakeAt, weekStart } from '../../src/storage/message-partitions.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { migrateUpTo, testDialect, type TestDatabase } from '../support/database.js';
import { freshDatabaseEachTest } from '../support/migration-tests.js';

/**
 * Issue #26 §3: the `-scale` migration partitions messages by week on PostgreSQL (keeping the rows
 * of an existing table) and leaves SQLite as it was; retention drops whole partitions.
 */

const BEFORE = '2026-11-25-10-membership-consent-sec-membership';
const DAY = 24 * 60 * 60 * 1000;
const isPg = testDialect === 'postgres';
if (!isPg) console.warn('test/storage/migrations-scale.test.ts: the partition and retention tests are skipped: they need PostgreSQL (TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test)');

/** A person, a server and a channel: what a message row refers to. */
async function seedChannel(db: Kysely<unknown>): Promise<void> {
  await sql`insert into users (id, username, username_key, name, created_at) values (1, 'a', 'a', 'A', 0)`.execute(db);
  await sql`insert into servers (id, name, owner_id, created_at) values (2, 'S', 1, 0)`.execute(db);
  await sql`insert into channels (id, server_id, name, created_at) values (3, 2, 'c', 0)`.execute(db);
}

async function insertMessage(db: Kysely<unknown>, id: bigint, content: string): Promise<void> {
  await sql`insert into messages (id, channel_id, author_id, content, embeds, created_at) values (${id.toString()}, 3, 1, ${content}, '[]', 0)`.execute(db);
}

async function messagesOf(db: Kysely<unknown>): Promise<string[]> {
  return (await sql<{ content: string }>`select content from messages where channel_id = 3 order by id`.execute(db)).rows.map((r) => r.content);
}

describe('the -scale migration (messages partitioned by week on PostgreSQL)', () => {
  let t: TestDatabase;
  let db: Kysely<unknown>;
  freshDatabaseEachTest((fresh, untyped) => {
    t = fresh;
    db = untyped;
  });

  it('keeps every existing message and every query on them', async () => {
    await migrateUpTo(t.handle, BEFORE);
    await seedChannel(db);
    const now = Date.now();
    const old = snowflakeAt(now - 400 * DAY);
    const recent = snowflakeAt(now - 1000);
    await insertMessage(db, old, 'a year ago');
    await insertMessage(db, recent, 'just now');
    await migrateToLatest(t.handle.db);

    expect(await messagesOf(db)).toEqual(['a year ago', 'just now']);
    // By id (a webhook's message), newest of a channel, edit and delete all still work.
    const byId = await sql<{ content: string }>`select content from messages where id = ${old.toString()}`.execute(db);
    expect(byId.rows[0]?.content).toBe('a year ago');
    await sql`update messages set content = 'edited' where id = ${recent.toString()}`.execute(db);
    const newest = await sql<{ content: string }>`select content from messages where channel_id = 3 order by id desc limit 1`.execute(db);
    expect(newest.rows[0]?.content).toBe('edited');
    const later = snowflakeAt(now + 2 * PARTITION_WEEK_MS);
    await insertMessage(db, later, 'in two weeks');
    await sql`delete from messages where id = ${old.toString()}`.execute(db);
    expect(await messagesOf(db)).toEqual(['edited', 'in two weeks']);
    // The primary key still refuses a duplicate id.
    await expect(insertMessage(db, later, 'again')).rejects.toThrow();
    // A channel's deletion still takes its messages with it (the foreign key moved to the new table).
    await sql`delete from channels where id = 3`.execute(db);
    expect(await messagesOf(db)).toEqual([]);

    if (isPg) {
      const partitions = await listMessagePartitions(db);
      const names = partitions.map((p) => p.name);
      expect(names[0]).toBe('messages_before_partitioning');
      expect(names).toContain('messages_default');
      // The first partition ends with this week; each of the 4 weeks after it has its own.
      for (let k = 1; k <= 4; k += 1) expect(names).toContain(partitionName(weekStart(now) + k * PARTITION_WEEK_MS));
      expect(names).not.toContain(partitionName(weekStart(now) + 5 * PARTITION_WEEK_MS));
    } else {
      const kind = await sql<{ sql: string }>`select sql from sqlite_master where name = 'messages'`.execute(db);
      expect(kind.rows[0]?.sql).not.toMatch(/partition/i);
    }
  });

  it.skipIf(!isPg)('routes each message to its week, and moves rows out of the default partition when their week gets one', async () => {
    await migrateToLatest(t.handle.db);
    await seedChannel(db);
    const now = Date.now();
    const inThreeWeeks = snowflakeAt(now + 3 * PARTITION_WEEK_MS) + 5n;
    await insertMessage(db, inThreeWeeks, 'three weeks ahead');
    const part = async (id: bigint) => (await sql<{ part: string }>`select tableoid::regclass::text as part from messages where id = ${id.toString()}`.execute(db)).rows[0]?.part;
    expect(await part(inThreeWeeks)).toBe(partitionName(weekStart(now + 3 * PARTITION_WEEK_MS)));

    const farAhead = now + 20 * PARTITION_WEEK_MS;
    const far = snowflakeAt(farAhead) + 7n;
    await insertMessage(db, far, 'twenty weeks ahead');
    expect(await part(far)).toBe('messages_default');
    const created = await ensureMessagePartitions(db, farAhead, 0);
    expect(created.at(-1)).toBe(partitionName(weekStart(farAhead)));
    expect(await part(far)).toBe(partitionName(weekStart(farAhead)));
    expect(await messagesOf(db)).toEqual(['three weeks ahead', 'twenty weeks ahead']);
    // Asking again creates nothing.
    expect(await ensureMessagePartitions(db, farAhead, 0)).toEqual([]);
  });

  it.skipIf(!isPg)('retention drops the partitions older than it and keeps every younger message; 0 drops nothing', async () => {
    await migrateToLatest(t.handle.db);
    await seedChannel(db);
    const now = Date.now();
    const a = now + 10 * PARTITION_WEEK_MS;
    const b = now + 14 * PARTITION_WEEK_MS;
    await ensureMessagePartitions(db, b);
    await insertMessage(db, snowflakeAt(now), 'today');
    await insertMessage(db, snowflakeAt(a) + 1n, 'week a');
    await insertMessage(db, snowflakeAt(b) + 1n, 'week b');

    expect(await dropExpiredMessagePartitions(db, b + DAY, 0)).toEqual([]);
    const dropped = await dropExpiredMessagePartitions(db, b + DAY, 14);
    // Every partition whose newest possible message is more than 14 days before b + 1 day went,
    // the first one (before partitioning) included; b's week stayed.
    expect(dropped).toContain('messages_before_partitioning');
    expect(dropped).toContain(partitionName(weekStart(a)));
    expect(dropped).not.toContain(partitionName(weekStart(b)));
    expect(dropped).not.toContain('messages_default');
    expect(await messagesOf(db)).toEqual(['week b']);
    const left = (await listMessagePartitions(db)).map((p) => p.name);
    expect(left).toContain(partitionName(weekStart(b)));
    expect(left).toContain('messages_default');
    // A message of a dropped week can no longer be found; inserting into a kept week still works.
    await insertMessage(db, snowflakeAt(b) + 2n, 'week b again');
    expect(await messagesOf(db)).toEqual(['week b', 'week b again']);
  });

  it.skipIf(!isPg)('migrating down turns the partitions back into one table with every message', async () => {
    await migrateToLatest(t.handle.db);
    await seedChannel(db);
    const now = Date.now();
    await insertMessage(db, snowflakeAt(now - 30 * DAY), 'last month');
    await insertMessage(db, snowflakeAt(now + 2 * PARTITION_WEEK_MS), 'in two weeks');
    await migrateUpTo(t.handle, BEFORE);
    expect(await listMessagePartitions(db)).toEqual([]);
    expect(await messagesOf(db)).toEqual(['last month', 'in two weeks']);
    const kind = await sql<{ relkind: string }>`select relkind from pg_class where oid = to_regclass('messages')`.execute(db);
    expect(kind.rows[0]?.relkind).toBe('r');
    // Primary key and foreign key are back: a duplicate is refused, a channel's deletion cascades.
    await expect(insertMessage(db, snowflakeAt(now - 30 * DAY), 'again')).rejects.toThrow();
    await sql`delete from channels where id = 3`.execute(db);
    expect(await messagesOf(db)).toEqual([]);
  });
});

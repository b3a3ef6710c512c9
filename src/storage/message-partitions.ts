import { sql, type Kysely } from 'kysely';
import { DISCORD_EPOCH } from '../core/snowflake.js';

/**
 * PostgreSQL only (issue #26 §3): `messages` is range-partitioned on its id. A snowflake id is the
 * message's creation time in its high bits (DESIGN §1: milliseconds since Discord's epoch << 22),
 * so a range of ids is a range of time, and the primary key (id) already contains the partition
 * key, as PostgreSQL requires of a partitioned table's unique constraints. Every query keeps
 * working unchanged: the ones by id (a webhook's message, edit, delete) are pruned to one
 * partition; a channel's newest messages are an ordered append of each partition's
 * messages_channel_idx, newest partition first.
 *
 * One partition per week (Monday 00:00 UTC), created ahead of time by the maintenance job
 * (storage/maintenance.ts); a DEFAULT partition catches a message whose week has no partition
 * yet (the job not run for weeks, or a clock far ahead), and the job moves such rows into the
 * week's partition when it creates it. Retention (GATEHOUSE_MESSAGE_RETENTION_DAYS) drops whole
 * partitions — no DELETE, no vacuum debt — so a message lives at least the retention period and
 * at most one week more.
 */

export const PARTITION_WEEK_MS = 7 * 24 * 60 * 60 * 1000;
/** Weeks of partitions kept ready ahead of the current one. */
export const PARTITIONS_AHEAD = 4;
/** 1970-01-05 was a Monday: week boundaries are this plus whole weeks. */
const MONDAY = 4 * 24 * 60 * 60 * 1000;
export const DEFAULT_PARTITION = 'messages_default';

/** The start (ms) of the partition week holding `ms`. */
export function weekStart(ms: number): number {
  return Math.floor((ms - MONDAY) / PARTITION_WEEK_MS) * PARTITION_WEEK_MS + MONDAY;
}

/** The smallest snowflake id created at `ms` (worker 0, sequence 0). */
export function snowflakeAt(ms: number): bigint {
  return BigInt(Math.max(0, ms - DISCORD_EPOCH)) << 22n;
}

/** The creation time (ms) of a snowflake id. */
export function snowflakeMs(id: bigint): number {
  return Number(id >> 22n) + DISCORD_EPOCH;
}

/** messages_p20261123: the week's first day. */
export function partitionName(startMs: number): string {
  return `messages_p${new Date(startMs).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

export interface MessagePartition {
  name: string;
  /** Inclusive lower and exclusive upper id bound; undefined for MINVALUE / the default partition. */
  from: bigint | undefined;
  to: bigint | undefined;
  isDefault: boolean;
}

/** Parses pg_get_expr(relpartbound): FOR VALUES FROM ('1') TO ('2'), FROM (MINVALUE) TO (…), DEFAULT. */
export function parseBound(name: string, bound: string): MessagePartition {
  if (bound.trim() === 'DEFAULT') return { name, from: undefined, to: undefined, isDefault: true };
  const m = /FROM \((.+?)\) TO \((.+?)\)/.exec(bound);
  if (!m) throw new Error(`unexpected partition bound of ${name}: ${bound}`);
  const value = (text: string): bigint | undefined => (/^MINVALUE|MAXVALUE$/.test(text) ? undefined : BigInt(text.replaceAll("'", '')));
  return { name, from: value(m[1] as string), to: value(m[2] as string), isDefault: false };
}

/** The partitions of `messages` in the current schema; empty when the table is not partitioned. */
export async function listMessagePartitions(db: Kysely<unknown>): Promise<MessagePartition[]> {
  const { rows } = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass('messages')`.execute(db);
  return rows.map((r) => parseBound(r.name, r.bound)).sort((a, b) => (a.isDefault ? 1 : b.isDefault ? -1 : (a.from ?? -1n) < (b.from ?? -1n) ? -1 : 1));
}

/**
 * Creates the partition [from, to) named `name`, moving any rows of that range out of the
 * default partition first (PostgreSQL refuses to add a partition whose rows sit in the default
 * one). One transaction: a concurrent insert waits on the default partition's lock, then lands
 * in the new partition.
 */
async function createPartition(db: Kysely<unknown>, name: string, from: bigint, to: bigint): Promise<void> {
  // Inside a migration the caller's transaction is the one.
  const inTransaction = (work: (tx: Kysely<unknown>) => Promise<void>) => (db.isTransaction ? work(db) : db.transaction().execute(work));
  await inTransaction(async (tx) => {
    await sql`create table ${sql.id(name)} (like messages including defaults including constraints)`.execute(tx);
    await sql`with moved as (delete from ${sql.id(DEFAULT_PARTITION)} where id >= ${from.toString()}::bigint and id < ${to.toString()}::bigint returning *)
      insert into ${sql.id(name)} select * from moved`.execute(tx);
    await sql`alter table messages attach partition ${sql.id(name)} for values from (${sql.lit(from.toString())}) to (${sql.lit(to.toString())})`.execute(tx);
  });
}

/**
 * Makes sure every week up to the PARTITIONS_AHEAD weeks after `now`'s has a partition; returns
 * the names created. Partitions only ever start at the highest upper bound so far, so ranges
 * never overlap whatever the clock says.
 */
export async function ensureMessagePartitions(db: Kysely<unknown>, now: number, ahead = PARTITIONS_AHEAD): Promise<string[]> {
  const partitions = await listMessagePartitions(db);
  if (partitions.length === 0) return [];
  let high = partitions.reduce<bigint | undefined>((h, p) => (p.to !== undefined && (h === undefined || p.to > h) ? p.to : h), undefined);
  const created: string[] = [];
  const last = weekStart(now) + ahead * PARTITION_WEEK_MS;
  // From the first week no partition covers, one partition per week: a gap (the job not run for
  // weeks) is filled week by week, and rows the default partition caught meanwhile move out.
  for (let week = high === undefined ? weekStart(now) : weekStart(snowflakeMs(high)); week <= last; week += PARTITION_WEEK_MS) {
    const to = snowflakeAt(week + PARTITION_WEEK_MS);
    if (high !== undefined && to <= high) continue;
    const from = high ?? snowflakeAt(week);
    const name = partitionName(week);
    await createPartition(db, name, from, to);
    created.push(name);
    high = to;
  }
  return created;
}

/**
 * Drops every partition whose newest possible message is older than `retentionDays` before
 * `now` (its upper bound at or below the cut-off); never the default partition, never one that
 * could hold a message younger than the retention. Returns the names dropped.
 */
export async function dropExpiredMessagePartitions(db: Kysely<unknown>, now: number, retentionDays: number): Promise<string[]> {
  if (retentionDays <= 0) return [];
  const cutoff = snowflakeAt(now - retentionDays * 24 * 60 * 60 * 1000);
  const dropped: string[] = [];
  for (const p of await listMessagePartitions(db)) {
    if (p.isDefault || p.to === undefined || p.to > cutoff) continue;
    // Detach, then drop: the drop itself then holds no lock on the parent that inserts wait for.
    await sql`alter table messages detach partition ${sql.id(p.name)}`.execute(db);
    await sql`drop table ${sql.id(p.name)}`.execute(db);
    dropped.push(p.name);
  }
  return dropped;
}

import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { DEFAULT_PARTITION, ensureMessagePartitions, PARTITION_WEEK_MS, snowflakeAt, snowflakeMs, weekStart } from '../message-partitions.js';

/**
 * Issue #26 §3, PostgreSQL only (SQLite is unchanged):
 * - `messages` becomes range-partitioned on id (storage/message-partitions.ts). The existing table
 *   keeps its rows and becomes the first partition, from MINVALUE to the end of the week of its
 *   newest message (or of now, when later): attached, not copied, so the migration takes as long
 *   as PostgreSQL's scan that checks the rows fit the bound. A default partition and the next
 *   weeks' partitions follow.
 * - Indexes on expires_at of access and refresh tokens and sessions (codes have one already), so that the purge of expired rows
 *   (storage/maintenance.ts) finds them without reading the tables. Their keys grow with time,
 *   so an insert appends at the index's right edge.
 * Frozen once released.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;

  const [row] = (await sql<{ max_id: string | null; now_ms: string }>`select max(id)::text as max_id, (extract(epoch from clock_timestamp()) * 1000)::bigint::text as now_ms from messages`.execute(db)).rows;
  const nowMs = Number(row?.now_ms);
  const newest = row?.max_id ? snowflakeMs(BigInt(row.max_id)) : nowMs;
  const firstEnd = weekStart(Math.max(nowMs, newest)) + PARTITION_WEEK_MS;

  // Index and constraint names are per schema: the old table's give way to the new table's.
  await sql`alter table messages rename to messages_before_partitioning`.execute(db);
  await sql`alter index messages_pkey rename to messages_before_partitioning_pkey`.execute(db);
  await sql`alter index messages_channel_idx rename to messages_before_partitioning_channel_idx`.execute(db);
  await sql`
    create table messages (
      id bigint not null,
      channel_id bigint not null references channels(id) on delete cascade,
      author_id bigint not null,
      webhook_id bigint,
      application_id bigint,
      author_name text,
      author_avatar_url text,
      content text not null,
      embeds text not null,
      created_at bigint not null,
      edited_at bigint,
      primary key (id)
    ) partition by range (id)`.execute(db);
  await sql`create index messages_channel_idx on messages (channel_id, id)`.execute(db);
  await sql`alter table messages attach partition messages_before_partitioning for values from (minvalue) to (${sql.lit(snowflakeAt(firstEnd).toString())})`.execute(db);
  await sql`create table ${sql.id(DEFAULT_PARTITION)} partition of messages default`.execute(db);
  await ensureMessagePartitions(db, nowMs);

  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens', 'sessions']) {
    await db.schema.createIndex(`${table}_expires_idx`).on(table).column('expires_at').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens', 'sessions']) {
    await db.schema.dropIndex(`${table}_expires_idx`).execute();
  }
  await sql`create table messages_unpartitioned (like messages including defaults)`.execute(db);
  await sql`insert into messages_unpartitioned select * from messages`.execute(db);
  await sql`drop table messages cascade`.execute(db);
  await sql`alter table messages_unpartitioned rename to messages`.execute(db);
  await sql`alter table messages add primary key (id)`.execute(db);
  await sql`alter table messages add foreign key (channel_id) references channels(id) on delete cascade`.execute(db);
  await sql`create index messages_channel_idx on messages (channel_id, id)`.execute(db);
}

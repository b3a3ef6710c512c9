// --messages-1m on PostgreSQL: stores many messages quickly, server side (INSERT … SELECT over
// generate_series, in batches), like fill-messages.mjs does for SQLite. The rows look like webhook
// messages of the seeded webhooks; their ids are snowflakes of the past 30 days with worker id
// 1023, so they never collide with ids the server issues afterwards. With messages partitioned by
// week (src/storage/message-partitions.ts) they land in the partitions of their weeks.
import pg from 'pg';

// DESIGN §1: Discord's epoch, as src/core/snowflake.ts.
const DISCORD_EPOCH = 1420070400000;
const BATCH = 200_000;

export async function fillMessagesPg(url, webhooks, count, onProgress) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const ids = webhooks.map((w) => w.id);
    const channels = webhooks.map((w) => w.channelId);
    const start = Date.now() - 30 * 24 * 3600 * 1000;
    // At least 1 ms apart, so (ms, worker 1023, sequence 0) ids are unique.
    const step = Math.max(1, Math.floor((30 * 24 * 3600 * 1000) / count));
    for (let from = 0; from < count; from += BATCH) {
      const to = Math.min(count, from + BATCH) - 1;
      await client.query(
        `insert into messages (id, channel_id, author_id, webhook_id, application_id, author_name, author_avatar_url, content, embeds, created_at, edited_at)
         select ((($1::bigint + i * $2::bigint) - ${DISCORD_EPOCH}) << 22) | (1023::bigint << 12),
                ($4::bigint[])[1 + i % $6], ($3::bigint[])[1 + i % $6], ($3::bigint[])[1 + i % $6], null, 'hook', null,
                'Stored message ' || i || ': deploy of build ' || (i % 9973) || ' finished; nothing to see here, just volume.', '[]',
                $1::bigint + i * $2::bigint, null
         from generate_series($5::bigint, $7::bigint) as i`,
        [start, step, ids, channels, from, ids.length, to],
      );
      onProgress?.(to + 1, count);
    }
    await client.query('analyze messages');
    return Number((await client.query('select count(*)::bigint as n from messages')).rows[0].n);
  } finally {
    await client.end();
  }
}

/** Bytes per stored message on disk: every partition's heap, TOAST and indexes over the row count. */
export async function bytesPerMessage(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select coalesce(sum(pg_total_relation_size(i.inhrelid)), pg_total_relation_size('messages'))::bigint as bytes, (select count(*) from messages)::bigint as n
       from pg_inherits i where i.inhparent = 'messages'::regclass`,
    );
    return Number(rows[0].n) > 0 ? Math.round(Number(rows[0].bytes) / Number(rows[0].n)) : undefined;
  } finally {
    await client.end();
  }
}

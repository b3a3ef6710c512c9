// Round trips per request on PostgreSQL + Redis (issue #26 §1), counted by the database and Redis
// themselves where they can: PostgreSQL's transactions from pg_stat_database (the bench database
// is the server's alone, so its counters are exact), Redis's commands from INFO commandstats
// (server-wide: other clients of the same Redis add noise), and the statements the server sent
// from its own /metrics (db_query_duration_seconds_count: pg_stat_statements is not loaded here).
import { setTimeout as sleep } from 'node:timers/promises';

function parseCommandStats(text) {
  const calls = {};
  for (const line of text.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) calls[m[1]] = Number(m[2]);
  }
  return calls;
}

async function redisInfo(url) {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    return parseCommandStats(await client.info('commandstats'));
  } finally {
    client.disconnect();
  }
}

async function serverStatements(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  let total = 0;
  const byOperation = {};
  for (const line of text.split('\n')) {
    const m = /^db_query_duration_seconds_count\{([^}]*)\} (\d+)/.exec(line);
    if (!m) continue;
    const operation = /operation="([^"]+)"/.exec(m[1])?.[1] ?? '?';
    byOperation[operation] = (byOperation[operation] ?? 0) + Number(m[2]);
    total += Number(m[2]);
  }
  return { total, byOperation };
}

/** Counters of `database` (bench/run.mjs freshDatabase) and `server`; snapshot() before and after a measurement. */
export function roundTripCounters(database, server) {
  const name = new URL(database.url).pathname.slice(1);
  const redisUrl = database.env.REDIS_URL;
  return {
    async snapshot() {
      // A PostgreSQL backend that went idle less than a second after its last report publishes its
      // counters up to 10 s later (PGSTAT_IDLE_INTERVAL): wait that out on both sides.
      await sleep(10_500);
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString: database.url });
      await c.connect();
      const { rows } = await c.query('select xact_commit + xact_rollback as xacts, tup_inserted, tup_updated from pg_stat_database where datname = $1', [name]);
      // Cluster-wide, but nothing else writes during a measurement: the WAL the requests made and
      // how often it was flushed (a commit waits for its flush: synchronous_commit=on).
      const wal = (await c.query('select wal_records, wal_fpi, wal_bytes, wal_sync, (select checkpoints_timed + checkpoints_req from pg_stat_bgwriter) as checkpoints from pg_stat_wal')).rows[0];
      await c.end();
      return {
        xacts: Number(rows[0].xacts),
        inserted: Number(rows[0].tup_inserted),
        updated: Number(rows[0].tup_updated),
        wal: { records: Number(wal.wal_records), fpi: Number(wal.wal_fpi), bytes: Number(wal.wal_bytes), syncs: Number(wal.wal_sync), checkpoints: Number(wal.checkpoints) },
        redis: await redisInfo(redisUrl),
        statements: await serverStatements(server.base),
      };
    },
    perRequest(before, after, requests) {
      const per = (a, b) => Math.round(((a - b) / requests) * 1000) / 1000;
      const redis = {};
      let redisTotal = 0;
      for (const [cmd, calls] of Object.entries(after.redis)) {
        const d = calls - (before.redis[cmd] ?? 0);
        if (d > 0 && cmd !== 'info') {
          redis[cmd] = per(calls, before.redis[cmd] ?? 0);
          redisTotal += d;
        }
      }
      const statements = {};
      for (const [op, n] of Object.entries(after.statements.byOperation)) statements[op] = per(n, before.statements.byOperation[op] ?? 0);
      return {
        requests,
        pgTransactions: per(after.xacts, before.xacts),
        pgRowsInserted: per(after.inserted, before.inserted),
        pgRowsUpdated: per(after.updated, before.updated),
        walBytes: Math.round((after.wal.bytes - before.wal.bytes) / requests),
        walFullPages: per(after.wal.fpi, before.wal.fpi),
        walSyncs: per(after.wal.syncs, before.wal.syncs),
        checkpoints: after.wal.checkpoints - before.wal.checkpoints,
        serverStatements: per(after.statements.total, before.statements.total),
        serverStatementsByOperation: statements,
        redisCommands: Math.round((redisTotal / requests) * 1000) / 1000,
        // A script is one round trip whatever it calls inside (commandstats counts those calls too).
        redisScripts: Math.round(((redis.evalsha ?? 0) + (redis.eval ?? 0)) * 1000) / 1000,
        redisByCommand: redis,
      };
    },
  };
}

/** One line for the report. */
export function roundTripsNote(rt) {
  const ops = Object.entries(rt.serverStatementsByOperation).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ');
  const cmds = Object.entries(rt.redisByCommand).map(([k, v]) => `${k} ${v}`).join(', ');
  return `round trips per request (${rt.requests} requests): PostgreSQL ${rt.pgTransactions} transactions (pg_stat_database), ${rt.serverStatements} statements sent by the server (${ops || 'none'}), ${rt.pgRowsInserted} rows inserted, ${rt.walBytes} bytes of WAL (${rt.walFullPages} full-page images) and ${rt.walSyncs} WAL flushes (pg_stat_wal; ${rt.checkpoints} checkpoints began during the measurement); Redis ${rt.redisScripts} script calls (one round trip each) and ${rt.redisCommands} commands counted in all, those run inside scripts included (INFO commandstats, server-wide: ${cmds || 'none'})`;
}

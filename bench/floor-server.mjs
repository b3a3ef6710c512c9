// The I/O floor of a webhook execute (bench/lib/instances.mjs): node:http making the round trips
// an execute cannot do without on PostgreSQL + Redis, and nothing else. It reads the JSON body,
// takes a per-URL counter in one Redis script call (auto-pipelined, as src/storage/redis.ts sends
// Gatehouse's bucket take), stores the content with one multi-row insert per group of requests,
// one statement in flight at a time (as storage/postgres-batch.ts), and answers 204 once that
// insert committed. No Gatehouse code runs: where N of these behind nginx reach less than one,
// the machine's cores and the round trips, not Gatehouse, set the ×N / ×1 ratio.
//
// Its counter never refuses (the bench sizes its webhooks so that no bucket fills). Its table,
// bench_floor_messages, it creates in the bench's own database before it listens.
import http from 'node:http';
import { Redis } from 'ioredis';
import pg from 'pg';

const FLOOR_TABLE = 'bench_floor_messages';

const redis = new Redis(process.env.REDIS_URL, { enableAutoPipelining: true });
redis.defineCommand('floorTake', {
  numberOfKeys: 1,
  lua: "local n = redis.call('incr', KEYS[1]) if n == 1 then redis.call('pexpire', KEYS[1], 2000) end return n",
});
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });

let queue = [];
let inFlight = false;
let scheduled = false;

function schedule() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(flush);
}

function flush() {
  scheduled = false;
  if (inFlight || queue.length === 0) return;
  const batch = queue;
  queue = [];
  inFlight = true;
  const settle = (status) => {
    inFlight = false;
    for (const res of batch.map((b) => b.res)) {
      res.writeHead(status);
      res.end();
    }
    if (queue.length > 0) schedule();
  };
  pool.query({ name: 'floor-insert', text: `insert into ${FLOOR_TABLE} (content) select unnest($1::text[])`, values: [batch.map((b) => b.content)] }).then(
    () => settle(204),
    () => settle(500),
  );
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
      return;
    }
    let content;
    try {
      content = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).content ?? '');
    } catch {
      res.writeHead(400);
      res.end();
      return;
    }
    redis.floorTake(`floor:${req.url}`).then(
      () => {
        queue.push({ content, res });
        schedule();
      },
      () => {
        res.writeHead(503);
        res.end();
      },
    );
  });
});
server.keepAliveTimeout = 65_000;
await pool.query(`create table if not exists ${FLOOR_TABLE} (id bigserial primary key, content text not null, created_at timestamptz not null default now())`);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => Promise.all([pool.end(), redis.quit()]).finally(() => process.exit(0))));

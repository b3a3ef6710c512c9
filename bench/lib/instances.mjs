// `npm run bench -- --postgres --instances N` (issue #26 §2): N Gatehouse instances on one
// PostgreSQL database and one Redis behind nginx (bench/lib/nginx.mjs), measured beside N bare
// node:http servers behind the same nginx and beside one Gatehouse instance behind it, in the same
// run with the same requests. Besides throughput it records what each answer cost — the instances'
// CPU, nginx's CPU, the PostgreSQL backends' CPU, the statements each instance ran and their time
// (its /metrics), PostgreSQL's transactions (pg_stat_database) and Redis's own command counts and
// time (INFO commandstats) — which `npm run capacity` (scripts/capacity.mjs, docs/capacity.md)
// turns into a sizing. And it checks what must hold across instances: no acknowledged message
// lost (every 2xx execute is in the database), no 5xx, and no webhook let past its bucket.
import { fork, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EMBED_BODY, SMALL_BODY } from './bodies.mjs';
import { request } from './http.mjs';
import { NGINX, startNginx } from './nginx.mjs';
import { BENCH_DIR, cpuMicros, freePort, machineTicks, RssMeter, runLoad, startBare, startFloor, startServer } from './processes.mjs';
import { codeExchangeForm, consentOnce, exchangeCodes, installBot, mintCodes, refreshForm, seedChannels, seedDirectory, seedWebhooks, signIn } from './seed.mjs';

const CONNECTIONS = 50;
const BUCKET = { limit: 10, windowMs: 2000 };
const WEBHOOKS_PER_CHANNEL = 10;
/** Seconds of unmeasured load on each instance before each scenario's measurements. */
const WARMUP_S = 2;
const bucketsRefilled = () => new Promise((resolve) => setTimeout(resolve, BUCKET.windowMs + 200));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The scenarios of bench/run.mjs that make sense through a load balancer (7, the paced one, measures one process's latency). */
export const INSTANCE_SCENARIOS = [
  { n: 1, name: 'execute, no wait, ~100-byte content', needs: 'webhooks' },
  { n: 2, name: 'execute, wait=true, one embed (3 fields)', needs: 'webhooks' },
  { n: 3, name: 'GET /api/v1/users/@me, 1,000 bearer tokens', needs: 'oauth' },
  { n: 4, name: 'token: refresh_token grant (each a new refresh token)', needs: 'oauth' },
  { n: 5, name: 'token: authorization_code + PKCE (codes minted before)', needs: 'oauth' },
  { n: 6, name: 'a few webhooks far past their buckets: correct 429s', needs: 'webhooks' },
];

const sumCpuParts = (pids) => {
  const total = { user: 0, system: 0 };
  for (const pid of pids) {
    const c = cpuMicros(pid);
    if (!c) continue;
    total.user += c.user;
    total.system += c.system;
  }
  return total;
};
const sumCpu = (pids) => {
  const { user, system } = sumCpuParts(pids);
  return user + system;
};
/**
 * CPU time so far of the processes' main threads, the event loops (processes.mjs cpuMicros with
 * the main thread's tid, the pid): what of an instance's CPU its event loop took, the rest being
 * V8's compiler and marking helpers and libuv's pool.
 */
const eventLoopCpu = (pids) => {
  let total = 0;
  for (const pid of pids) {
    const c = cpuMicros(pid, pid);
    if (c) total += c.user + c.system;
  }
  return total;
};

/**
 * How often the processes' main threads (the event loops) left their core, from /proc/<pid>/status
 * (the thread group leader's own counts): `sleeps`, voluntary context switches (the loop had
 * nothing to do and waited in epoll: an event loop that finds one request per wake-up sleeps once
 * per request, a saturated one rarely), and `preemptions`, involuntary ones (the scheduler gave the
 * core to another runnable process; the loop resumes with caches that process used meanwhile).
 */
const sumSwitches = (pids) => {
  const total = { sleeps: 0, preemptions: 0 };
  for (const pid of pids) {
    try {
      const text = readFileSync(`/proc/${pid}/status`, 'utf8');
      const v = /^voluntary_ctxt_switches:\s*(\d+)/m.exec(text);
      const nv = /^nonvoluntary_ctxt_switches:\s*(\d+)/m.exec(text);
      if (!v || !nv) return undefined;
      total.sleeps += Number(v[1]);
      total.preemptions += Number(nv[1]);
    } catch {
      return undefined;
    }
  }
  return total;
};

/**
 * processes.mjs's runLoad, plus the load generator's own CPU (read from /proc when it reports its
 * result, just before it exits): the capacity model needs what the generator took from the
 * shared cores (bench/lib/capacity.mjs predictThisMachine).
 */
function runLoadMeasured(job) {
  return new Promise((resolve, reject) => {
    const child = fork(join(BENCH_DIR, 'load-worker.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    let result;
    let cpu0;
    child.on('message', (m) => {
      if (m.type === 'ready') {
        cpu0 = cpuMicros(child.pid);
        child.send({ type: 'job', job });
      } else if (m.type === 'result') {
        const cpu1 = cpuMicros(child.pid);
        result = { ...m.result, generatorCpuMicros: cpu0 && cpu1 ? cpu1.user + cpu1.system - cpu0.user - cpu0.system : undefined };
      } else if (m.type === 'error') reject(new Error(m.message));
    });
    child.on('exit', (code) => (result ? resolve(result) : reject(new Error(`load worker exited with ${code} and no result`))));
  });
}

/** Sums of the instance's own counters: statements by operation and Redis bucket operations (src/http/metrics.ts). */
function parseMetrics(text) {
  const out = { statements: 0, statementSeconds: 0, byOperation: {}, bucketOps: 0, bucketSeconds: 0 };
  for (const line of text.split('\n')) {
    let m = /^db_query_duration_seconds_(count|sum)\{operation="([^"]+)",outcome="([^"]+)"\} ([0-9.e+-]+)$/.exec(line);
    if (m) {
      const v = Number(m[4]);
      if (m[1] === 'count') {
        out.statements += v;
        out.byOperation[m[2]] = (out.byOperation[m[2]] ?? 0) + v;
      } else out.statementSeconds += v;
      continue;
    }
    m = /^rate_limit_store_duration_seconds_(count|sum)\{operation="([^"]+)"\} ([0-9.e+-]+)$/.exec(line);
    if (m) {
      if (m[1] === 'count') out.bucketOps += Number(m[3]);
      else out.bucketSeconds += Number(m[3]);
    }
  }
  return out;
}

async function instanceMetrics(instances) {
  const all = await Promise.all(instances.map(async (i) => parseMetrics((await request(i.base, { path: '/metrics' })).text)));
  const total = { statements: 0, statementSeconds: 0, byOperation: {}, bucketOps: 0, bucketSeconds: 0 };
  for (const m of all) {
    total.statements += m.statements;
    total.statementSeconds += m.statementSeconds;
    total.bucketOps += m.bucketOps;
    total.bucketSeconds += m.bucketSeconds;
    for (const [k, v] of Object.entries(m.byOperation)) total.byOperation[k] = (total.byOperation[k] ?? 0) + v;
  }
  return total;
}

/** The database's and Redis's own statistics, and the CPU of the PostgreSQL backends serving the bench database. */
async function storeStats(pgClient, dbName, redis) {
  const [db] = (await pgClient.query('select xact_commit::bigint as commits, xact_rollback::bigint as rollbacks, tup_inserted::bigint as inserted, tup_updated::bigint as updated, tup_deleted::bigint as deleted, tup_fetched::bigint as fetched from pg_stat_database where datname = $1', [dbName])).rows;
  const backends = (await pgClient.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName])).rows.map((r) => r.pid);
  const info = await redis.info('commandstats');
  const commands = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) commands[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  return { db: Object.fromEntries(Object.entries(db ?? {}).map(([k, v]) => [k, Number(v)])), backends, commands };
}

function storeDelta(before, after, backendCpu, served) {
  const per = (x) => Math.round((x / served) * 1000) / 1000;
  const db = {};
  for (const k of Object.keys(after.db)) db[k] = per(after.db[k] - (before.db[k] ?? 0));
  let calls = 0;
  let usec = 0;
  const byCommand = {};
  for (const [name, a] of Object.entries(after.commands)) {
    const b = before.commands[name] ?? { calls: 0, usec: 0 };
    if (a.calls === b.calls) continue;
    calls += a.calls - b.calls;
    usec += a.usec - b.usec;
    byCommand[name] = per(a.calls - b.calls);
  }
  return { postgresPerAnswer: { ...db, backendCpuMicros: Math.round((backendCpu / served) * 10) / 10 }, redisPerAnswer: { calls: per(calls), usec: per(usec), byCommand } };
}

/**
 * One measurement through `front` (an nginx base URL), with the CPU of `pids` (the instances
 * behind it), nginx's, and the store statistics around it.
 */
async function measure({ base, pids, nginx, instances, stores }, job) {
  // A PostgreSQL backend that went idle less than a second after its last report publishes its
  // counters up to 10 s later (PGSTAT_IDLE_INTERVAL), so without a wait on both sides the warm-up's
  // and the previous measurement's transactions are counted in this one (bench/lib/round-trips.mjs).
  if (stores) await sleep(stores.settleMs);
  const meter = new RssMeter(pids[0]);
  meter.start();
  const nginxPids = nginx.pids();
  const pg0 = stores ? await storeStats(stores.pg, stores.dbName, stores.redis) : undefined;
  // Per backend: a pool may close a connection and open another during the measurement.
  const backendCpu0 = new Map((pg0?.backends ?? []).map((pid) => [pid, sumCpu([pid])]));
  const metrics0 = instances ? await instanceMetrics(instances) : undefined;
  const cpu0 = sumCpuParts(pids);
  const switches0 = sumSwitches(pids);
  const loop0 = eventLoopCpu(pids);
  const ng0 = sumCpu(nginxPids);
  const machine0 = machineTicks();
  const t0 = Date.now();
  const result = await runLoadMeasured({ ...job, base });
  const t1 = Date.now();
  const cpu1 = sumCpuParts(pids);
  const switches1 = sumSwitches(pids);
  const loop1 = eventLoopCpu(pids);
  const ng1 = sumCpu(nginxPids);
  const machine1 = machineTicks();
  result.peakRssMb = Math.round(meter.stop() * 10) / 10;
  const served = result.totalRequests;
  if (served > 0) {
    const cpu = cpu1.user + cpu1.system - cpu0.user - cpu0.system;
    result.cpuMicrosPerRequest = Math.round((cpu / served) * 10) / 10;
    result.cpuSystemMicrosPerRequest = Math.round(((cpu1.system - cpu0.system) / served) * 10) / 10;
    result.eventLoopMicrosPerAnswer = Math.round(((loop1 - loop0) / served) * 10) / 10;
    if (switches0 && switches1) {
      result.sleepsPerAnswer = Math.round(((switches1.sleeps - switches0.sleeps) / served) * 100) / 100;
      result.preemptionsPerAnswer = Math.round(((switches1.preemptions - switches0.preemptions) / served) * 100) / 100;
    }
    result.nginxCpuMicrosPerRequest = Math.round(((ng1 - ng0) / served) * 10) / 10;
    result.cpuShare = Math.round((cpu / ((t1 - t0) * 1000)) * 1000) / 1000;
    if (result.generatorCpuMicros !== undefined) result.generatorCpuMicrosPerRequest = Math.round((result.generatorCpuMicros / served) * 10) / 10;
  }
  result.wallMicros = (t1 - t0) * 1000;
  if (machine0 && machine1 && machine1.total > machine0.total) result.stealShare = Math.round(((machine1.steal - machine0.steal) / (machine1.total - machine0.total)) * 1000) / 1000;
  if (instances && served > 0) {
    const metrics1 = await instanceMetrics(instances);
    const statements = metrics1.statements - metrics0.statements;
    result.statementsPerAnswer = Math.round((statements / served) * 1000) / 1000;
    result.statementMicrosPerAnswer = Math.round(((metrics1.statementSeconds - metrics0.statementSeconds) * 1e6) / served);
    result.statementsByOperation = Object.fromEntries(Object.entries(metrics1.byOperation).map(([k, v]) => [k, Math.round(((v - (metrics0.byOperation[k] ?? 0)) / served) * 1000) / 1000]));
    result.bucketOpsPerAnswer = Math.round(((metrics1.bucketOps - metrics0.bucketOps) / served) * 1000) / 1000;
  }
  if (stores && served > 0) {
    await sleep(stores.settleMs);
    const pg1 = await storeStats(stores.pg, stores.dbName, stores.redis);
    // Backends still there: their CPU since the start (all of it for one opened meanwhile). A
    // backend that ended during the measurement took its last figures with it: an undercount.
    let backendCpu = 0;
    for (const pid of pg1.backends) backendCpu += Math.max(0, sumCpu([pid]) - (backendCpu0.get(pid) ?? 0));
    Object.assign(result, storeDelta(pg0, pg1, backendCpu, served));
  }
  // The CPU every process of the run took per second of the measurement: the cores this shared
  // machine actually gave the run (other tenants took the rest).
  const perAnswer = (result.cpuMicrosPerRequest ?? 0) + (result.nginxCpuMicrosPerRequest ?? 0) + (result.generatorCpuMicrosPerRequest ?? 0) + (result.postgresPerAnswer?.backendCpuMicros ?? 0) + (result.redisPerAnswer?.usec ?? 0);
  if (served > 0) result.coresUsed = Math.round(((perAnswer * served) / result.wallMicros) * 100) / 100;
  return result;
}

const pick = (r, check429) => ({
  rate: check429 ? r.check429.correct429 / r.duration : r.requestsPerSec,
  requestsPerSec: r.requestsPerSec,
  totalRequests: r.totalRequests,
  latency: r.latency,
  non2xx: r.non2xx,
  errors: r.errors,
  timeouts: r.timeouts,
  statusCodes: r.statusCodes,
  peakRssMb: r.peakRssMb,
  cpuMicrosPerRequest: r.cpuMicrosPerRequest,
  cpuSystemMicrosPerRequest: r.cpuSystemMicrosPerRequest,
  sleepsPerAnswer: r.sleepsPerAnswer,
  eventLoopMicrosPerAnswer: r.eventLoopMicrosPerAnswer,
  preemptionsPerAnswer: r.preemptionsPerAnswer,
  nginxCpuMicrosPerRequest: r.nginxCpuMicrosPerRequest,
  generatorCpuMicrosPerRequest: r.generatorCpuMicrosPerRequest,
  coresUsed: r.coresUsed,
  cpuShare: r.cpuShare,
  stealShare: r.stealShare,
  reused: r.reused,
  statementsPerAnswer: r.statementsPerAnswer,
  statementMicrosPerAnswer: r.statementMicrosPerAnswer,
  statementsByOperation: r.statementsByOperation,
  bucketOpsPerAnswer: r.bucketOpsPerAnswer,
  postgresPerAnswer: r.postgresPerAnswer,
  redisPerAnswer: r.redisPerAnswer,
  ...(r.check429 ? { check429: { total: r.check429.total, tooMany: r.check429.tooMany, correct: r.check429.correct429, badHeaders: r.check429.badHeaders } } : {}),
});

const twoXx = (r) => Object.entries(r.statusCodes ?? {}).reduce((n, [code, count]) => (code.startsWith('2') ? n + count : n), 0);

/**
 * Runs the scenarios through nginx. `ctx`: { opts, log, freshDatabase, dir, processes, databases }.
 * Resolves to the results record (bench/run.mjs writes it).
 */
export async function runInstances(ctx) {
  const { opts, log, freshDatabase, dir, processes, databases } = ctx;
  const n = opts.instances;
  const rounds = opts.rounds ?? 1;
  if (!opts.postgres) throw new Error('--instances needs --postgres: several instances share one PostgreSQL database and one Redis');
  const only = (k) => !opts.only || opts.only.has(k);
  const scenarios = INSTANCE_SCENARIOS.filter((s) => only(s.n));
  const needWebhooks = scenarios.some((s) => s.needs === 'webhooks');
  const needOauth = scenarios.some((s) => s.needs === 'oauth');

  const database = await freshDatabase(opts, join(dir, 'instances'));
  databases.push(database);
  // Redis's INFO commandstats counts every client of the server: a Redis of the bench's own
  // (when BENCH_REDIS_URL names none and Debian's redis-server is here) makes them this run's alone.
  if (!process.env.BENCH_REDIS_URL && existsSync(REDIS_SERVER)) {
    const redisServer = await startRedis(dir);
    processes.push(redisServer);
    database.env.REDIS_URL = redisServer.url;
    log(`a Redis of the bench's own on ${redisServer.url} (its statistics count this run only)`);
  }
  log(`--instances ${n}: seeding through the CLI`);
  const directory = await seedDirectory(database.env);

  log(`starting ${n} bare node:http servers and ${n} Gatehouse instances on one PostgreSQL database and Redis`);
  const bares = [];
  for (let i = 0; i < n; i += 1) {
    const b = await startBare();
    processes.push(b);
    bares.push(b);
  }
  // The I/O floor (bench/floor-server.mjs): the execute's round trips with no Gatehouse code,
  // on the same PostgreSQL database and Redis, for the executes' second control.
  const floors = [];
  if (needWebhooks) {
    for (let i = 0; i < n; i += 1) {
      const f = await startFloor({ DATABASE_URL: database.url, REDIS_URL: database.env.REDIS_URL });
      processes.push(f);
      floors.push(f);
    }
  }
  // The first instance applies the migrations alone; the others start on a migrated database.
  const instances = [await startServer(database.env)];
  processes.push(instances[0]);
  for (const s of await Promise.all(Array.from({ length: n - 1 }, () => startServer(database.env)))) {
    processes.push(s);
    instances.push(s);
  }
  const hostPort = (base) => base.replace('http://', '');
  const [allPort, singlePort, barePort, bareOnePort, floorPort, floorOnePort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  const nginx = await startNginx({
    frontEnds: [
      { name: 'gatehouse', port: allPort, upstreams: instances.map((i) => hostPort(i.base)) },
      { name: 'single', port: singlePort, upstreams: [hostPort(instances[0].base)] },
      { name: 'bare', port: barePort, upstreams: bares.map((b) => hostPort(b.base)) },
      { name: 'bareone', port: bareOnePort, upstreams: [hostPort(bares[0].base)] },
      ...(floors.length > 0
        ? [
            { name: 'floor', port: floorPort, upstreams: floors.map((f) => hostPort(f.base)) },
            { name: 'floorone', port: floorOnePort, upstreams: [hostPort(floors[0].base)] },
          ]
        : []),
    ],
  });
  processes.push(nginx);
  const front = nginx.base('gatehouse');
  log(`nginx ${nginx.pid}: Gatehouse ×${n} on ${front}, Gatehouse ×1 on ${nginx.base('single')}, bare ×${n} on ${nginx.base('bare')}`);

  const { default: pg } = await import('pg');
  const { Redis } = await import('ioredis');
  const pgClient = new pg.Client({ connectionString: process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test' });
  await pgClient.connect();
  const redis = new Redis(database.env.REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
  // The smoke run judges nothing: a second's wait, for its time in CI.
  const stores = { pg: pgClient, redis, dbName: new URL(database.url).pathname.slice(1), settleMs: opts.smoke ? 1100 : 10_500 };
  const instancePids = instances.map((i) => i.pid);
  const targets = {
    all: { base: front, pids: instancePids, nginx, instances, stores },
    single: { base: nginx.base('single'), pids: [instances[0].pid], nginx, instances: [instances[0]], stores },
    bare: { base: nginx.base('bare'), pids: bares.map((b) => b.pid), nginx },
    bareOne: { base: nginx.base('bareone'), pids: [bares[0].pid], nginx },
    ...(floors.length > 0
      ? { floor: { base: nginx.base('floor'), pids: floors.map((f) => f.pid), nginx }, floorOne: { base: nginx.base('floorone'), pids: [floors[0].pid], nginx } }
      : {}),
  };

  try {
    let webhooks = [];
    if (needWebhooks) {
      // Enough webhooks that no bucket fills at bare node:http's rate (bench/run.mjs's rule); the
      // smoke run, which judges nothing, takes 200.
      let count = 200;
      if (!opts.smoke) {
        const probe = await runLoad({ base: targets.bare.base, shape: 'paths', method: 'POST', paths: ['/calibrate'], body: SMALL_BODY, headers: { 'content-type': 'application/json' }, connections: CONNECTIONS, duration: 2 });
        count = Math.ceil(((probe.requestsPerSec * BUCKET.windowMs) / 1000 / BUCKET.limit) * 1.5 / WEBHOOKS_PER_CHANNEL) * WEBHOOKS_PER_CHANNEL;
        log(`bare node:http ×${n} through nginx: ${Math.round(probe.requestsPerSec)} req/s`);
      }
      log(`${count} webhooks`);
      const channelIds = await seedChannels(database.env, directory.server.id, count / WEBHOOKS_PER_CHANNEL);
      const jar = await signIn(front);
      await installBot(front, jar, directory.botApp.client_id, directory.server.id);
      webhooks = await seedWebhooks(front, directory.botApp.bot_token, channelIds, WEBHOOKS_PER_CHANNEL);
    }
    const jar = await signIn(front);
    const clientId = directory.oauthApp.client_id;
    let accessTokens = [];
    let exchangeRate = 200;
    if (needOauth) {
      await consentOnce(front, jar, clientId);
      const t = Date.now();
      const pairs = await exchangeCodes(front, clientId, await mintCodes(front, jar, clientId, 1000));
      exchangeRate = Math.max(200, 1000 / ((Date.now() - t) / 1000));
      accessTokens = pairs.map((p) => p.access);
    }
    // Enough single-use credentials for a measurement (bench/run.mjs's rule, rate × 3 × duration ×
    // 1.3), from at least 4,000 exchanges/s: the seeding client exchanges one code at a time, so
    // its rate says little about 50 connections through nginx (which reached 1,834 refreshes/s
    // with one instance). Requests past the list re-send spent ones and are counted as `reused`:
    // a re-sent code is a replay that revokes its grant, which would charge the grants' cost with
    // revocations no real client causes.
    const singleUse = (duration) => Math.min(150_000, Math.ceil(Math.max(exchangeRate * 3, 4000) * duration * 1.3));

    // Statistics for what the seeding added, and again after each minting below (bench/run.mjs freshDatabase).
    await database.analyze();

    /** A job for scenario `s`; single-use credentials are minted afresh for every measurement. */
    const jobFor = async (s, duration) => {
      const common = { connections: CONNECTIONS, duration };
      const json = { 'content-type': 'application/json' };
      if (s.n === 1) return { ...common, shape: 'paths', method: 'POST', paths: webhooks.map((w) => w.path), body: SMALL_BODY, headers: json };
      if (s.n === 2) return { ...common, shape: 'paths', method: 'POST', paths: webhooks.map((w) => `${w.path}?wait=true`), body: EMBED_BODY, headers: json };
      if (s.n === 3) return { ...common, shape: 'bearer', path: '/api/v1/users/@me', tokens: accessTokens };
      if (s.n === 4) {
        const pairs = await exchangeCodes(front, clientId, await mintCodes(front, jar, clientId, singleUse(duration)));
        await database.analyze();
        return { ...common, shape: 'forms', method: 'POST', path: '/api/oauth2/token', bodies: pairs.map((p) => refreshForm(clientId, p.refresh)) };
      }
      if (s.n === 5) {
        const codes = await mintCodes(front, jar, clientId, singleUse(duration));
        await database.analyze();
        return { ...common, shape: 'forms', method: 'POST', path: '/api/oauth2/token', bodies: codes.map((c) => codeExchangeForm(clientId, c)) };
      }
      return { ...common, shape: 'paths', method: 'POST', paths: webhooks.slice(0, 5).map((w) => w.path), body: SMALL_BODY, headers: json, check429: true };
    };

    const results = [];
    let acknowledged = 0;
    /**
     * A control measured spread over the N processes behind `many` and on the one behind `one`,
     * in the scenario's turn (the sides swap from one scenario to the next, as ×N and ×1 do).
     * `job()` is awaited before each side; `what(k)` names the side for the log.
     */
    const manyAndOne = async (many, one, job, what) => {
      const pair = {};
      const sides = [['many', many], ['one', one]];
      if (results.length % 2 === 1) sides.reverse();
      for (const [key, target] of sides) {
        const j = await job();
        log(`${what(key === 'many' ? n : 1)}, ${j.duration} s`);
        const m = await measure(target, j);
        pair[key] = { rate: m.requestsPerSec, cpuMicrosPerRequest: m.cpuMicrosPerRequest, coresUsed: m.coresUsed, non2xx: m.non2xx };
      }
      pair.scaling = pair.many.rate / pair.one.rate;
      return pair;
    };
    for (const s of scenarios) {
      const duration = opts.duration;
      const check429 = s.n === 6;
      // Executes are counted against the messages stored; grants spend single-use credentials.
      const executes = s.needs === 'webhooks';
      const grant = s.n === 4 || s.n === 5;
      // The bare servers answer any request alike: one job serves them.
      const bareJob = await jobFor(grant ? { n: 3 } : s, duration);
      await bucketsRefilled();
      log(`scenario ${s.n} (${s.name}): bare node:http ×${n} through nginx, ${duration} s`);
      const b = await measure(targets.bare, grant ? { ...bareJob, shape: 'forms', method: 'POST', path: '/api/oauth2/token', bodies: ['grant_type=refresh_token'] } : bareJob);
      const row = { scenario: s.n, name: s.name, duration, instances: n, bare: pick(b, false) };
      // Every instance has served this scenario before either side is measured, as instances that
      // have been up for a while have. Without it the ×N side paid for instances 1..N-1's first
      // requests of a route (V8 compiling its code in each process) and for filling their
      // per-instance memories (webhook hints, remembered bearer tokens: one select per webhook or
      // token per instance), while instance 0, the ×1 side, had been warmed by the seeding and
      // every earlier measurement: a cost of starting processes, not of running several.
      // Webhooks and tokens go to each instance directly (each request takes the next of the
      // list, so every one is seen); single-use credentials once through the ×N front.
      const warmS = opts.warmup ?? (opts.smoke ? 1 : WARMUP_S);
      const warm = await jobFor(s, warmS);
      const warmBases = grant ? [front] : instances.map((i) => i.base);
      await bucketsRefilled();
      log(`scenario ${s.n}: warming ${warmBases.length === 1 ? `all ${n} instances through nginx` : `each of the ${n} instances directly`}, ${warmS} s each (not measured)`);
      for (const base of warmBases) {
        const w = await runLoadMeasured({ ...warm, base });
        if (executes) acknowledged += twoXx(w);
      }
      // ×N and ×1 take turns going first, so that a drift of this shared machine's speed over
      // the run does not always favour the same side; with --rounds the pair is measured that
      // many times, the sides swapping each round, and the round of the median ×N / ×1 is the
      // row's figures (one ratio of this host moved by up to 0.5 between runs).
      const sides = [['server', targets.all], ['single', targets.single]];
      if (results.length % 2 === 1) sides.reverse();
      const pairs = [];
      for (let round = 1; round <= rounds; round += 1) {
        const pair = {};
        for (const [key, target] of sides) {
          const job = await jobFor(s, duration);
          await bucketsRefilled();
          log(`scenario ${s.n}: Gatehouse ×${key === 'server' ? n : 1} through nginx, ${duration} s${rounds > 1 ? ` [round ${round}/${rounds}]` : ''}`);
          const g = await measure(target, job);
          pair[key] = pick(g, check429);
          if (executes) acknowledged += twoXx(g);
        }
        pair.scaling = pair.server.rate / pair.single.rate;
        pairs.push(pair);
        sides.reverse();
      }
      const median = [...pairs].sort((x, y) => x.scaling - y.scaling)[Math.floor((pairs.length - 1) / 2)];
      row.server = median.server;
      row.single = median.single;
      if (rounds > 1) row.roundScalings = pairs.map((p) => p.scaling);
      // Any round with no answers or a 5xx fails the run, not only the median one.
      const has5xx = (r) => Object.keys(r.statusCodes ?? {}).some((c) => c.startsWith('5'));
      row.broken = pairs.some((p) => p.server.requestsPerSec === 0 || has5xx(p.server) || has5xx(p.single));
      if (check429) row.bare.rate = b.requestsPerSec;
      row.ratio = row.server.rate / row.bare.rate;
      row.singleRatio = row.single.rate / row.bare.rate;
      row.scaling = median.scaling;
      // The control: what this machine's cores allow N processes that share nothing. Bare
      // node:http burns, per answer, the CPU one Gatehouse instance spent per answer above (less
      // bare's own), behind the same nginx: spread over the N bare servers, then all on one.
      const spinUs = Math.max(0, Math.round((row.single.cpuMicrosPerRequest ?? 0) - (row.bare.cpuMicrosPerRequest ?? 0)));
      const controlJob = { connections: CONNECTIONS, duration, shape: 'paths', method: 'POST', paths: ['/control'], body: SMALL_BODY, headers: { 'content-type': 'application/json', 'x-bench-spin-us': String(spinUs) } };
      const control = await manyAndOne(targets.bare, targets.bareOne, async () => controlJob, (k) => `scenario ${s.n}: control, bare node:http ×${k} burning ${spinUs} µs per answer`);
      row.control = { spinUs, ...control };
      // The executes' second control: the I/O floor (bench/floor-server.mjs), N behind nginx and
      // one, warmed alike, with the same requests. It makes the round trips an execute cannot do
      // without (a Redis script call, a batched insert committed before the answer) and runs no
      // Gatehouse code, so its ×N / ×1 is what this machine allows that pattern of I/O. Not for
      // scenario 6, whose answers are 429s from memory: the floor would store every one.
      if (executes && !check429 && targets.floor) {
        for (const f of floors) await runLoadMeasured({ ...warm, base: f.base });
        row.floor = await manyAndOne(
          targets.floor,
          targets.floorOne,
          async () => {
            await bucketsRefilled();
            return jobFor(s, duration);
          },
          (k) => `scenario ${s.n}: I/O floor ×${k} through nginx (no Gatehouse code)`,
        );
      }
      // One instance given what each of the N served above (an even 1/N of the ×N rate): what an
      // answer costs an event loop at that load, beside the ×N figure. Where the two agree, the
      // ×N cost is that of each instance's lighter load, not of their sharing anything.
      if (executes) {
        const rate = Math.max(1, Math.round(row.server.requestsPerSec / n));
        const job = { ...(await jobFor(s, duration)), paced: true, rate, warmup: 0 };
        await bucketsRefilled();
        log(`scenario ${s.n}: Gatehouse ×1 paced at ${rate} req/s (1/${n} of ×${n}'s rate), ${duration} s`);
        const p = await measure(targets.single, job);
        acknowledged += twoXx(p);
        row.singleAtShare = { rate, answered: p.requestsPerSec, cpuMicrosPerRequest: p.cpuMicrosPerRequest };
      }
      // Scenario 6: 5 webhooks, 10 requests per 2 s window each, shared by every instance
      // (SPEC §8). More allowed answers than the windows hold means a bucket leaked.
      if (check429) {
        const windows = Math.ceil((duration * 1000) / BUCKET.windowMs) + 1;
        row.bucketCeiling = 5 * BUCKET.limit * windows;
        row.bucketsExact = pairs.every((p) => twoXx(p.server) <= row.bucketCeiling && twoXx(p.single) <= row.bucketCeiling);
      }
      results.push(row);
      log(`  → ${n} instances ${Math.round(row.server.rate)}/s (${(row.ratio * 100).toFixed(1)} % of bare ×${n}), 1 instance ${Math.round(row.single.rate)}/s; ×${row.scaling.toFixed(2)} (control ×${row.control.scaling.toFixed(2)}${row.floor ? `, I/O floor ×${row.floor.scaling.toFixed(2)}` : ''}); non-2xx ${row.server.non2xx}/${row.single.non2xx}; CPU µs/answer ${row.server.cpuMicrosPerRequest} (nginx ${row.server.nginxCpuMicrosPerRequest}); statements/answer ${row.server.statementsPerAnswer}; Redis calls/answer ${row.server.redisPerAnswer?.calls}`);
    }

    // No acknowledged message lost: every 2xx execute is in the database. autocannon stops with up
    // to one request per connection in flight, which may be stored without its answer being
    // counted, so the database may hold a few more (at most the connections of each measurement).
    let messages;
    if (needWebhooks) {
      messages = { acknowledged, stored: await countMessages(database.url) };
      messages.lost = Math.max(0, messages.acknowledged - messages.stored);
      log(`messages: ${messages.acknowledged} acknowledged, ${messages.stored} stored, ${messages.lost} lost`);
    }
    return { results, messages, autovacuum: database.autovacuum, nginx: { workers: 1, version: nginxVersion() }, webhooks: webhooks.length };
  } finally {
    await pgClient.end().catch(() => undefined);
    redis.disconnect();
  }
}

const REDIS_SERVER = '/usr/bin/redis-server';

/** Debian's redis-server on a free port, no persistence, in the foreground; stopped with the bench. */
async function startRedis(dir) {
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const { Redis } = await import('ioredis');
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (i > 100 || child.exitCode !== null) throw new Error('redis-server did not start');
      await sleep(50);
    }
  }
  return {
    url,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function countMessages(url) {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query('select count(*)::bigint as n from messages')).rows[0].n);
  } finally {
    await c.end();
  }
}

function nginxVersion() {
  const r = spawnSync(NGINX, ['-v'], { encoding: 'utf8' });
  return (r.stderr || r.stdout || '').trim().replace(/^nginx version: /, '') || undefined;
}

/** The instances table of bench/REPORT.md / the console (pure). */
export function instancesMarkdown(record) {
  const fmt = (x, d = 0) => (x === undefined || x === null || Number.isNaN(x) ? '–' : Number(x).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
  const pct = (x) => (x === undefined ? '–' : `${(x * 100).toFixed(1)} %`);
  const L = [];
  L.push(`## PostgreSQL + Redis, ${record.instances} instances behind nginx`, '');
  L.push(`${record.date}; ${record.smoke ? 'smoke run, not judged; ' : ''}${record.connections} connections, ${record.results[0]?.duration ?? '?'} s per measurement, each scenario first run ${record.warmup ?? (record.smoke ? 1 : WARMUP_S)} s unmeasured on every instance (webhooks and tokens on each directly, single-use grants through the ×${record.instances} front) so every instance has served it; nginx (1 worker, keep-alive upstreams) in front of ${record.instances} Gatehouse instances, of 1 Gatehouse instance, and of ${record.instances} bare node:http servers, all in one nginx; everything on this machine's ${record.cores} shared cores. ANALYZE after every seeding, as autovacuum would (autovacuum on this PostgreSQL: ${record.autovacuum ?? '?'}).`, '');
  L.push('| # | scenario | GH ×N req/s | GH ×1 req/s | bare ×N req/s | ×N / ×1 | ×N / bare | ×1 / bare | non-2xx ×N / ×1 | CPU µs/answer (all instances) ×N / ×1 | cores used ×N / ×1 (every process of the run) | nginx µs/answer | statements/answer | statement latency ms/answer (summed, queueing included) | PG commits/answer | PG backend µs/answer | Redis calls/answer | Redis µs/answer |');
  L.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of record.results) {
    L.push(
      `| ${r.scenario} | ${r.name} | ${fmt(r.server.rate)} | ${fmt(r.single.rate)} | ${fmt(r.bare.rate)} | ${fmt(r.scaling, 2)} | ${pct(r.ratio)} | ${pct(r.singleRatio)} | ${fmt(r.server.non2xx)} / ${fmt(r.single.non2xx)} | ${fmt(r.server.cpuMicrosPerRequest, 1)} / ${fmt(r.single.cpuMicrosPerRequest, 1)} | ${fmt(r.server.coresUsed, 2)} / ${fmt(r.single.coresUsed, 2)} | ${fmt(r.server.nginxCpuMicrosPerRequest, 1)} | ${fmt(r.server.statementsPerAnswer, 2)} | ${fmt(r.server.statementMicrosPerAnswer / 1000, 1)} | ${fmt(r.server.postgresPerAnswer?.commits, 2)} | ${fmt(r.server.postgresPerAnswer?.backendCpuMicros, 1)} | ${fmt(r.server.redisPerAnswer?.calls, 2)} | ${fmt(r.server.redisPerAnswer?.usec, 1)} |`,
    );
  }
  const controlled = record.results.filter((r) => r.control?.many && r.control?.one);
  if (controlled.length > 0) {
    L.push(
      '',
      `Control: what this machine's cores allow ${record.instances} processes that share nothing. Bare node:http burns, per answer, about the CPU one Gatehouse instance spent per answer in the row above (GH ×1's CPU less bare's), behind the same nginx, spread over the ${record.instances} bare servers (×N) and all on one (×1). Where the control's ×N / ×1 is below 1 too, the cores, not Gatehouse's shared state, set the limit.`,
      '',
      '| # | CPU burnt µs/answer (asked) | control ×N req/s | control ×1 req/s | control ×N / ×1 | control CPU µs/answer ×N / ×1 | cores used ×N / ×1 | Gatehouse ×N / ×1 | Gatehouse CPU µs/answer: ×N / ×1 flat out / ×1 paced at 1/N of ×N\'s rate |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of controlled) {
      const c = r.control;
      const share = r.singleAtShare ? `${fmt(r.singleAtShare.cpuMicrosPerRequest, 1)} (at ${fmt(r.singleAtShare.rate)}/s)` : '–';
      L.push(`| ${r.scenario} | ${fmt(c.spinUs)} | ${fmt(c.many.rate)} | ${fmt(c.one.rate)} | ${fmt(c.scaling, 2)} | ${fmt(c.many.cpuMicrosPerRequest, 1)} / ${fmt(c.one.cpuMicrosPerRequest, 1)} | ${fmt(c.many.coresUsed, 2)} / ${fmt(c.one.coresUsed, 2)} | ${fmt(r.scaling, 2)} | ${fmt(r.server.cpuMicrosPerRequest, 1)} / ${fmt(r.single.cpuMicrosPerRequest, 1)} / ${share} |`);
    }
  }
  const floored = record.results.filter((r) => r.floor?.many && r.floor?.one);
  if (floored.length > 0) {
    L.push(
      '',
      `I/O floor: bench/floor-server.mjs, node:http making only the round trips an execute cannot do without (one Redis script call, one batched insert committed before the 204; no Gatehouse code), ${record.instances} behind the same nginx (×N) and one (×1), with the same requests. Where its ×N / ×1 is as low as Gatehouse's, this machine's cores and that pattern of I/O set the ratio, not Gatehouse.`,
      '',
      '| # | floor ×N req/s | floor ×1 req/s | floor ×N / ×1 | floor CPU µs/answer ×N / ×1 | cores used ×N / ×1 | Gatehouse ×N / ×1 |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of floored) {
      const f = r.floor;
      L.push(`| ${r.scenario} | ${fmt(f.many.rate)} | ${fmt(f.one.rate)} | ${fmt(f.scaling, 2)} | ${fmt(f.many.cpuMicrosPerRequest, 1)} / ${fmt(f.one.cpuMicrosPerRequest, 1)} | ${fmt(f.many.coresUsed, 2)} / ${fmt(f.one.coresUsed, 2)} | ${fmt(r.scaling, 2)} |`);
    }
  }
  const split = record.results.filter((r) => r.server.cpuSystemMicrosPerRequest !== undefined && r.single.cpuSystemMicrosPerRequest !== undefined);
  if (split.length > 0) {
    L.push(
      '',
      `Where an instance's CPU per answer goes, ×N against ×1: user space (Gatehouse's JavaScript, V8, libuv) and the kernel (system time: sockets, epoll, waking and sleeping), from /proc/<pid>/stat (every thread of the instances), and the part of it the event loops' threads took (the rest: V8's compiler and marking helpers, libuv's pool); and how often per answer the event loops (the main threads) left their core: to sleep in epoll with nothing to do (voluntary context switches: a loop that finds one request at a time sleeps once per request and per reply it waits for, a saturated one seldom) or because the scheduler gave the core to another runnable process (involuntary: the loop then resumes with caches that process used meanwhile).`,
      '',
      '| # | CPU µs/answer ×N / ×1 | of it user space ×N / ×1 | of it kernel ×N / ×1 | of it the event loops\' threads ×N / ×1 | event loop slept, per answer ×N / ×1 | event loop preempted, per answer ×N / ×1 |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    const user = (x) => (x.cpuMicrosPerRequest === undefined ? undefined : x.cpuMicrosPerRequest - x.cpuSystemMicrosPerRequest);
    for (const r of split) {
      L.push(`| ${r.scenario} | ${fmt(r.server.cpuMicrosPerRequest, 1)} / ${fmt(r.single.cpuMicrosPerRequest, 1)} | ${fmt(user(r.server), 1)} / ${fmt(user(r.single), 1)} | ${fmt(r.server.cpuSystemMicrosPerRequest, 1)} / ${fmt(r.single.cpuSystemMicrosPerRequest, 1)} | ${fmt(r.server.eventLoopMicrosPerAnswer, 1)} / ${fmt(r.single.eventLoopMicrosPerAnswer, 1)} | ${fmt(r.server.sleepsPerAnswer, 2)} / ${fmt(r.single.sleepsPerAnswer, 2)} | ${fmt(r.server.preemptionsPerAnswer, 2)} / ${fmt(r.single.preemptionsPerAnswer, 2)} |`);
    }
  }
  const rounded = record.results.filter((r) => r.roundScalings);
  if (rounded.length > 0) L.push('', `×N / ×1 of each round (--rounds; the table shows the median round): ${rounded.map((r) => `scenario ${r.scenario} ${r.roundScalings.map((x) => fmt(x, 2)).join(', ')}`).join('; ')}.`);
  const reused = record.results.filter((r) => r.server.reused > 0 || r.single.reused > 0);
  if (reused.length > 0) L.push('', `Re-sent spent credentials (the seeded list ran out; those answers are 400s, not faults): ${reused.map((r) => `scenario ${r.scenario} ×N ${fmt(r.server.reused)}, ×1 ${fmt(r.single.reused)}`).join('; ')}.`);
  if (record.messages) L.push('', `Messages: ${fmt(record.messages.acknowledged)} executes acknowledged with 2xx, ${fmt(record.messages.stored)} stored, ${fmt(record.messages.lost)} lost.`);
  const six = record.results.find((r) => r.scenario === 6);
  if (six) L.push('', `Scenario 6 buckets: at most ${fmt(six.bucketCeiling)} answers may pass 5 webhooks' buckets in ${six.duration} s; ${six.bucketsExact ? 'none passed beyond' : '**more passed**'} (×N and ×1).`);
  L.push('');
  return L.join('\n');
}

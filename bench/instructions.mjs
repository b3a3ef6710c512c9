#!/usr/bin/env node
// `npm run bench:instructions` (issue #6): instructions per answer, counted by valgrind's callgrind,
// for the server and for bare node:http, in the hot scenarios. A count, not a time: repeatable to a
// few per cent whatever else the machine is doing, where the timed benchmark (bench/run.mjs) moves
// by ±15 points between minutes on this shared 2-core host. It is the instrument for A/B-ing a
// change of a few per cent; the timed benchmark stays the judge of the targets.
//
// What it counts: every user-space instruction of the server process (all its threads: the event
// loop, the checkpoint worker, V8's helpers), between the start and the end of a measured batch of
// requests, divided by the answers in the batch. What it does not: the kernel (socket reads and
// writes, wake-ups), cache misses and stalls. docs/performance.md §Instructions per answer.
//
//   --only 1,2,3,6    scenarios (default 1,2,3,6). 4 (refresh_token rotation) and 5
//                     (authorization_code + PKCE) are the grants at the token endpoint: each answer
//                     spends a single-use credential minted while seeding, so they run smaller
//                     batches (--grant-requests, --grant-warmup); 7 (paced) is bench/run.mjs's only
//   --requests <n>    answers per measured batch (default 5000)
//   --warmup <n>      requests of each selected scenario before any is counted (default 20000)
//   --grant-requests <n>  answers per measured batch of scenarios 4 and 5 (default 2000): each
//                     needs its own refresh token or code, minted over HTTP before the server goes
//                     under callgrind, so 5,000 × 4 batches would take longer to seed than to count
//   --grant-warmup <n>    warm-up requests of scenarios 4 and 5 (default 10000, same reason; with
//                     3,000 the first two batches still ran half as many instructions again)
//   --batches <n>     measured batches per scenario, each reported, judged by their median (default 4)
//   --connections <list>  concurrent connections of the measured batches, each measured in turn
//                     (default 50; `50,1` adds one request at a time: what an event-loop wake-up
//                     that finds one request costs against one that finds many)
//   --annotate        also write callgrind_annotate's top native functions per scenario
//   --no-bare         skip bare node:http (A/B runs of two builds)
//   --log-level <l>   the server's LOG_LEVEL (default warn: the request log's writes are not the
//                     code under study; `info` counts what the default level's access line costs)
//   --postgres        PostgreSQL (a fresh database on BENCH_POSTGRES_URL's server, dropped at the
//                     end) + Redis (BENCH_REDIS_URL), as `npm run bench -- --postgres`; default SQLite
//   --smoke           scenario 6 and bare node:http, 300 requests each, counted once: that the
//                     instrument still runs (CI), no figure to read
//
// Needs valgrind (Debian's package). Under callgrind the server runs ~50× slower, so a run takes a
// few minutes. BENCH_DIST=<dir> measures another build, as for bench/run.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { EMBED_BODY, SMALL_BODY } from './lib/bodies.mjs';
import { freshDatabase } from './lib/database.mjs';
import { BENCH_DIR, DIST, freePort, LOAD_GENERATOR_ENV, ROOT, startOptions, startServer } from './lib/processes.mjs';
import { codeExchangeForm, consentOnce, exchangeCodes, installBot, mintCodes, refreshForm, seedChannels, seedDirectory, seedWebhooks, signIn } from './lib/seed.mjs';

/** The grant scenarios: each answer spends one single-use credential of the job's `bodies`. */
const GRANTS = new Set([4, 5]);

/** Concurrent connections of the warm-ups, and of the measured batches unless --connections says otherwise. */
const CONNECTIONS = 50;

/**
 * valgrind runs one thread at a time: V8's background compiler and concurrent marker barely run,
 * so functions stay in the interpreter for far longer than in a real run (TurboFan's compiling was
 * a third of a "steady-state" batch's instructions, and batches differed 2×). Single-threaded V8
 * compiles and marks on the main thread, where it is counted like everything else.
 */
const V8_UNDER_VALGRIND = ['--single-threaded'];

function parseArgs(argv) {
  const o = { only: new Set([1, 2, 3, 6]), requests: 5000, batches: 4, warmup: 20000, grantRequests: 2000, grantWarmup: 10000, annotate: false, bare: true, logLevel: 'warn', connections: [CONNECTIONS], postgres: false };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--only') o.only = new Set(argv[++i].split(',').map(Number));
    else if (a === '--requests') o.requests = Number(argv[++i]);
    else if (a === '--batches') o.batches = Number(argv[++i]);
    else if (a === '--connections') o.connections = argv[++i].split(',').map(Number);
    else if (a === '--postgres') o.postgres = true;
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--grant-requests') o.grantRequests = Number(argv[++i]);
    else if (a === '--grant-warmup') o.grantWarmup = Number(argv[++i]);
    else if (a === '--annotate') o.annotate = true;
    else if (a === '--no-bare') o.bare = false;
    else if (a === '--log-level') o.logLevel = argv[++i];
    else if (a === '--smoke') Object.assign(o, { only: new Set([6]), requests: 300, batches: 1, warmup: 300 });
    else throw new Error(`unknown option ${a} (see the head of bench/instructions.mjs)`);
  }
  return o;
}

const started = Date.now();
const log = (m) => process.stdout.write(`[instructions ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${m}\n`);

/** Starts `args` under callgrind with instrumentation off until a batch turns it on. */
async function startUnderCallgrind(args, env, outDir) {
  const port = await freePort();
  const childEnv = { ...process.env, LOG_LEVEL: 'warn', ...LOAD_GENERATOR_ENV, ...env, PORT: String(port), HOST: '127.0.0.1', GATEHOUSE_BASE_URL: `http://127.0.0.1:${port}` };
  const child = spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${join(outDir, 'cg.%p')}`, process.execPath, ...V8_UNDER_VALGRIND, ...args], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server under callgrind exited: ${output.slice(-2000)}`);
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error('the server under callgrind did not answer /healthz within 180 s');
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    base,
    pid: child.pid,
    control: (...words) => {
      // vgdb names its pipes after $USER and $HOST as the process saw them: the server's HOST setting.
      const r = spawnSync('callgrind_control', [...words, String(child.pid)], { encoding: 'utf8', env: childEnv });
      if (r.status !== 0) throw new Error(`callgrind_control ${words.join(' ')}: ${r.stderr || r.stdout}`);
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
    },
  };
}

/** One autocannon batch of exactly `amount` answers; resolves to the status counts. */
function batch(base, job, amount, connections = CONNECTIONS) {
  let i = 0;
  const statuses = {};
  const request = { method: job.method ?? 'GET', ...(job.body ? { body: job.body } : {}) };
  if (job.paths) request.setupRequest = (req) => ((req.path = job.paths[i++ % job.paths.length]), req);
  if (job.bodies) {
    // One cursor for the job's whole life (warm-up and every batch), so no credential is sent
    // twice; past the list, spent ones are re-sent and counted in `job.reused` (400s in the
    // statuses), which shows a short list instead of hiding it.
    request.path = job.path;
    request.setupRequest = (req) => {
      if (job.next >= job.bodies.length) job.reused += 1;
      req.body = job.bodies[job.next++ % job.bodies.length];
      return req;
    };
  }
  if (job.tokens) {
    request.path = job.path;
    request.setupRequest = (req) => ((req.headers = { ...req.headers, authorization: `Bearer ${job.tokens[i++ % job.tokens.length]}` }), req);
  }
  request.onResponse = (status) => (statuses[status] = (statuses[status] ?? 0) + 1);
  return new Promise((resolve, reject) => {
    autocannon({ url: base, connections, amount, headers: job.headers ?? {}, requests: [request], timeout: 60 }, (error, result) => {
      if (error) reject(error);
      else resolve({ statuses, errors: result.errors, timeouts: result.timeouts });
    });
  });
}

/** The totals of the next callgrind dump in `dir` (cg.<pid>.<n>, one per `callgrind_control -d`). */
async function nextDump(proc, dir, seen) {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    await fetch(`${proc.base}/healthz`).then((r) => r.arrayBuffer(), () => undefined);
    const files = readdirSync(dir).filter((f) => /^cg\.\d+\.\d+$/.test(f) && !seen.has(f));
    if (files.length > 1) throw new Error(`expected one new callgrind dump, found ${files.length}`);
    if (files.length === 1) {
      const text = readFileSync(join(dir, files[0]), 'utf8');
      const m = /^totals:\s*(\d+)/m.exec(text);
      if (m) {
        seen.add(files[0]);
        return { instructions: Number(m[1]), file: join(dir, files[0]) };
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('callgrind wrote no dump within 20 s');
}

async function measure(proc, dir, seen, job, opts, label, connections) {
  const rows = [];
  for (let b = 0; b < opts.batches; b += 1) {
    proc.control('-i', 'on');
    proc.control('-z');
    const r = await batch(proc.base, job, job.requests ?? opts.requests, connections);
    // callgrind takes a command when the process next runs: an idle server sleeps in epoll until
    // a request wakes it (that request is counted after the dump, i.e. in no batch).
    proc.control('-d');
    const { instructions, file } = await nextDump(proc, dir, seen);
    proc.control('-i', 'off');
    const answers = Object.values(r.statuses).reduce((a, n) => a + n, 0);
    rows.push({ label, connections, batch: b + 1, answers, statuses: r.statuses, errors: r.errors, perAnswer: Math.round(instructions / answers), file });
    const spent = job.bodies ? `, ${job.reused} spent credentials re-sent so far` : '';
    log(`${label}, ${connections} connections, batch ${b + 1}: ${(instructions / answers / 1000).toFixed(1)} k instructions per answer (${JSON.stringify(r.statuses)}${spent})`);
  }
  return rows;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-instructions-'));
  const database = await freshDatabase(opts, dir);
  const env = database.env;
  const results = [];
  try {
    log(`seeding ${database.kind === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite'} (CLI, then the API on a normal server): 20 channels × 10 webhooks, 300 bearer tokens`);
    const directory = await seedDirectory(env);
    const channelIds = await seedChannels(env, directory.server.id, 20);
    const plain = await startServer(env);
    const jar = await signIn(plain.base);
    await installBot(plain.base, jar, directory.botApp.client_id, directory.server.id);
    const webhooks = await seedWebhooks(plain.base, directory.botApp.bot_token, channelIds, 10);
    let tokens = [];
    const clientId = directory.oauthApp.client_id;
    if ([3, 4, 5].some((n) => opts.only.has(n))) await consentOnce(plain.base, jar, clientId);
    if (opts.only.has(3)) {
      const pairs = await exchangeCodes(plain.base, clientId, await mintCodes(plain.base, jar, clientId, 300));
      tokens = pairs.map((p) => p.access);
    }
    // Autocannon may build a request or two per connection past `amount`: 5 % and a connection
    // each to spare, so the measured batches spend only fresh credentials.
    const grantCount = Math.ceil((opts.grantWarmup + opts.batches * opts.grantRequests) * 1.05) + CONNECTIONS * (opts.batches + 1);
    const grantForms = { 4: [], 5: [] };
    if (opts.only.has(4)) {
      log(`scenario 4: seeding ${grantCount} refresh tokens (authorize + code exchange each)`);
      const pairs = await exchangeCodes(plain.base, clientId, await mintCodes(plain.base, jar, clientId, grantCount));
      grantForms[4] = pairs.map((p) => refreshForm(clientId, p.refresh));
    }
    if (opts.only.has(5)) {
      log(`scenario 5: minting ${grantCount} authorization codes with PKCE`);
      grantForms[5] = (await mintCodes(plain.base, jar, clientId, grantCount)).map((c) => codeExchangeForm(clientId, c));
    }
    await plain.stop();
    await database.analyze();

    const jobs = {
      1: { method: 'POST', paths: webhooks.map((w) => w.path), body: SMALL_BODY, headers: { 'content-type': 'application/json' } },
      2: { method: 'POST', paths: webhooks.map((w) => `${w.path}?wait=true`), body: EMBED_BODY, headers: { 'content-type': 'application/json' } },
      3: { path: '/api/v1/users/@me', tokens },
      4: { method: 'POST', path: '/api/oauth2/token', bodies: grantForms[4], next: 0, reused: 0, requests: opts.grantRequests, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      5: { method: 'POST', path: '/api/oauth2/token', bodies: grantForms[5], next: 0, reused: 0, requests: opts.grantRequests, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      // One webhook rather than bench/run.mjs's five: its bucket refills by the clock (SPEC §8: 10 per
      // 2 s), and under valgrind a batch lasts ~40 s, so with five a fifth of the answers were
      // 204s (a stored message each) and the 429 path could not be told from the mix.
      6: { method: 'POST', paths: [webhooks[0].path], body: SMALL_BODY, headers: { 'content-type': 'application/json' } },
    };
    const seen = new Set();

    let bareRows = [];
    const selected = [1, 2, 3, 4, 5, 6].filter((n) => opts.only.has(n));
    if (opts.bare) {
      log('bare node:http under callgrind');
      const bareDir = join(dir, 'bare');
      mkdirSync(bareDir);
      const bare = await startUnderCallgrind([join(BENCH_DIR, 'bare-server.mjs')], {}, bareDir);
      await batch(bare.base, jobs[1], opts.warmup);
      const bareSeen = new Set();
      for (const c of opts.connections) bareRows.push(...(await measure(bare, bareDir, bareSeen, jobs[1], opts, 'bare node:http (POST, ~100-byte body)', c)));
      await bare.stop();
    }

    log(`Gatehouse under callgrind (node ${startOptions().join(' ')} dist/src/main.js)`);
    const gDir = join(dir, 'server');
    mkdirSync(gDir);
    const server = await startUnderCallgrind([...startOptions(), join(DIST, 'src/main.js')], { ...env, LOG_LEVEL: opts.logLevel }, gDir);
    // Warm-up of every selected scenario before any is counted: V8 optimises the hot functions
    // first (with --trace-opt, a server under scenario 1's load compiles ~1,000 functions in its
    // first ~15,000 answers, then about one a second), and the scenarios share most of their code,
    // so a scenario measured first would otherwise pay for the others' tiering.
    for (const n of selected) {
      const warmup = GRANTS.has(n) ? opts.grantWarmup : opts.warmup;
      log(`scenario ${n}: warm-up, ${warmup} requests`);
      await batch(server.base, jobs[n], warmup);
    }
    // Authorization codes live 10 minutes (oauth/authorize.ts CODE_LIFETIME_MS) from their minting
    // at the end of the seeding: scenario 5 is measured first and 4 next, before codes could
    // expire (a batch of expired codes would be all 400s), then the others in their order.
    const measured = [...selected.filter((n) => n === 5), ...selected.filter((n) => n === 4), ...selected.filter((n) => !GRANTS.has(n))];
    for (const n of measured) for (const c of opts.connections) {
      const rows = await measure(server, gDir, seen, jobs[n], opts, `scenario ${n}`, c);
      if (opts.annotate) {
        const a = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=90', rows.at(-1).file], { encoding: 'utf8', maxBuffer: 64 << 20 });
        const out = join(dir, `annotate-${n}.txt`);
        writeFileSync(out, a.stdout);
        log(`scenario ${n}: callgrind_annotate → ${out}`);
      }
      results.push(...rows);
    }
    await server.stop();

    // The median batch: a batch that caught a full mark-compact or a late optimisation stands out
    // (up to 2× in a batch of 5,000), and the median passes over it.
    const summary = (rows) => ({ m: median(rows.map((r) => r.perAnswer)), each: rows.map((r) => (r.perAnswer / 1000).toFixed(1)).join(' / ') });
    console.log('\n| scenario | connections | k instructions per answer: median (every batch) | × bare node:http |\n|---|---:|---|---:|');
    for (const c of opts.connections) {
      const bare = bareRows.filter((r) => r.connections === c);
      const bareMedian = bare.length ? summary(bare).m : NaN;
      if (bare.length) console.log(`| bare node:http | ${c} | ${(bareMedian / 1000).toFixed(1)} (${summary(bare).each}) | 1.00 |`);
      for (const n of [1, 2, 3, 4, 5, 6]) {
        const rows = results.filter((r) => r.label === `scenario ${n}` && r.connections === c);
        if (rows.length === 0) continue;
        const { m, each } = summary(rows);
        console.log(`| ${n} | ${c} | ${(m / 1000).toFixed(1)} (${each}) | ${bare.length ? (m / bareMedian).toFixed(2) : '–'} |`);
      }
    }
    if (opts.annotate) log(`annotations kept in ${dir}`);
  } finally {
    await database.drop().catch((e) => log(`could not drop the bench database: ${e.message}`));
    if (!opts.annotate) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

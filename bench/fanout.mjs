#!/usr/bin/env node
// `npm run bench:fanout` (issue #36 §1): one channel followed by 1, 100 and 1,000 live streams
// while messages of the largest size (2,000 characters of Markdown) are posted to it at a steady
// rate. For each number of streams it reports the server's CPU per message and per delivered
// event, the bytes per delivered event, the renderings per message (live_message_renders_total on
// /metrics) and the latency of GET /healthz (p50/p99) probed every 20 ms meanwhile. Beside it,
// bench/fanout-bare-server.mjs: node:http writing an event of the same size to the same number of
// streams per POST, nothing else; the floor of what a stream can cost.
//
// Target (issue #36 §1): a message's cost grows with the number of streams only by the bytes
// written (no rendering per stream: renderings per message stay 1, and the CPU each extra stream
// adds per message stays within a small factor of the bare server's), and /healthz p99 stays
// under 50 ms with 1,000 streams at 100 messages/s.
//
// Messages go through the channel's 10 webhooks (SPEC §8: 10 executes per 2 s each, so at most
// 40/s are sent that way, below the limit) and, above that rate, through the bot's
// POST /api/v1/channels/{id}/messages: both announce the same channel event and take the same
// rendering path. The streams are read by bench/fanout-streams.mjs in its own process; the caps
// (GATEHOUSE_LIVE_STREAMS_PER_PERSON/_PER_ADDRESS) are off on the server, since one person opens
// them all here.
//
//   --streams 1,100,1000  the numbers of streams (default)
//   --rate <n>            messages per second (default 100)
//   --duration <s>        measured seconds per step (default 10), after 2 s of warm-up
//   --smoke               1 and 20 streams, 20 messages/s, 2 s: checks it runs, judges nothing
//   --no-bare             skip the bare node:http side
//   --no-build            use the existing dist/
//   --no-report           do not write the section of bench/REPORT.md
import { fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { request } from './lib/http.mjs';
import { pacedLoad } from './lib/paced-load.mjs';
import { BENCH_DIR, cpuMicros, freePort, machineTicks, ROOT, startServer } from './lib/processes.mjs';
import { replaceReportSection } from './lib/report.mjs';
import { installBot, seedChannels, seedDirectory, seedWebhooks, signIn } from './lib/seed.mjs';

const WARMUP_S = 2;
const PROBE_EVERY_MS = 20;
const HEALTHZ_P99_TARGET_MS = 50;
/** SPEC §8 allows 5 executes/s per webhook; 4/s each leaves room for timer jitter. */
const EXECUTES_PER_WEBHOOK_PER_S = 4;
/** View channel | Send messages | Manage webhooks (Discord bit positions, docs/permissions.md). */
const BOT_PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 29n);

function parseArgs(argv) {
  const o = { streams: [1, 100, 1000], rate: 100, duration: 10, smoke: false, bare: true, build: true, report: true };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--streams') o.streams = argv[++i].split(',').map(Number);
    else if (a === '--rate') o.rate = Number(argv[++i]);
    else if (a === '--duration') o.duration = Number(argv[++i]);
    else if (a === '--smoke') o.smoke = true;
    else if (a === '--no-bare') o.bare = false;
    else if (a === '--no-build') o.build = false;
    else if (a === '--no-report') o.report = false;
    else if (a === '--help' || a === '-h') {
      process.stdout.write('npm run bench:fanout -- [--streams 1,100,1000] [--rate n] [--duration s] [--smoke] [--no-bare] [--no-build] [--no-report]\n');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (see --help)`);
  }
  if (o.smoke) Object.assign(o, { streams: [1, 20], rate: 20, duration: 2, report: false });
  if (!o.streams.every((n) => Number.isInteger(n) && n >= 1)) throw new Error('--streams needs whole numbers ≥ 1');
  if (!(o.rate > 0) || !(o.duration > 0)) throw new Error('--rate and --duration need positive numbers');
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const started = Date.now();
const log = (message) => process.stdout.write(`[fanout ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);

/** A message of the largest size (2,000 characters) in the Markdown a chat carries. */
const CONTENT = (() => {
  const line = 'Deploy of **service-42** finished in `eu-west`: *all* checks passed, see https://ci.example/builds/42 and ~~the old runbook~~.\n';
  let text = '';
  while (text.length + line.length <= 2000) text += line;
  return text;
})();

function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** GET /healthz every PROBE_EVERY_MS on one keep-alive connection until `stop()`; latencies in ms. */
function probeHealthz(base) {
  const pool = new Pool(base, { connections: 1 });
  const latencies = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: '/healthz', method: 'GET' });
        await res.body.dump();
        latencies.push(performance.now() - t0);
      } catch {
        latencies.push(10_000);
      }
      const wait = PROBE_EVERY_MS - (performance.now() - t0);
      if (wait > 0) await sleep(wait);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      await pool.close();
      const sorted = latencies.sort((a, b) => a - b);
      return { count: sorted.length, p50: round(percentile(sorted, 0.5), 2), p99: round(percentile(sorted, 0.99), 2), max: round(sorted.at(-1) ?? 0, 2) };
    },
  };
}

/** bench/fanout-streams.mjs in its own process, with `count` streams open to `url`. */
async function openStreams(url, cookie, count) {
  const child = fork(join(BENCH_DIR, 'fanout-streams.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = (type) => new Promise((resolve) => child.on('message', function listen(m) {
    if (m.type !== type) return;
    child.off('message', listen);
    resolve(m);
  }));
  await next('ready');
  const opened = next('opened');
  child.send({ type: 'open', url, cookie, count });
  const { refused } = await opened;
  if (refused > 0) throw new Error(`${refused} of ${count} streams were refused`);
  return {
    async counts() {
      const reply = next('counts');
      child.send({ type: 'report' });
      return reply;
    },
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'close' });
      await exited;
    },
  };
}

/** A metric's value from /metrics (0 when absent). */
async function metric(base, name) {
  const res = await request(base, { path: '/metrics' });
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text);
  return match ? Number(match[1]) : 0;
}

/** The load: `senders` each a paced POST load; resolves with the 2xx answers and the others. */
async function post(senders, duration) {
  const results = await Promise.all(senders.map((s) => pacedLoad({ ...s, duration, connections: 10 })));
  return { ok: results.reduce((n, r) => n + r.totalRequests - r.non2xx, 0), non2xx: results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0) };
}

/**
 * One step: `count` streams open on `target`, a warm-up, then `opts.duration` seconds measured:
 * the server's CPU, the events and bytes the streams received, /healthz latency.
 */
async function step(target, count) {
  const streams = await openStreams(target.streamUrl, target.cookie, count);
  await post(target.senders, WARMUP_S);
  await sleep(300);
  const before = await streams.counts();
  const renders0 = target.renders ? await target.renders() : undefined;
  const ticks0 = machineTicks();
  const cpu0 = cpuMicros(target.pid);
  const probe = probeHealthz(target.base);
  const sent = await post(target.senders, opts.duration);
  const healthz = await probe.stop();
  // What was posted last reaches the streams within a few ms.
  await sleep(300);
  const cpu1 = cpuMicros(target.pid);
  const ticks1 = machineTicks();
  const after = await streams.counts();
  const renders1 = target.renders ? await target.renders() : undefined;
  await streams.close();
  const cpuUs = cpu1.user + cpu1.system - cpu0.user - cpu0.system;
  const delivered = after.events - before.events;
  const bytes = after.bytes - before.bytes;
  return {
    streams: count,
    messages: sent.ok,
    failed: sent.non2xx,
    delivered,
    expected: sent.ok * count,
    cpuMs: round(cpuUs / 1000),
    cpuUsPerMessage: round(cpuUs / Math.max(1, sent.ok)),
    cpuUsPerDelivered: round(cpuUs / Math.max(1, delivered), 2),
    bytesPerDelivered: Math.round(bytes / Math.max(1, delivered)),
    rendersPerMessage: renders0 === undefined ? undefined : round((renders1 - renders0) / Math.max(1, sent.ok), 2),
    healthz,
    stealPct: ticks0 && ticks1 ? round((100 * (ticks1.steal - ticks0.steal)) / Math.max(1, ticks1.total - ticks0.total)) : undefined,
  };
}

async function gatehouse(dir) {
  const env = { DATABASE_URL: join(dir, 'fanout.db'), GATEHOUSE_LIVE_STREAMS_PER_PERSON: '0', GATEHOUSE_LIVE_STREAMS_PER_ADDRESS: '0' };
  const directory = await seedDirectory(env);
  const [channelId] = await seedChannels(env, directory.server.id, 1, 'fanout');
  const server = await startServer(env);
  const jar = await signIn(server.base);
  await installBot(server.base, jar, directory.botApp.client_id, directory.server.id, BOT_PERMISSIONS);
  const webhooks = await seedWebhooks(server.base, directory.botApp.bot_token, [channelId], 10);
  const body = JSON.stringify({ content: CONTENT });
  const viaWebhooks = Math.min(opts.rate, webhooks.length * EXECUTES_PER_WEBHOOK_PER_S);
  const senders = [{ base: server.base, method: 'POST', paths: webhooks.map((w) => w.path), body, headers: { 'content-type': 'application/json' }, rate: viaWebhooks }];
  if (opts.rate > viaWebhooks) {
    senders.push({ base: server.base, method: 'POST', paths: [`/api/v1/channels/${channelId}/messages`], body, headers: { 'content-type': 'application/json', authorization: `Bot ${directory.botApp.bot_token}` }, rate: opts.rate - viaWebhooks });
  }
  log(`Gatehouse on ${server.base}: channel ${channelId}, ${viaWebhooks}/s through webhooks, ${opts.rate - viaWebhooks}/s through the bot`);
  return {
    server,
    base: server.base,
    pid: server.pid,
    streamUrl: `${server.base}/channels/${channelId}/events`,
    cookie: jar.header(),
    senders,
    renders: () => metric(server.base, 'live_message_renders_total'),
  };
}

async function bare(frameBytes) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(BENCH_DIR, 'fanout-bare-server.mjs')], { cwd: ROOT, env: { ...process.env, PORT: String(port), FANOUT_FRAME_BYTES: String(frameBytes) }, stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    try {
      if ((await request(base, { path: '/healthz' })).status === 200) break;
    } catch {
      if (i > 100) throw new Error('the bare fan-out server did not start');
    }
    await sleep(50);
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    base,
    pid: child.pid,
    streamUrl: `${base}/c/events`,
    cookie: '',
    senders: [{ base, method: 'POST', paths: ['/post'], body: '{}', headers: { 'content-type': 'application/json' }, rate: opts.rate }],
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function markdown(rows, load) {
  const L = [];
  L.push('## Live fan-out (issue #36 §1)', '');
  L.push(`\`npm run bench:fanout\`, ${new Date().toISOString().slice(0, 16)} UTC: one channel, ${opts.rate} messages/s of 2,000 characters of Markdown, ${opts.duration} s measured per row after ${WARMUP_S} s of warm-up; SQLite. ${load}`, '');
  L.push('| streams | server | messages | delivered / expected | CPU µs per message | CPU µs per delivered event | bytes per event | renderings per message | /healthz p50 / p99 / max ms | steal % |');
  L.push('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    L.push(`| ${r.streams} | ${r.server} | ${r.messages}${r.failed ? ` (${r.failed} failed)` : ''} | ${r.delivered} / ${r.expected} | ${r.cpuUsPerMessage} | ${r.cpuUsPerDelivered} | ${r.bytesPerDelivered} | ${r.rendersPerMessage ?? '—'} | ${r.healthz.p50} / ${r.healthz.p99} / ${r.healthz.max} | ${r.stealPct ?? '—'} |`);
  }
  L.push('');
  const g = rows.filter((r) => r.server === 'Gatehouse');
  const b = rows.filter((r) => r.server === 'bare node:http');
  const perStream = (list) => (list.length >= 2 ? (list.at(-1).cpuUsPerMessage - list[0].cpuUsPerMessage) / (list.at(-1).streams - list[0].streams) : undefined);
  const gs = perStream(g);
  const bs = perStream(b);
  if (gs !== undefined) {
    L.push(`CPU each extra stream adds per message: Gatehouse ${round(gs, 2)} µs${bs !== undefined ? `, bare node:http ${round(bs, 2)} µs (×${round(gs / bs, 1)})` : ''}.`);
  }
  const largest = g.at(-1);
  if (largest && !opts.smoke) {
    const renderOk = g.every((r) => r.rendersPerMessage !== undefined && r.rendersPerMessage <= 1.05);
    const healthOk = largest.healthz.p99 < HEALTHZ_P99_TARGET_MS;
    L.push(`Renderings per message ≤ 1 at every size: ${renderOk ? '**met**' : '**missed**'}. /healthz p99 under ${HEALTHZ_P99_TARGET_MS} ms with ${largest.streams} streams at ${opts.rate} messages/s: ${healthOk ? '**met**' : '**missed**'} (${largest.healthz.p99} ms).`);
  }
  return L.join('\n');
}

async function main() {
  if (opts.build) {
    log('npm run build');
    const built = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  const load0 = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), 'gh-fanout-'));
  const rows = [];
  let target;
  try {
    target = await gatehouse(dir);
    for (const count of opts.streams) {
      log(`Gatehouse, ${count} streams`);
      rows.push({ server: 'Gatehouse', ...(await step(target, count)) });
      const r = rows.at(-1);
      log(`  ${r.cpuUsPerMessage} µs CPU per message, ${r.cpuUsPerDelivered} per delivered event, ${r.rendersPerMessage} renderings per message, /healthz p99 ${r.healthz.p99} ms`);
      // The closed streams have left the server before the next step opens new ones.
      for (let i = 0; i < 100 && (await metric(target.base, 'live_streams_open')) > 0; i += 1) await sleep(50);
    }
    await target.server.stop();
    target = undefined;
    if (opts.bare) {
      const frame = rows.at(-1)?.bytesPerDelivered ?? 2000;
      for (const count of opts.streams) {
        const floor = await bare(frame);
        try {
          log(`bare node:http, ${count} streams`);
          rows.push({ server: 'bare node:http', ...(await step(floor, count)) });
          const r = rows.at(-1);
          log(`  ${r.cpuUsPerMessage} µs CPU per message, /healthz p99 ${r.healthz.p99} ms`);
        } finally {
          await floor.stop();
        }
      }
    }
  } finally {
    await target?.server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const load1 = loadavg()[0];
  const load = `Machine: ${cpus().length} cores, load average ${round(load0, 2)} before and ${round(load1, 2)} after (shared with other work: figures are noisy).`;
  const text = markdown(rows, load);
  process.stdout.write(`\n${text}\n`);
  if (opts.smoke) {
    const bad = rows.filter((r) => r.delivered < r.expected * 0.9 || (r.server === 'Gatehouse' && r.rendersPerMessage > 1.05));
    if (bad.length > 0) throw new Error(`smoke: streams missed events or messages were rendered per stream: ${JSON.stringify(bad)}`);
  }
  if (opts.report) {
    const file = join(BENCH_DIR, 'REPORT.md');
    writeFileSync(file, replaceReportSection(readFileSync(file, 'utf8'), 'fanout', text));
    log('bench/REPORT.md: section "fanout" written');
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});

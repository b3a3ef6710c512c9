#!/usr/bin/env node
// `npm run bench:interactions` (issue #40, "Tests and benchmark"): what Gatehouse adds between a
// person and an app.
//
//  1. Command latency. An app (bench/interactions-app.mjs, plain node:http on loopback, answering
//     type 4 at once) installed in a server with a command `/ping n:<int>`; people signed in
//     through /login post `/ping n:…` through the composer's own route (POST
//     /channels/{id}/messages, the form the page serves), 50 at a time. For each invocation:
//     submit → app, from this process writing the request to the app holding the whole
//     interaction (both on CLOCK_MONOTONIC), which is Gatehouse's own time plus two loopback hops;
//     and the full round trip, until the composer's 303 (the bot's answer posted). Target: submit
//     → app p99 ≤ 5 ms. Server CPU per invocation from /proc. Beside it, --serial invocations one
//     at a time: the same delays with no queue in front of them; and, for each of --rates, --at-rate
//     invocations started at a steady rate whatever the others are doing (an open loop, as people
//     invoke commands): the delays at a stated load instead of with 50 always waiting.
//     The per-person (5 per 10 s per app) and per-channel (20 per 10 s per app) limits hold at
//     their defaults: every person is used at most 5 times and every channel at most 20 times,
//     so the run seeds (warm-up + measured + one steady-rate phase) / 5 people and / 20 channels.
//  2. Event delivery. With the server stopped, bench/lib/queue-app-events.mjs queues --events
//     app events through the service layer (a user install made and removed again and again:
//     APPLICATION_AUTHORIZED and APPLICATION_DEAUTHORIZED); the server started again finds them
//     due and sends them to the app's event webhooks URL (/events of the same app, answering 204).
//     Throughput: events received per second from the first to the last. Target ≥ 1,000/s.
//     Fails on a lost or doubled event.
//
// Usage: npm run bench:interactions [-- --invocations 1000 --concurrency 50 --serial 100 --rates 100,200,300 --at-rate 1000 --events 5000 --smoke --no-build --postgres --profile --no-report]
//   --smoke       50 invocations (10 at a time), 10 one at a time, 50 at 50/s and 200 events: checks it runs, judges nothing (CI)
//   --no-build    use the existing dist/
//   --postgres    PostgreSQL (BENCH_POSTGRES_URL) + Redis instead of the default SQLite
//   --profile     node --cpu-prof on the server; a summary per measured phase in bench/results/
//   --no-report   do not write the section of bench/REPORT.md (a smoke run never writes it)
//   BENCH_KEEP=1  keep the run's directory (its database and, with --profile, the raw .cpuprofile files for DevTools)
import { execFileSync, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase } from './lib/database.mjs';
import { CookieJar, formFields, pool, request } from './lib/http.mjs';
import { profileMarkdown, summariseProfile } from './lib/profile.mjs';
import { BENCH_DIR, cpuMicros, ROOT, startInteractionsBare, startServer } from './lib/processes.mjs';
import { replaceReportSection } from './lib/report.mjs';
import { cliBatch, OWNER, REDIRECT_URI, signIn } from './lib/seed.mjs';

const PASSWORD = 'bench-password-0123';
const P99_TARGET_MS = 5;
const EVENTS_TARGET_PER_S = 1000;
/** The defaults of INVOKE_PERSON_RULE and INVOKE_CHANNEL_RULE (src/modules/interactions/interactions.ts). */
const PER_PERSON = 5;
const PER_CHANNEL = 20;
/** Their window: a member or channel may be used again this long after its first use. */
const INVOKE_WINDOW_MS = 10_000;
/** View channel | Send messages: the bot posts the type 4 answers (Discord bit positions, docs/permissions.md). */
const BOT_PERMISSIONS = (1n << 10n) | (1n << 11n);
const COMMAND = { name: 'ping', description: 'Answers at once', options: [{ type: 4, name: 'n', description: 'Sequence number', required: true }] };

function parseArgs(argv) {
  const o = { invocations: 1000, concurrency: 50, warmup: 100, serial: 100, rates: [100, 200, 300], atRate: 1000, events: 5000, smoke: false, build: true, postgres: false, profile: false, report: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--invocations') o.invocations = Number(argv[++i]);
    else if (a === '--concurrency') o.concurrency = Number(argv[++i]);
    else if (a === '--serial') o.serial = Number(argv[++i]);
    else if (a === '--events') o.events = Number(argv[++i]);
    else if (a === '--rates') o.rates = argv[++i].split(',').filter(Boolean).map(Number);
    else if (a === '--at-rate') o.atRate = Number(argv[++i]);
    else if (a === '--smoke') o.smoke = true;
    else if (a === '--no-build') o.build = false;
    else if (a === '--postgres') o.postgres = true;
    else if (a === '--profile') o.profile = true;
    else if (a === '--no-report') o.report = false;
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.smoke) Object.assign(o, { invocations: 50, concurrency: 10, warmup: 10, serial: 10, rates: [50], atRate: 50, events: 200, report: false });
  if (![o.invocations, o.concurrency, o.serial, o.events, o.atRate, ...o.rates].every((n) => Number.isInteger(n) && n >= 1)) throw new Error('--invocations, --concurrency, --serial, --events, --at-rate and each of --rates must be whole numbers ≥ 1');
  return o;
}

const log = (line) => process.stderr.write(`${line}\n`);
const nowNs = () => process.hrtime.bigint();
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))];
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The app's process: resolves to { base, send(message, replyType), stop() }. */
async function startApp() {
  const child = fork(join(BENCH_DIR, 'interactions-app.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map();
  child.on('message', (m) => {
    const resolve = waiting.get(m.type);
    waiting.delete(m.type);
    resolve?.(m);
  });
  const reply = (type) => new Promise((resolve) => waiting.set(type, resolve));
  const { port } = await reply('listening');
  return {
    base: `http://127.0.0.1:${port}`,
    async ask(message, replyType) {
      const answer = reply(replyType);
      child.send(message);
      return answer;
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/** Signs `username` in through /login as a browser would; resolves to the cookie jar. */
async function signInAs(base, username) {
  const jar = new CookieJar();
  const page = await request(base, { path: '/login' });
  jar.store(page.headers['set-cookie']);
  const form = formFields(page.text, '/login');
  const res = await request(base, { method: 'POST', path: '/login', headers: { cookie: jar.header() }, form: { ...Object.fromEntries(form.fields), username, password: PASSWORD, next: '/' } });
  if (res.status !== 303) throw new Error(`sign-in of ${username} answered ${res.status}`);
  jar.store(res.headers['set-cookie']);
  return jar;
}

/** Installs the bot into the server with applications.commands through the install page (the owner consents). */
async function installWithCommands(base, jar, clientId, serverId) {
  const query = new URLSearchParams({ client_id: clientId, scope: 'bot applications.commands', permissions: BOT_PERMISSIONS.toString(), server_id: serverId, disable_server_select: 'true', redirect_uri: REDIRECT_URI });
  const page = await request(base, { path: `/app/oauth2/authorize?${query}`, headers: { cookie: jar.header() } });
  const form = page.status === 200 ? formFields(page.text, '/app/oauth2/authorize', { name: 'decision', value: 'authorize' }) : undefined;
  if (!form) throw new Error(`install page answered ${page.status}: ${page.text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').slice(0, 300)}`);
  const res = await request(base, { method: 'POST', path: '/app/oauth2/authorize', headers: { cookie: jar.header() }, form: form.fields });
  if (res.status >= 400) throw new Error(`install answered ${res.status}: ${res.text.slice(0, 300)}`);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.build) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const load0 = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-interactions-'));
  const db = await freshDatabase(opts, dir);
  const env = { ...db.env, GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' };
  const profileDir = opts.profile ? join(dir, 'profile') : undefined;
  const app = await startApp();
  let server;
  try {
    // The first steady-rate phase has members and channels of its own; later ones use the first
    // ones again once their limits' windows have passed.
    const total = opts.warmup + opts.serial + opts.invocations + (opts.rates.length > 0 ? opts.atRate : 0);
    const peopleCount = Math.ceil(total / PER_PERSON);
    const channelCount = Math.ceil(total / PER_CHANNEL);
    log(`seeding the server, the bot app, ${channelCount} channels and ${peopleCount} members through gatehouse batch`);
    const [owner, guild, bot] = await cliBatch(env, [
      `people create --username ${OWNER.username} --password "${OWNER.password}"`,
      `servers create --owner ${OWNER.username} --name "Bench server"`,
      `apps create --owner ${OWNER.username} --name "Bench Bot" --redirect-uri ${REDIRECT_URI} --bot`,
    ]);
    const channels = (await cliBatch(env, Array.from({ length: channelCount }, (_, i) => `channels create --server ${guild.id} --name cmd-${i + 1}`))).map((c) => c.id);
    const people = Array.from({ length: peopleCount }, (_, i) => `member.${i}`);
    await cliBatch(env, people.flatMap((u) => [`people create --username ${u} --password "${PASSWORD}"`, `members add --server ${guild.id} --username ${u}`]));

    server = await startServer(env, { cpuProfDir: profileDir });
    const botHeaders = { authorization: `Bot ${bot.bot_token}` };
    await installWithCommands(server.base, await signIn(server.base), bot.client_id, guild.id);
    const put = await request(server.base, { method: 'PUT', path: `/api/v1/applications/${bot.client_id}/commands`, headers: botHeaders, body: [COMMAND] });
    if (put.status !== 200) throw new Error(`registering /ping answered ${put.status}: ${put.text.slice(0, 300)}`);
    const me = await request(server.base, { path: '/api/v1/applications/@me', headers: botHeaders });
    await app.ask({ type: 'key', publicKey: me.json().verify_key }, 'key-set');
    const saved = await request(server.base, {
      method: 'PATCH',
      path: '/api/v1/applications/@me',
      headers: botHeaders,
      body: { interactions_endpoint_url: `${app.base}/interactions`, event_webhooks_url: `${app.base}/events`, event_webhooks_status: 2, event_webhooks_types: ['APPLICATION_AUTHORIZED', 'APPLICATION_DEAUTHORIZED'] },
    });
    if (saved.status !== 200) throw new Error(`saving the app's endpoints answered ${saved.status}: ${saved.text.slice(0, 300)}`);

    log(`signing in ${peopleCount} members through /login`);
    const sessions = await pool(people, 4, async (username) => {
      const jar = await signInAs(server.base, username);
      const page = await request(server.base, { path: `/channels/${channels[0]}`, headers: { cookie: jar.header() } });
      const form = formFields(page.text, '/messages');
      if (!form) throw new Error(`no composer on the channel page for ${username} (${page.status})`);
      return { cookie: jar.header(), fields: form.fields.filter(([name]) => name !== 'content') };
    });

    // Invocation i: person i / 5, channel i / 20 (each within its default limit for the whole run).
    // `target`: Gatehouse, or the bare floor (bench/interactions-bare-server.mjs) in the same run.
    const invoke = async (i, target = server) => {
      const session = sessions[Math.floor(i / PER_PERSON)];
      const channelId = channels[Math.floor(i / PER_CHANNEL)];
      const sent = nowNs();
      const res = await request(target.base, { method: 'POST', path: `/channels/${channelId}/messages`, headers: { cookie: session.cookie }, form: [...session.fields, ['content', `/ping n:${i}`]] });
      const done = nowNs();
      if (res.status !== 303 || res.headers.location !== `/channels/${channelId}#post`) {
        const said = /class="error"[^>]*>([^<]*)/.exec(res.text)?.[1];
        throw new Error(`invocation ${i} answered ${res.status}${said ? `: ${said}` : ''} ${res.headers.location ?? ''}`);
      }
      return { i, sent, done };
    };
    /** Runs invocations `first`…`first + count - 1` as `run` starts them: the two delays of each (ms), server CPU, wall time; `shape` says how they were started. */
    const measured = async (first, count, shape, run, target = server) => {
      await app.ask({ type: 'clear' }, 'cleared');
      const cpu0 = cpuMicros(target.pid);
      const started = nowNs();
      const timings = await run(Array.from({ length: count }, (_, k) => first + k));
      const wallS = Number(nowNs() - started) / 1e9;
      const cpu1 = cpuMicros(target.pid);
      const received = await app.ask({ type: 'report' }, 'report');
      if (received.bad.length) throw new Error(`the app saw unexpected requests: ${received.bad.slice(0, 3).join('; ')}`);
      const arrivals = new Map(received.commands.map(([n, ns]) => [n, BigInt(ns)]));
      if (arrivals.size !== count || received.commands.length !== count) throw new Error(`the app received ${received.commands.length} interactions (${arrivals.size} distinct) for ${count} invocations`);
      const toApp = timings.map((t) => Number(arrivals.get(t.i) - t.sent) / 1e6);
      const roundTrip = timings.map((t) => Number(t.done - t.sent) / 1e6);
      const stats = (xs) => ({ p50: round(percentile(xs, 50)), p99: round(percentile(xs, 99)), max: round(Math.max(...xs)) });
      const result = { invocations: count, ...shape, perSecond: round(count / wallS, 0), toAppMs: stats(toApp), roundTripMs: stats(roundTrip), cpuUsPerInvocation: round((cpu1.user + cpu1.system - cpu0.user - cpu0.system) / count, 0) };
      log(`  submit → app p50 ${result.toAppMs.p50} ms, p99 ${result.toAppMs.p99} ms; round trip p50 ${result.roundTripMs.p50} ms, p99 ${result.roundTripMs.p99} ms; ${result.cpuUsPerInvocation} µs server CPU per invocation; ${result.perSecond}/s`);
      return result;
    };
    /** Started as fast as `concurrency` allows. */
    const measure = (first, count, concurrency, target = server) => measured(first, count, { concurrency }, (indices) => pool(indices, concurrency, (i) => invoke(i, target)), target);
    /** The same, each started at its time of a steady `rate` per second whatever the others are doing (an open loop). */
    const measureAtRate = (first, count, rate) =>
      measured(first, count, { rate }, async (indices) => {
        const started = nowNs();
        const runs = [];
        for (let k = 0; k < indices.length; k += 1) {
          const due = started + BigInt(Math.round((k * 1e9) / rate));
          const wait = Number(due - nowNs()) / 1e6;
          if (wait > 1) await sleep(wait);
          runs.push(invoke(indices[k]));
        }
        return Promise.all(runs);
      });
    log(`warm-up: ${opts.warmup} invocations`);
    await pool(Array.from({ length: opts.warmup }, (_, i) => i), opts.concurrency, (i) => invoke(i));
    /** The server's CPU profile is summarised over each of these (--profile). */
    const windows = [];
    const window = async (name, measuring) => {
      const start = Number(nowNs() / 1000n);
      const result = await measuring;
      windows.push({ name, start, end: Number(nowNs() / 1000n) });
      return result;
    };
    log(`one at a time: ${opts.serial} invocations`);
    const serial = await window(`${opts.serial} invocations one at a time`, measure(opts.warmup, opts.serial, 1));

    log(`measured: ${opts.invocations} invocations, ${opts.concurrency} at a time`);
    const commands = await window(`${opts.invocations} invocations, ${opts.concurrency} at a time`, measure(opts.warmup + opts.serial, opts.invocations, opts.concurrency));

    // The floor, in the same run: the same invocations, 50 at a time and one at a time, through
    // node:http doing only the protocol (form in, signed interaction out, the answer read, 303).
    log('the bare floor (bench/interactions-bare-server.mjs): the same invocations');
    const bareServer = await startInteractionsBare(`${app.base}/interactions`);
    let bare;
    try {
      const bareFirst = opts.warmup + opts.serial;
      await pool(Array.from({ length: opts.warmup }, (_, i) => i), opts.concurrency, (i) => invoke(i, bareServer));
      const bareSerial = await measure(opts.warmup, opts.serial, 1, bareServer);
      bare = { serial: bareSerial, commands: await measure(bareFirst, opts.invocations, opts.concurrency, bareServer) };
    } finally {
      await bareServer.stop();
    }

    // Open loops: each invocation starts at its time whatever the others are doing, as people do.
    const atRates = [];
    for (const [n, rate] of opts.rates.entries()) {
      const first = n === 0 ? opts.warmup + opts.serial + opts.invocations : 0;
      if (n > 0) await sleep(INVOKE_WINDOW_MS + 500);
      log(`at a steady ${rate} per second: ${opts.atRate} invocations`);
      atRates.push(await window(`${opts.atRate} invocations at a steady ${rate} per second`, measureAtRate(first, opts.atRate, rate)));
    }

    // Event delivery: queue while no server runs, then time the start-up round's sending.
    await server.stop();
    server = undefined;
    log(`queueing ${opts.events} app events through the service layer (no server running)`);
    const queued = execFileSync(process.execPath, [join(BENCH_DIR, 'lib/queue-app-events.mjs'), bot.client_id, owner.id, String(opts.events)], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (JSON.parse(queued.trim().split('\n').at(-1)).queued !== opts.events) throw new Error(`queue-app-events.mjs printed ${queued}`);
    await app.ask({ type: 'clear' }, 'cleared');
    log('starting the server again: its start-up round sends them');
    const firstProfiles = profileDir ? readdirSync(profileDir) : [];
    server = await startServer(env, { cpuProfDir: profileDir });
    const atReady = cpuMicros(server.pid);
    const readyCount = (await app.ask({ type: 'report' }, 'report')).events.length;
    const deadline = Date.now() + 30_000 + opts.events * 10;
    let report = await app.ask({ type: 'report' }, 'report');
    while (report.events.length < opts.events && Date.now() < deadline) {
      await sleep(100);
      report = await app.ask({ type: 'report' }, 'report');
    }
    const atDone = cpuMicros(server.pid);
    // Anything sent twice would arrive within the next moments.
    await sleep(1000);
    report = await app.ask({ type: 'report' }, 'report');
    if (report.bad.length) throw new Error(`the app saw unexpected requests: ${report.bad.slice(0, 3).join('; ')}`);
    const times = report.events.map(([, ns]) => BigInt(ns)).sort((a, b) => (a < b ? -1 : 1));
    const spanS = times.length > 1 ? Number(times.at(-1) - times[0]) / 1e9 : NaN;
    const events = {
      queued: opts.events,
      received: report.events.length,
      authorized: report.events.filter(([t]) => t === 'APPLICATION_AUTHORIZED').length,
      perSecond: round((times.length - 1) / spanS, 0),
      cpuUsPerEvent: report.events.length > readyCount ? round((atDone.user + atDone.system - atReady.user - atReady.system) / (report.events.length - readyCount), 0) : null,
    };
    log(`  ${events.received} of ${events.queued} events received, ${events.perSecond}/s from the first to the last; ${events.cpuUsPerEvent ?? '–'} µs server CPU per event`);
    if (events.received !== events.queued) throw new Error(`${events.received} events reached the app for ${events.queued} queued (lost or sent twice)`);

    let profile;
    if (profileDir) {
      // Main threads only (CPU.<date>.<time>.<pid>.<thread id>.<n>.cpuprofile, thread 0), as run.mjs reads them.
      const mainThread = (f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f);
      await server.stop();
      const first = firstProfiles.find(mainThread);
      const second = readdirSync(profileDir).find((f) => mainThread(f) && !firstProfiles.includes(f));
      const parts = [];
      if (first) parts.push(profileMarkdown(summariseProfile(join(profileDir, first), windows)));
      if (second && times.length > 1) parts.push(profileMarkdown(summariseProfile(join(profileDir, second), [{ name: `${events.received} app events delivered`, start: Number(times[0] / 1000n), end: Number(times.at(-1) / 1000n) }])));
      profile = parts.join('\n');
    }

    const date = new Date().toISOString();
    const machine = `Machine: ${cpus().length} cores, load average ${round(load0)} before and ${round(loadavg()[0])} after (shared with other work: figures are noisy).`;
    const verdict = (ok) => (ok ? 'met' : 'missed');
    const text = [
      `## Interactions and app events (issue #40)`,
      '',
      `\`npm run bench:interactions\`, ${date.slice(0, 16)} UTC; ${db.kind}. ${machine}`,
      '',
      `| command \`/ping\` (${commands.invocations} invocations, ${commands.concurrency} at a time, app answering type 4 at once) | p50 | p99 | max |`,
      '|---|---:|---:|---:|',
      `| submit → app has the interaction (Gatehouse's own time + 2 loopback hops; target p99 ≤ ${P99_TARGET_MS} ms: ${verdict(commands.toAppMs.p99 <= P99_TARGET_MS)}) | ${commands.toAppMs.p50} ms | ${commands.toAppMs.p99} ms | ${commands.toAppMs.max} ms |`,
      `| submit → composer's 303 (the bot's answer posted) | ${commands.roundTripMs.p50} ms | ${commands.roundTripMs.p99} ms | ${commands.roundTripMs.max} ms |`,
      `| bare node:http, the same ${bare.commands.invocations} invocations ${bare.commands.concurrency} at a time (the floor: the protocol alone, bench/interactions-bare-server.mjs): submit → app | ${bare.commands.toAppMs.p50} ms | ${bare.commands.toAppMs.p99} ms | ${bare.commands.toAppMs.max} ms |`,
      `| bare node:http, ${bare.commands.concurrency} at a time: submit → 303 | ${bare.commands.roundTripMs.p50} ms | ${bare.commands.roundTripMs.p99} ms | ${bare.commands.roundTripMs.max} ms |`,
      `| one at a time (${serial.invocations} invocations): submit → app | ${serial.toAppMs.p50} ms | ${serial.toAppMs.p99} ms | ${serial.toAppMs.max} ms |`,
      `| one at a time: submit → 303 | ${serial.roundTripMs.p50} ms | ${serial.roundTripMs.p99} ms | ${serial.roundTripMs.max} ms |`,
      ...atRates.flatMap((r) => [
        `| at a steady ${r.rate}/s (${r.invocations} invocations, ${r.cpuUsPerInvocation} µs server CPU each): submit → app | ${r.toAppMs.p50} ms | ${r.toAppMs.p99} ms | ${r.toAppMs.max} ms |`,
        `| at a steady ${r.rate}/s: submit → 303 | ${r.roundTripMs.p50} ms | ${r.roundTripMs.p99} ms | ${r.roundTripMs.max} ms |`,
      ]),
      '',
      `Server CPU per invocation: ${commands.cpuUsPerInvocation} µs at ${commands.concurrency} at a time (${commands.perSecond} invocations/s), ${serial.cpuUsPerInvocation} µs one at a time. The bare floor: ${bare.commands.cpuUsPerInvocation} µs at ${bare.commands.concurrency} at a time (${bare.commands.perSecond}/s), ${bare.serial.cpuUsPerInvocation} µs one at a time (submit → app p50 ${bare.serial.toAppMs.p50} ms, p99 ${bare.serial.toAppMs.p99} ms).`,
      '',
      `Event delivery: ${events.received} of ${events.queued} queued events (APPLICATION_AUTHORIZED and _DEAUTHORIZED) reached the local receiver, ${events.perSecond} events/s from the first to the last (target ≥ ${EVENTS_TARGET_PER_S}/s: ${verdict(events.perSecond >= EVENTS_TARGET_PER_S)}); ${events.cpuUsPerEvent ?? '–'} µs server CPU per event.`,
    ].join('\n');
    process.stdout.write(`${text}\n`);
    const record = { date, database: db.kind, load: [load0, loadavg()[0]], commands, serial, bare, atRates, events };
    process.stdout.write(`${JSON.stringify(record)}\n`);
    const results = join(BENCH_DIR, 'results');
    mkdirSync(results, { recursive: true });
    const stamp = date.replace(/[:.]/g, '-');
    writeFileSync(join(results, `interactions-${stamp}.json`), `${JSON.stringify(record, null, 2)}\n`);
    if (profile) {
      writeFileSync(join(results, `profile-interactions-${stamp}.md`), profile);
      log(`profile summary: bench/results/profile-interactions-${stamp}.md`);
    }
    if (opts.report) {
      const file = join(BENCH_DIR, 'REPORT.md');
      writeFileSync(file, replaceReportSection(readFileSync(file, 'utf8'), 'interactions', text));
      log('bench/REPORT.md: section "interactions" written');
    }
    if (!opts.smoke) {
      const misses = [];
      if (commands.toAppMs.p99 > P99_TARGET_MS) misses.push(`submit → app p99 ${commands.toAppMs.p99} ms (target ≤ ${P99_TARGET_MS} ms)`);
      if (!(events.perSecond >= EVENTS_TARGET_PER_S)) misses.push(`${events.perSecond} events/s (target ≥ ${EVENTS_TARGET_PER_S})`);
      if (misses.length) {
        process.stderr.write(`missed: ${misses.join('; ')}\n`);
        process.exitCode = 1;
      }
    }
  } finally {
    await server?.stop();
    await app.stop();
    await db.drop();
    if (process.env.BENCH_KEEP) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});

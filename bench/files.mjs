#!/usr/bin/env node
// The files benchmark (issue #42, "bench/"): what storing and serving a file costs Gatehouse beside
// node:http doing the least that could be called the same work, in the same run.
//
//  1. Upload: webhook execute (no wait) with multipart/form-data, one 8 MiB file (the body prepared
//     once as bytes), `--connections` at a time, at Gatehouse's defaults (SQLite, the fs store);
//     beside it a bare node:http sink taking the same body two ways: reading and discarding it, and
//     streaming it to a file ({n}.part renamed when complete, as the fs store does; the raw
//     multipart body, not parsed). MB/s, server CPU per MB, and the ratio to the file sink (the
//     like-for-like one; target ≥ 50 %). The webhook rate limit (SPEC §8: 10 requests per 2 s per
//     webhook) is kept out of the way by sending in turn through 40 webhooks.
//  2. Memory: 10 uploads of 25 MiB (the default per-message limit) at once, twice over (the smoke:
//     once); the server's peak RSS from /proc (target ≤ 200 MB).
//  3. Download: GET of the stored 8 MiB file's signed URL (from the execute answer with
//     ?wait=true) beside node:http streaming the same bytes from disk (fs.createReadStream); the
//     whole file and a 1 MiB range. MB/s and CPU per MB.
//
// Usage: npm run bench:files [-- --duration 10 --connections 4 --rounds 3 --profile --no-build --no-report]
//   --smoke        1 s per measurement, one round, nothing judged (CI: the benchmark cannot rot);
//                  fails on an error or an answer other than the expected
//   --rounds <n>   measure each side n times, alternating, and report the median round (default 3)
//   --profile      node --cpu-prof on the server; the upload's and the download's samples summarised
//                  into bench/results/profile-<timestamp>-files.md
//   --no-build     use the existing dist/
//   --no-report    do not write bench/REPORT.md's files section (a smoke run never writes it)
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from './lib/database.mjs';
import { requestHead } from './lib/files-load.mjs';
import { request } from './lib/http.mjs';
import { BENCH_DIR, ROOT, RssMeter, cpuMicros, freePort, machineTicks, processHandle, startOptions, startServer } from './lib/processes.mjs';
import { profileMarkdown, summariseProfile } from './lib/profile.mjs';
import { replaceReportSection } from './lib/report.mjs';
import { installBot, seedChannels, seedDirectory, seedWebhooks, signIn } from './lib/seed.mjs';

const MiB = 1024 * 1024;
const UPLOAD_BYTES = 8 * MiB;
/** GATEHOUSE_ATTACHMENT_MAX_BYTES's default: the largest message a client may send. */
const BIG_BYTES = 25 * MiB;
const BIG_CONCURRENT = 10;
const RANGE_BYTES = MiB;
const CHANNELS = 4;
const WEBHOOKS_PER_CHANNEL = 10;
const BOUNDARY = '----gatehouse-bench-files-7f3a9c';
const TARGET = { ratio: 0.5, peakRssMb: 200 };

function parseArgs(argv) {
  const o = { duration: 10, connections: 4, rounds: 3, smoke: false, build: true, report: true, profile: false };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--duration') o.duration = Number(argv[++i]);
    else if (a === '--connections') o.connections = Number(argv[++i]);
    else if (a === '--rounds') o.rounds = Number(argv[++i]);
    else if (a === '--smoke') o.smoke = true;
    else if (a === '--no-build') o.build = false;
    else if (a === '--no-report') o.report = false;
    else if (a === '--profile') o.profile = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.smoke) Object.assign(o, { duration: 1, rounds: 1 });
  if (!(o.duration > 0 && Number.isInteger(o.connections) && o.connections >= 1 && Number.isInteger(o.rounds) && o.rounds >= 1)) throw new Error('--duration must be > 0, --connections and --rounds whole numbers ≥ 1');
  return o;
}

const started = Date.now();
const log = (line) => process.stderr.write(`[files ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);
const monoUs = () => Number(process.hrtime.bigint() / 1000n);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Discord's execute body: payload_json, then files[0] with its name and type. */
function multipartBody(file) {
  const part = (headers) => Buffer.from(`--${BOUNDARY}\r\n${headers}\r\n\r\n`, 'latin1');
  return Buffer.concat([
    part('Content-Disposition: form-data; name="payload_json"\r\nContent-Type: application/json'),
    Buffer.from('{"content":"bench upload","attachments":[{"id":0,"description":"bench file"}]}\r\n'),
    part('Content-Disposition: form-data; name="files[0]"; filename="bench.bin"\r\nContent-Type: application/octet-stream'),
    file,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`, 'latin1'),
  ]);
}

let worker;
/**
 * One job of bench/lib/files-load.mjs, in its child process (started once, on the first job, so a
 * short smoke does not pay a process start per measurement); `job.requests[i].body` indexes `job.bodies`.
 */
async function runFilesLoad(job) {
  worker ??= new Promise((resolve, reject) => {
    const child = fork(join(BENCH_DIR, 'lib', 'files-load.mjs'), ['--files-load-worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`files load worker exited with ${code}`)));
  });
  const child = await worker;
  return new Promise((resolve, reject) => {
    const exited = (code) => reject(new Error(`files load worker exited with ${code} during a job`));
    child.once('exit', exited);
    child.once('message', (result) => {
      child.off('exit', exited);
      resolve(result);
    });
    child.send(job);
  });
}

/** Starts bench/files-bare-server.mjs with `env` and waits for /healthz. */
async function startBareFiles(env) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(BENCH_DIR, 'files-bare-server.mjs')], { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  child.stderr.on('data', (c) => output.push(c.toString()));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i += 1) {
    try {
      if ((await request(base, { path: '/healthz' })).status === 200) return processHandle(child, base, output);
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`bench/files-bare-server.mjs did not start: ${output.join('')}`);
}

/**
 * One measurement against `server`: its CPU from /proc, its peak RSS, the machine's steal share.
 * `okStatus`: the answer every request must get; `bytesEach`: the payload bytes one answered request moves.
 */
async function measure(server, job, { okStatus, bytesEach, windows, name }) {
  const meter = new RssMeter(server.pid);
  meter.start();
  const cpu0 = cpuMicros(server.pid);
  const m0 = machineTicks();
  const w0 = monoUs();
  const r = await runFilesLoad({ base: server.base, ...job });
  const w1 = monoUs();
  const cpu1 = cpuMicros(server.pid);
  const m1 = machineTicks();
  const peakRssMb = Math.round(meter.stop() * 10) / 10;
  windows?.push({ name, start: w0, end: w1 });
  const ok = r.statusCodes[okStatus] ?? 0;
  const mb = (ok * bytesEach) / MiB;
  const cpuUs = cpu0 && cpu1 ? cpu1.user + cpu1.system - (cpu0.user + cpu0.system) : undefined;
  // The kernel's part (copying from the socket and into the page cache), the same work on both sides.
  const systemUs = cpu0 && cpu1 ? cpu1.system - cpu0.system : undefined;
  return {
    answered: r.answered,
    ok,
    statusCodes: r.statusCodes,
    errors: r.errors,
    firstError: r.firstError,
    seconds: Math.round(r.seconds * 100) / 100,
    mbPerSec: Math.round((mb / r.seconds) * 10) / 10,
    cpuMsPerMb: cpuUs !== undefined && mb > 0 ? Math.round((cpuUs / 1000 / mb) * 100) / 100 : undefined,
    cpuSystemMsPerMb: systemUs !== undefined && mb > 0 ? Math.round((systemUs / 1000 / mb) * 100) / 100 : undefined,
    cpuShare: cpuUs !== undefined ? Math.round((cpuUs / 1e6 / r.seconds) * 100) / 100 : undefined,
    latency: r.latency,
    peakRssMb,
    stealShare: m0 && m1 && m1.total > m0.total ? Math.round(((m1.steal - m0.steal) / (m1.total - m0.total)) * 1000) / 1000 : undefined,
  };
}

/** The round whose MB/s is the median of `rounds` (its CPU per MB and the rest come with it). */
function medianRound(rounds) {
  const m = median(rounds.map((r) => r.mbPerSec));
  return { ...rounds.reduce((best, r) => (Math.abs(r.mbPerSec - m) < Math.abs(best.mbPerSec - m) ? r : best)), rounds: rounds.map((r) => r.mbPerSec) };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const load = loadavg().map((x) => Number(x.toFixed(2)));
  log(`files benchmark: SQLite + fs store, ${opts.connections} connections, ${opts.duration} s per measurement, ${opts.rounds} round(s)${opts.smoke ? ' (smoke)' : ''}; load average ${load.join(' ')} on ${cpus().length} cores`);
  if (opts.build) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-files-'));
  const profileDir = opts.profile ? join(dir, 'profile') : undefined;
  const processes = [];
  const failures = [];
  const windows = [];
  try {
    // The file: random bytes (nothing compresses), on disk for the bare server's downloads.
    const file = randomBytes(UPLOAD_BYTES);
    const filePath = join(dir, 'file-8m.bin');
    writeFileSync(filePath, file);
    const body = multipartBody(file);
    const bigBody = multipartBody(randomBytes(BIG_BYTES));

    const db = await freshDatabase({ postgres: false }, dir);
    // At the defaults: GATEHOUSE_FILE_STORE is fs on SQLite; its directory is the run's own.
    const env = { ...db.env, GATEHOUSE_FILES_DIR: join(dir, 'files') };
    log('seeding through the CLI: person, server, bot app, channels');
    const directory = await seedDirectory(env);
    const channelIds = await seedChannels(env, directory.server.id, CHANNELS, 'files');
    const server = await startServer(env, { cpuProfDir: profileDir });
    processes.push(server);
    const jar = await signIn(server.base);
    await installBot(server.base, jar, directory.botApp.client_id, directory.server.id);
    const webhooks = await seedWebhooks(server.base, directory.botApp.bot_token, channelIds, WEBHOOKS_PER_CHANNEL);
    log(`server at ${server.base}; ${webhooks.length} webhooks`);
    const bareFiles = join(dir, 'bare-files');
    mkdirSync(bareFiles);
    const bare = await startBareFiles({ FILES_DIR: bareFiles, FILE: filePath });
    processes.push(bare);

    const host = (base) => new URL(base).host;
    const multipart = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
    const uploads = (base, paths, bytes) => ({ bodies: [bytes], requests: paths.map((path) => ({ head: requestHead({ method: 'POST', path, host: host(base), headers: multipart, contentLength: bytes.length }), body: 0 })) });
    const gatehouseUpload = uploads(server.base, webhooks.map((w) => w.path), body);
    const bareUpload = (path) => uploads(bare.base, [path], body);

    // The stored file's signed URL, from the execute answer (?wait=true: the message object); this
    // also warms both servers up.
    const stored = await executeAndWait(server.base, webhooks[0].path, multipart, body);
    log(`stored file: ${stored.pathAndQuery.slice(0, 90)}…`);
    await runFilesLoad({ base: bare.base, ...bareUpload('/to-file'), connections: 1, count: 1 });

    const sides = {
      upload: { gatehouse: [], bareFile: [], bareDiscard: [] },
      download: { gatehouse: [], bare: [] },
      range: { gatehouse: [], bare: [] },
    };
    const d = opts.duration;
    const c = opts.connections;
    const get = (base, path, headers = {}) => ({ requests: [{ head: requestHead({ path, host: host(base), headers }) }] });
    const rangeHeader = { range: `bytes=0-${RANGE_BYTES - 1}` };
    for (let round = 1; round <= opts.rounds; round += 1) {
      log(`round ${round}/${opts.rounds}: uploads`);
      // Alternating sides within each round, so drift of the shared machine falls on all of them.
      sides.upload.bareFile.push(await measure(bare, { ...bareUpload('/to-file'), connections: c, duration: d }, { okStatus: 204, bytesEach: UPLOAD_BYTES }));
      sides.upload.gatehouse.push(await measure(server, { ...gatehouseUpload, connections: c, duration: d }, { okStatus: 204, bytesEach: UPLOAD_BYTES, windows, name: `upload, round ${round}` }));
      sides.upload.bareDiscard.push(await measure(bare, { ...bareUpload('/discard'), connections: c, duration: d }, { okStatus: 204, bytesEach: UPLOAD_BYTES }));
      log(`round ${round}/${opts.rounds}: downloads`);
      sides.download.bare.push(await measure(bare, { ...get(bare.base, '/file'), connections: c, duration: d }, { okStatus: 200, bytesEach: UPLOAD_BYTES }));
      sides.download.gatehouse.push(await measure(server, { ...get(server.base, stored.pathAndQuery), connections: c, duration: d }, { okStatus: 200, bytesEach: UPLOAD_BYTES, windows, name: `download, round ${round}` }));
      sides.range.gatehouse.push(await measure(server, { ...get(server.base, stored.pathAndQuery, rangeHeader), connections: c, duration: d }, { okStatus: 206, bytesEach: RANGE_BYTES }));
      sides.range.bare.push(await measure(bare, { ...get(bare.base, '/file', rangeHeader), connections: c, duration: d }, { okStatus: 206, bytesEach: RANGE_BYTES }));
    }

    // Twice over, so that the second wave meets whatever the first left behind; the smoke once.
    const bigCount = BIG_CONCURRENT * (opts.smoke ? 1 : 2);
    log(`memory: ${bigCount} uploads of 25 MiB, ${BIG_CONCURRENT} at once`);
    const bigUpload = uploads(server.base, webhooks.slice(0, bigCount).map((w) => w.path), bigBody);
    const rssBefore = rssMb(server.pid);
    const memory = await measure(server, { ...bigUpload, connections: BIG_CONCURRENT, count: bigCount }, { okStatus: 204, bytesEach: BIG_BYTES, windows, name: 'memory: 10 × 25 MiB at once' });
    memory.rssBeforeMb = rssBefore;
    const bareMemory = await measure(bare, { ...uploads(bare.base, ['/to-file'], bigBody), connections: BIG_CONCURRENT, count: bigCount }, { okStatus: 204, bytesEach: BIG_BYTES });

    const result = {
      date: new Date().toISOString(),
      smoke: opts.smoke,
      node: process.version,
      cores: cpus().length,
      loadAverageAtStart: load,
      loadAverageAtEnd: loadavg().map((x) => Number(x.toFixed(2))),
      connections: c,
      duration: d,
      rounds: opts.rounds,
      upload: { gatehouse: medianRound(sides.upload.gatehouse), bareFile: medianRound(sides.upload.bareFile), bareDiscard: medianRound(sides.upload.bareDiscard) },
      download: { gatehouse: medianRound(sides.download.gatehouse), bare: medianRound(sides.download.bare) },
      range: { gatehouse: medianRound(sides.range.gatehouse), bare: medianRound(sides.range.bare) },
      memory: { gatehouse: memory, bareFile: bareMemory, uploads: bigCount },
    };
    result.upload.ratioToFile = Math.round((result.upload.gatehouse.mbPerSec / result.upload.bareFile.mbPerSec) * 1000) / 1000;
    result.upload.ratioToDiscard = Math.round((result.upload.gatehouse.mbPerSec / result.upload.bareDiscard.mbPerSec) * 1000) / 1000;
    result.download.ratio = Math.round((result.download.gatehouse.mbPerSec / result.download.bare.mbPerSec) * 1000) / 1000;
    result.range.ratio = Math.round((result.range.gatehouse.mbPerSec / result.range.bare.mbPerSec) * 1000) / 1000;
    result.met = opts.smoke ? undefined : { uploadRatio: result.upload.ratioToFile >= TARGET.ratio, peakRss: memory.peakRssMb <= TARGET.peakRssMb };

    // Every measurement must have had its answers, and only the expected ones.
    const expected = [
      ['upload', sides.upload.gatehouse, 204], ['upload to file (bare)', sides.upload.bareFile, 204], ['upload discarded (bare)', sides.upload.bareDiscard, 204],
      ['download', sides.download.gatehouse, 200], ['download (bare)', sides.download.bare, 200], ['range', sides.range.gatehouse, 206], ['range (bare)', sides.range.bare, 206],
      ['memory', [memory], 204], ['memory (bare)', [bareMemory], 204],
    ];
    for (const [name, rounds, status] of expected) {
      for (const r of rounds) if (r.ok === 0 || r.ok !== r.answered || r.errors > 0) failures.push(`${name}: ${JSON.stringify(r.statusCodes)}${r.errors ? `, ${r.errors} connection errors (${r.firstError})` : ''} (every answer should be ${status})`);
    }

    let profiles;
    if (profileDir) {
      await server.stop();
      const files = readdirSync(profileDir).filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
      if (files[0]) profiles = summariseProfile(join(profileDir, files.sort().at(-1)), windows);
    }

    mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
    const stamp = result.date.replace(/[:.]/g, '-');
    const resultsFile = `results/${stamp}-files${opts.smoke ? '-smoke' : ''}.json`;
    writeFileSync(join(BENCH_DIR, resultsFile), `${JSON.stringify(result, null, 2)}\n`);
    log(`results: bench/${resultsFile}`);
    if (profiles) {
      writeFileSync(join(BENCH_DIR, 'results', `profile-${stamp}-files.md`), `# CPU profile of the server (files benchmark), ${result.date}\n\n${profileMarkdown(profiles)}`);
      log(`profile summary: bench/results/profile-${stamp}-files.md`);
    }
    const text = reportText(result, resultsFile);
    process.stdout.write(`\n${text}\n`);
    if (opts.report && !opts.smoke) {
      const path = join(BENCH_DIR, 'REPORT.md');
      writeFileSync(path, replaceReportSection(readFileSync(path, 'utf8'), 'files', text));
      log('bench/REPORT.md: section "files" written');
    }
  } finally {
    if (worker) (await worker.catch(() => undefined))?.disconnect();
    for (const p of processes) await p.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stderr.write(`files benchmark: unexpected answers:\n  ${failures.join('\n  ')}\n`);
    process.exitCode = 1;
  }
}

/** Resident memory of a process now, in MB (/proc/<pid>/status VmRSS). */
function rssMb(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : undefined;
}

/** Executes once with ?wait=true; resolves to the path and query of the stored file's signed URL. */
async function executeAndWait(base, path, headers, body) {
  const res = await fetch(`${base}${path}?wait=true`, { method: 'POST', headers, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`execute ?wait=true with an 8 MiB file answered ${res.status}: ${text.slice(0, 300)}`);
  const attachment = JSON.parse(text).attachments?.[0];
  if (!attachment || attachment.size !== UPLOAD_BYTES) throw new Error(`the execute answer has no 8 MiB attachment: ${text.slice(0, 300)}`);
  const url = new URL(attachment.url);
  return { pathAndQuery: `${url.pathname}${url.search}` };
}

const fmt = (x) => (x === undefined ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: 2 }));

/** bench/REPORT.md's files section (the format of the other sections: a header line, tables, notes). */
function reportText(r, resultsFile) {
  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  const row = (what, m) => `| ${what} | ${fmt(m.mbPerSec)} | ${fmt(m.cpuMsPerMb)} (${fmt(m.cpuSystemMsPerMb)}) | ${fmt(m.cpuShare)} | ${fmt(m.latency.p50)} / ${fmt(m.latency.p99)} | ${fmt(m.peakRssMb)} | ${m.rounds.map(fmt).join(', ')} |`;
  const held = (ok) => (ok === undefined ? 'not judged' : ok ? 'held' : 'missed');
  return [
    '## Files (issue #42)',
    '',
    `\`npm run bench:files\`, ${r.date.slice(0, 16).replace('T', ' ')} UTC; SQLite, fs store, Gatehouse at its defaults (dist/, \`node ${startOptions().join(' ')}\`). ${r.connections} connections, ${r.duration} s per measurement, median of ${r.rounds} round(s), sides alternating. Machine: ${r.cores} cores, load average ${r.loadAverageAtStart[0]} before and ${r.loadAverageAtEnd[0]} after (shared with other work: MB/s is noisy, CPU per MB less so). Raw figures: bench/${resultsFile} (not in the tree).`,
    '',
    '| measurement | MB/s | server CPU ms per MB (of it system) | server CPU (cores) | latency p50 / p99 (ms) | peak RSS (MB) | MB/s of each round |',
    '|---|---:|---:|---:|---:|---:|---|',
    row('upload: execute, multipart, one 8 MiB file (Gatehouse, fs store)', r.upload.gatehouse),
    row('upload: bare node:http, the body streamed to a file', r.upload.bareFile),
    row('upload: bare node:http, the body read and discarded', r.upload.bareDiscard),
    row('download: GET the signed attachment URL, 8 MiB (Gatehouse)', r.download.gatehouse),
    row('download: bare node:http, fs.createReadStream of the same file', r.download.bare),
    row('range: `bytes=0-1048575` of the attachment, 206 (Gatehouse)', r.range.gatehouse),
    row('range: the same range, bare node:http', r.range.bare),
    '',
    `- Upload: ${pct(r.upload.ratioToFile)} of the bare sink writing to a file (target ≥ 50 %: ${held(r.met?.uploadRatio)}); ${pct(r.upload.ratioToDiscard)} of the sink that discards.`,
    `- Download: ${pct(r.download.ratio)} of bare node:http streaming the file; a 1 MiB range: ${pct(r.range.ratio)}.`,
    `- Memory: ${BIG_CONCURRENT} uploads of 25 MiB at once, ${r.memory.uploads} in all: Gatehouse's peak RSS ${fmt(r.memory.gatehouse.peakRssMb)} MB (${fmt(r.memory.gatehouse.rssBeforeMb)} MB before; target ≤ 200 MB: ${held(r.met?.peakRss)}), ${fmt(r.memory.gatehouse.mbPerSec)} MB/s; the bare file sink's ${fmt(r.memory.bareFile.peakRssMb)} MB, ${fmt(r.memory.bareFile.mbPerSec)} MB/s.`,
  ].join('\n');
}

main().catch((error) => {
  process.stderr.write(`files benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

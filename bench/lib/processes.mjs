// Starting the server under test and the bare node:http server, sampling their memory, and running
// autocannon in a separate process.
import { fork, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from './http.mjs';

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const ROOT = dirname(BENCH_DIR);
/** The build under test: dist/ unless BENCH_DIST names another (to compare a change side by side). */
export const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');

/** A free TCP port on 127.0.0.1 (chosen here, so that nothing needs to read the port from the server's log). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Kilobytes from a /proc/<pid>/status line such as "VmHWM:   123456 kB". */
function statusKb(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Peak resident memory of a process over one measurement: the kernel's high-water mark (VmHWM),
 * reset at the start by writing 5 to /proc/<pid>/clear_refs, and, as a fallback where that is not
 * allowed, the largest VmRSS seen by sampling every 100 ms.
 */
export class RssMeter {
  constructor(pid) {
    this.pid = pid;
  }
  start() {
    let reset = false;
    try {
      writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
      reset = true;
    } catch {
      /* not permitted: sampling only */
    }
    this.hwmReset = reset;
    this.max = statusKb(this.pid, 'VmRSS') ?? 0;
    this.timer = setInterval(() => {
      const rss = statusKb(this.pid, 'VmRSS');
      if (rss !== undefined && rss > this.max) this.max = rss;
    }, 100);
  }
  /** Peak RSS in MB since start(). */
  stop() {
    clearInterval(this.timer);
    const hwm = this.hwmReset ? statusKb(this.pid, 'VmHWM') : undefined;
    return Math.max(hwm ?? 0, this.max) / 1024;
  }
}

/**
 * CPU time a process has used so far, in microseconds: `{ user, system }` from /proc/<pid>/stat
 * (clock ticks of 10 ms). System time is mostly the kernel's TCP work for each answer. With `tid`,
 * one thread's own (/proc/<pid>/task/<tid>/stat; the main thread's tid is the pid).
 */
export function cpuMicros(pid, tid) {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain blanks.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
  } catch {
    return undefined;
  }
}

/**
 * The whole machine's CPU time so far, in clock ticks, from /proc/stat's first line: `steal` is
 * time the hypervisor gave to other guests while this one wanted to run. On a shared virtual
 * machine it can take a fifth of the CPU for minutes at a time and makes any figure measured
 * meanwhile meaningless (docs/performance-log.md, sixth round). Undefined where there is no /proc.
 */
export function machineTicks() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest times are inside user and nice).
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    return { steal: fields[7] ?? 0, total };
  } catch {
    return undefined;
  }
}

async function waitHealthy(base, child, output, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output.join('')}`);
    try {
      const res = await request(base, { path: '/healthz' });
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await sleep(100);
  }
  throw new Error(`server did not answer /healthz within ${timeoutMs} ms:\n${output.join('')}`);
}

function track(child) {
  const output = [];
  const keep = (chunk) => {
    output.push(chunk.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return output;
}

/**
 * The Node options `npm start` runs the server with (package.json's start script, e.g.
 * `--max-semi-space-size=4`), so that the benchmark measures the server as it is run. Read from
 * the package.json beside the build under test, so BENCH_DIST measures another build as it ran.
 */
export function startOptions() {
  const { scripts } = JSON.parse(readFileSync(join(dirname(DIST), 'package.json'), 'utf8'));
  const words = String(scripts.start).split(/\s+/);
  const main = words.indexOf('dist/src/main.js');
  if (words[0] !== 'node' || main === -1) throw new Error(`package.json's start script is not "node [options] dist/src/main.js": ${scripts.start}`);
  return words.slice(1, main);
}

/**
 * The one setting the load generators change from the defaults: seeding mints thousands of
 * authorization codes for one person and app, which the per-person issuance limit
 * (GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN, default 30) would refuse. No measured request reads it:
 * the token endpoint redeems codes without consulting that bucket.
 */
export const LOAD_GENERATOR_ENV = { GATEHOUSE_AUTHORIZE_CODES_PER_10_MIN: '0' };

/**
 * Starts the built server (dist/src/main.js) with `env` on a free port and waits for /healthz.
 * At the server's defaults, log level included (issue #26 §0: the benchmark measures what a user
 * runs); `env.LOG_LEVEL` measures another level (run.mjs compares execute at `warn`).
 * `cpuProfDir` adds node --cpu-prof (the profile is written when the server exits on SIGTERM).
 */
export async function startServer(env, { cpuProfDir } = {}) {
  const port = await freePort();
  const args = [...startOptions(), ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [])];
  const child = spawn(process.execPath, [...args, join(DIST, 'src/main.js')], {
    cwd: ROOT,
    env: { ...process.env, ...LOAD_GENERATOR_ENV, ...env, PORT: String(port), HOST: '127.0.0.1', GATEHOUSE_BASE_URL: `http://127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = track(child);
  // BENCH_SERVER_OUTPUT=<file>: keep everything the server prints (e.g. with --trace-gc in the start script).
  if (process.env.BENCH_SERVER_OUTPUT) {
    const file = createWriteStream(process.env.BENCH_SERVER_OUTPUT, { flags: 'a' });
    child.stdout.pipe(file);
    child.stderr.pipe(file);
  }
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, child, output);
  return processHandle(child, base, output);
}

/** Starts bench/bare-server.mjs: node:http answering every request with 204 after reading its body. */
export function startBare() {
  return startBenchScript('bare-server.mjs');
}

/**
 * Starts bench/floor-server.mjs (the I/O floor of an execute: one Redis script call and one
 * batched insert per request, no Gatehouse code) on `env`'s DATABASE_URL and REDIS_URL.
 */
export function startFloor(env) {
  return startBenchScript('floor-server.mjs', env);
}

/**
 * Starts bench/interactions-bare-server.mjs (the floor of a command invocation: the composer's form
 * in, a signed interaction out to the app at `appUrl`, its answer read, 303; no Gatehouse code).
 */
export function startInteractionsBare(appUrl) {
  return startBenchScript('interactions-bare-server.mjs', { APP_URL: appUrl });
}

/** A server script of bench/ on a free port (PORT), with `env`; resolves once /healthz answers. */
async function startBenchScript(script, env = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(BENCH_DIR, script)], { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = track(child);
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, child, output);
  return processHandle(child, base, output);
}

/** The handle run.mjs keeps of a started server: its base URL, pid, output and how to stop it. */
export function processHandle(child, base, output) {
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    base,
    pid: child.pid,
    output,
    exited,
    /** SIGTERM (graceful: the server finishes requests, closes the database, writes its profile). */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    /** kill -9: no shutdown code runs at all. */
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * Runs one autocannon measurement in a child process (bench/load-worker.mjs), so the load
 * generator never shares the server's or this orchestrator's event loop. `job` is sent over IPC.
 */
export function runLoad(job) {
  return new Promise((resolve, reject) => {
    const child = fork(join(BENCH_DIR, 'load-worker.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    let result;
    child.on('message', (m) => {
      if (m.type === 'ready') child.send({ type: 'job', job });
      else if (m.type === 'result') result = m.result;
      else if (m.type === 'error') reject(new Error(m.message));
    });
    child.on('exit', (code) => (result ? resolve(result) : reject(new Error(`load worker exited with ${code} and no result`))));
  });
}

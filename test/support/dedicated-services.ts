import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';
export { freePort };

const execFileAsync = promisify(execFile);

/**
 * A PostgreSQL and a Redis that a test owns (issue #7 §4): separate ports and data directories in
 * a temporary folder, so the test can stop and start them while a server uses them. The shared
 * instances on 5432 and 6379 are never touched: `stop()` refuses those ports.
 */

const SHARED_PORTS = new Set([5432, 6379]);

/** True once something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitFor(test: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await test()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function guard(port: number): void {
  if (SHARED_PORTS.has(port)) throw new Error(`refusing to stop the shared service on port ${port}`);
}

/** The directory holding initdb, pg_ctl and postgres (Debian: /usr/lib/postgresql/<major>/bin). */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const major of majors) {
      const dir = join(root, major, 'bin');
      if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
    }
  }
  const which = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' });
  const path = which.stdout.trim();
  return which.status === 0 && path ? path.slice(0, path.lastIndexOf('/')) : undefined;
}

function redisServerPath(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = which.stdout.trim();
  return which.status === 0 && path ? path : undefined;
}

/** initdb refuses root: as root, PostgreSQL runs as the `postgres` account through runuser. */
function postgresRunAs(): { prefix: string[]; uid?: number; gid?: number } | { error: string } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { prefix: [] };
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0) return { error: 'running as root and there is no postgres account to run PostgreSQL as' };
  if (spawnSync('sh', ['-c', 'command -v runuser']).status !== 0) return { error: 'running as root and runuser is missing' };
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Why dedicated instances cannot run here, or undefined when they can. */
export function dedicatedServicesUnavailable(): string | undefined {
  if (!postgresBinDir()) return 'the PostgreSQL server binaries (initdb, pg_ctl) are not installed';
  if (!redisServerPath()) return 'redis-server is not installed';
  const runAs = postgresRunAs();
  if ('error' in runAs) return runAs.error;
  return undefined;
}

export interface DedicatedService {
  readonly url: string;
  readonly port: number;
  /** Stops the instance; connections are cut (PostgreSQL: fast shutdown, 57P01). */
  stop(): Promise<void>;
  /** Starts it again on the same port (and, for PostgreSQL, the same data). */
  start(): Promise<void>;
  /** Stops it if running and deletes its directory. */
  destroy(): Promise<void>;
}

const cleanups = new Set<() => void>();
let exitHookInstalled = false;
function onExit(cleanup: () => void): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // A test that dies must not leave a database running behind it.
    process.on('exit', () => {
      for (const c of cleanups) c();
    });
  }
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/**
 * initdb + pg_ctl start in a fresh temporary directory on a free port, trust authentication for
 * `postgres` on 127.0.0.1, durability off (a test database). URL: postgres://postgres@127.0.0.1:<port>/postgres.
 */
export async function startDedicatedPostgres(): Promise<DedicatedService> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL binaries not found');
  const runAs = postgresRunAs();
  if ('error' in runAs) throw new Error(runAs.error);
  const dir = mkdtempSync(join(tmpdir(), 'gh-pg-'));
  if (runAs.uid !== undefined) chownSync(dir, runAs.uid, runAs.gid ?? runAs.uid);
  const data = join(dir, 'data');
  const log = join(dir, 'postgres.log');
  const port = await freePort();
  // Asynchronous, so a test's own traffic keeps flowing while PostgreSQL stops or starts.
  const run = async (args: string[]) => {
    const [command, ...rest] = [...runAs.prefix, ...args];
    try {
      await execFileAsync(command as string, rest, { cwd: dir, timeout: 60_000 });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${args[0]?.split('/').pop() ?? ''} failed: ${stderr || stdout || String(error)}`);
    }
  };
  await run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  // pg_ctl hands -o to a shell: only plain words here.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  let running = false;
  const stopArgs = (mode: 'fast' | 'immediate') => [join(bin, 'pg_ctl'), '-D', data, '-m', mode, '-w', '-t', '30', 'stop'];
  const stopNow = (mode: 'fast' | 'immediate') => {
    const [command, ...rest] = [...runAs.prefix, ...stopArgs(mode)];
    spawnSync(command as string, rest, { cwd: dir, timeout: 40_000 });
  };
  const removeExitHook = onExit(() => {
    if (running) stopNow('immediate');
    rmSync(dir, { recursive: true, force: true });
  });
  const service: DedicatedService = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await run([join(bin, 'pg_ctl'), '-D', data, '-l', log, '-o', options, '-w', '-t', '30', 'start']);
      running = true;
      await waitFor(() => accepts(port), 10_000, `PostgreSQL on ${port}`);
    },
    async stop() {
      guard(port);
      await run(stopArgs('fast'));
      running = false;
    },
    async destroy() {
      if (running) stopNow('immediate');
      running = false;
      rmSync(dir, { recursive: true, force: true });
      removeExitHook();
    },
  };
  await service.start();
  return service;
}

/** redis-server without persistence in a temporary directory on a free port. */
export async function startDedicatedRedis(): Promise<DedicatedService> {
  const server = redisServerPath();
  if (!server) throw new Error('redis-server not found');
  const dir = mkdtempSync(join(tmpdir(), 'gh-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const removeExitHook = onExit(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const stopChild = async () => {
    const current = child;
    child = undefined;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill('SIGTERM');
    await exited;
  };
  const service: DedicatedService = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn(server, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
        stdio: 'ignore',
      });
      await waitFor(() => accepts(port), 10_000, `Redis on ${port}`);
    },
    async stop() {
      guard(port);
      await stopChild();
    },
    async destroy() {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
      removeExitHook();
    },
  };
  await service.start();
  return service;
}

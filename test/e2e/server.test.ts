import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/storage/migrations/index.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { CLI_MAIN as CLI, databaseUrlFor, ensureBuilt, SERVER_MAIN as MAIN } from '../support/server-process.js';

/**
 * End-to-end: the built server and CLI as an operator runs them (`node dist/src/main.js`), on
 * SQLite, or on PostgreSQL when TEST_DATABASE_URL is set. `.ci/run` builds first; run on its own,
 * this file rebuilds when dist/ is missing or older than src/.
 */
function childEnv(databaseUrl: string): Record<string, string> {
  return { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, LOG_LEVEL: 'debug' }; // debug: a request is logged when it arrives too (the SIGTERM test waits for that line)
}

interface LogLine {
  msg?: string;
  port?: number;
  database?: string;
  reqId?: string;
  req?: { url?: string };
  [key: string]: unknown;
}

/** The server as a process, its JSON log lines parsed as they arrive. */
class ServerProcess {
  readonly lines: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  private waiters: { test: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { msg: text, unparsed: true };
      }
      this.lines.push(line);
      this.waiters = this.waiters.filter((w) => (w.test(line) ? (w.resolve(line), false) : true));
    });
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(String(chunk)));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** The first log line (past or future) that passes `test`. */
  waitForLog(test: (l: LogLine) => boolean, timeoutMs = 15_000): Promise<LogLine> {
    const seen = this.lines.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no such log line within ${timeoutMs} ms; stderr: ${this.stderr.join('')}; log: ${JSON.stringify(this.lines)}`)), timeoutMs);
      this.waiters.push({ test, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }
}

function connectTo(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe(`the built server (node dist/src/main.js) on ${testDialect}`, () => {
  let dir: string;
  let database: TestDatabase;
  let server: ServerProcess;
  let port: number;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-e2e-'));
    database = await createTestDatabase({ sqliteFile: join(dir, 'gatehouse.db') });
    server = new ServerProcess(spawn(process.execPath, [MAIN], { cwd: dir, env: childEnv(databaseUrlFor(database)), stdio: ['ignore', 'pipe', 'pipe'] }));
    const listening = await server.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('Gatehouse listening'));
    port = listening.port as number;
  }, 180_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    if (database) await database.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('logs JSON lines, including the port it picked for PORT=0 and the database it uses', () => {
    expect(port).toBeGreaterThan(0);
    expect(server.lines.every((l) => !l['unparsed'])).toBe(true);
    expect(server.lines.find((l) => l.port === port)?.database).toBe(testDialect);
  });

  it('ran the migrations at start-up', async () => {
    expect(server.lines.some((l) => l.msg === 'database migrated')).toBe(true);
    const tables = (await database.handle.db.introspection.getTables())
      .filter((t) => !database.schema || t.schema === database.schema)
      .map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['users', 'servers', 'channels', 'messages', 'applications', 'oauth_access_tokens']));
  });

  it('answers /healthz and /readyz', async () => {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ database: 'ok' });
  });

  it('on SIGTERM stops accepting connections, finishes the request in flight, closes the database and exits 0', async () => {
    // Our own connection to the file must not keep SQLite's write-ahead log alive.
    if (testDialect === 'sqlite') await database.handle.close();

    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ content: 'still arriving when SIGTERM comes' });
    const socket = await connectTo(port);
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const ended = new Promise<void>((resolve) => socket.on('end', resolve));
    socket.write(`POST /api/v1/in-flight HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`);
    socket.write(body.slice(0, 10));
    await server.waitForLog((l) => l.msg === 'incoming request' && l.req?.url === '/api/v1/in-flight');

    server.child.kill('SIGTERM');
    await server.waitForLog((l) => l.msg === 'shutting down');

    // No new connections once shutdown has begun.
    let refused = false;
    for (let attempt = 0; attempt < 50 && !refused; attempt += 1) {
      try {
        (await connectTo(port)).destroy();
        await new Promise((resolve) => setTimeout(resolve, 100));
      } catch (error) {
        refused = (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
      }
    }
    expect(refused).toBe(true);
    expect(received).toHaveLength(0); // nothing answered yet: the request is still in flight

    socket.end(body.slice(10));
    await ended;
    const response = Buffer.concat(received).toString('utf8');
    expect(response).toMatch(/^HTTP\/1\.1 404 /);
    expect(response).toContain('{"code":0,"message":"404: Not Found"}');

    expect(await server.exited).toBe(0);
    expect(server.lines.some((l) => l.msg === 'request completed' && l.reqId !== undefined)).toBe(true);
    // SQLite removes the write-ahead log when the last connection closes cleanly.
    if (testDialect === 'sqlite') expect(existsSync(join(dir, 'gatehouse.db-wal'))).toBe(false);
  }, 60_000);
});

describe(`the built CLI (node dist/src/cli/index.js) on ${testDialect}`, () => {
  let dir: string;
  let database: TestDatabase;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
    database = await createTestDatabase({ sqliteFile: join(dir, 'cli.db') });
  }, 180_000);

  afterAll(async () => {
    if (database) await database.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, env: childEnv(databaseUrlFor(database)), encoding: 'utf8', timeout: 60_000 });

  it('`gatehouse migrate --json` prints exactly one JSON object: every migration, then none on a second run', () => {
    const first = run('migrate', '--json');
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(first.stdout)).toEqual({ applied: Object.keys(migrations) });

    const second = run('migrate', '--json');
    expect(second.status, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ applied: [] });
  });

  it('an unknown command exits non-zero with a message on stderr and nothing on stdout', () => {
    const result = run('frobnicate');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stdout).toBe('');
  });
});

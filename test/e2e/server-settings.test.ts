import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { CLI_MAIN as CLI, databaseUrlFor, ensureBuilt, SERVER_MAIN as MAIN } from '../support/server-process.js';

/**
 * Issue #36 §4, as an operator meets it: the built server and CLI (dist/) as processes.
 *  - DATABASE_URL=mysql://x/y stops the process with the configuration error list (exit 2)
 *    instead of starting on a new SQLite file in ./mysql:/x/;
 *  - a second process whose server secret is not the database's (another GATEHOUSE_SECRET, or
 *    none and a secret file of its own) refuses to start, server and CLI alike, with a message
 *    naming GATEHOUSE_SECRET; `gatehouse secret adopt` is the way out when the secret is lost;
 *  - the server warns at start about database files that other users may open.
 * The database is SQLite, or PostgreSQL (its own schema) when TEST_DATABASE_URL is set.
 */
if (testDialect !== 'sqlite') console.warn(`test/e2e/server-settings.test.ts: the start-up warning about database file modes is tested on SQLite only (${testDialect} keeps no files here)`);
const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

describe(`issue #36 §4: settings the built server and CLI refuse (${testDialect})`, () => {
  let dir: string;
  let database: TestDatabase;
  let databaseUrl: string;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-settings-'));
    database = await createTestDatabase({ sqliteFile: join(dir, 'data', 'gatehouse.db') });
    databaseUrl = databaseUrlFor(database);
  }, 180_000);

  afterAll(async () => {
    if (database) await database.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string>) => ({ PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', PORT: '0', DATABASE_URL: databaseUrl, ...extra });
  const run = (script: string, args: string[], extra: Record<string, string>) => spawnSync(process.execPath, [script, ...args], { cwd: dir, env: env(extra), encoding: 'utf8', timeout: 60_000 });

  it('DATABASE_URL=mysql://x/y: the server and the CLI exit with the configuration error list and create nothing', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'gatehouse-mysql-'));
    try {
      for (const [script, args] of [
        [MAIN, []],
        [CLI, ['seed-demo']],
      ] as const) {
        const result = spawnSync(process.execPath, [script, ...args], { cwd, env: env({ DATABASE_URL: 'mysql://x/y', LOG_LEVEL: 'loud' }), encoding: 'utf8', timeout: 60_000 });
        expect(result.status, result.stderr).toBe(2);
        expect(result.stderr).toContain('Invalid configuration');
        expect(result.stderr).toContain('DATABASE_URL must be a postgres:// or postgresql:// URL, a sqlite: URL or a file path (got a "mysql:" URL)');
        // Every problem at once: the log level's too.
        expect(result.stderr).toContain('LOG_LEVEL');
      }
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('a second process with another server secret refuses to start, CLI and server alike, naming GATEHOUSE_SECRET; secret adopt lets it in', async () => {
    const first = run(CLI, ['seed-demo', '--json'], { GATEHOUSE_SECRET: A });
    expect(first.status, first.stderr).toBe(0);

    const cli = run(CLI, ['seed-demo', '--json'], { GATEHOUSE_SECRET: B });
    expect(cli.status, cli.stderr).toBe(2);
    expect(cli.stdout).toBe('');
    expect(cli.stderr).toContain('GATEHOUSE_SECRET does not hold the server secret this database is used with');

    // No GATEHOUSE_SECRET: this process makes a secret file of its own, as a second machine would.
    const server = run(MAIN, [], { GATEHOUSE_SECRET_FILE: join(dir, 'second-machine.secret') });
    expect(server.status, server.stderr).toBe(2);
    expect(server.stderr).toContain(`GATEHOUSE_SECRET is unset, and the secret in ${join(dir, 'second-machine.secret')} is not the server secret this database is used with`);
    expect(server.stderr).not.toContain(A);

    // The first secret still works: refusing changed nothing.
    expect(run(CLI, ['seed-demo', '--json'], { GATEHOUSE_SECRET: A }).status).toBe(0);

    const adopt = run(CLI, ['secret', 'adopt', '--json'], { GATEHOUSE_SECRET: B });
    expect(adopt.status, adopt.stderr).toBe(0);
    expect(JSON.parse(adopt.stdout)).toMatchObject({ adopted: true });
    expect(run(CLI, ['seed-demo', '--json'], { GATEHOUSE_SECRET: B }).status).toBe(0);
    expect(run(CLI, ['seed-demo', '--json'], { GATEHOUSE_SECRET: A }).status).toBe(2);
  }, 120_000);

  it.skipIf(testDialect !== 'sqlite' || process.platform === 'win32')('SQLite only (PostgreSQL has no files here): the server warns at start about a database file other users may open', async () => {
    const file = join(dir, 'data', 'gatehouse.db');
    chmodSync(file, 0o644);
    const child = spawn(process.execPath, [MAIN], { cwd: dir, env: env({ GATEHOUSE_SECRET: B }), stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: Array<{ level?: number; msg?: string }> = [];
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no warning; log: ${JSON.stringify(lines)}`)), 30_000);
        createInterface({ input: child.stdout }).on('line', (text) => {
          lines.push(JSON.parse(text) as { msg?: string });
          if (lines.some((l) => l.msg?.includes('chmod 600'))) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
    } finally {
      child.kill('SIGKILL');
    }
    const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toContain(`${file} is open to other users of this machine (mode 0644); run "chmod 600 ${file}"`);
    // Only the database's files are named (SQLite gives its WAL the database file's mode).
    for (const warning of warnings.filter((w) => w?.includes('chmod 600'))) expect(warning).toMatch(new RegExp(`^${file}(-wal|-shm)? is open`));
  }, 60_000);
});

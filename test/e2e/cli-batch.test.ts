import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { databaseUrlFor } from '../support/server-process.js';

/**
 * `gatehouse batch` (docs/performance.md: fast seeding) through the built CLI: one process, one
 * JSON object per input line, in order; a failed line says why and the exit status is non-zero.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/index.js');

describe(`gatehouse batch on ${testDialect}`, () => {
  let dir: string;
  let database: TestDatabase;

  beforeAll(async () => {
    if (!existsSync(CLI)) {
      const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
      if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
    }
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-batch-'));
    database = await createTestDatabase({ sqliteFile: join(dir, 'batch.db') });
  }, 180_000);

  afterAll(async () => {
    if (database) await database.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const batch = (input: string, ...flags: string[]) =>
    spawnSync(process.execPath, [CLI, 'batch', '--json', ...flags], {
      cwd: dir,
      input,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', DATABASE_URL: databaseUrlFor(database) },
      encoding: 'utf8',
      timeout: 60_000,
    });
  const lines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

  it('writes its warnings to standard error: standard output stays one JSON record per line', () => {
    // Nothing listens on port 1: the command warns that Redis did not answer, and goes on.
    const result = spawnSync(process.execPath, [CLI, 'batch', '--json'], {
      cwd: dir,
      input: 'people create --username warnedperson --password "correct horse battery"\n',
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', DATABASE_URL: databaseUrlFor(database), REDIS_URL: 'redis://127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Redis did not answer/);
    expect(result.stdout).not.toMatch(/Redis/);
    expect(lines(result.stdout)[0]).toMatchObject({ username: 'warnedperson' });
  });

  it('runs every line in one process and prints one JSON record per line, then a summary', () => {
    const first = batch('people create --username batchy --password "long enough 1"\n# a comment\n\nservers create --owner batchy --name "Batch server"\n');
    expect(first.status, first.stderr).toBe(0);
    const [person, server, summary] = lines(first.stdout);
    expect(person).toMatchObject({ username: 'batchy' });
    expect(server).toMatchObject({ name: 'Batch server', owner_id: person?.['id'] });
    expect(summary).toEqual({ batch: { lines: 2, failed: 0 } });

    const channels = batch(['one', 'two', 'three'].map((n) => `channels create --server ${String(server?.['id'])} --name ${n}`).join('\n'));
    expect(channels.status, channels.stderr).toBe(0);
    expect(lines(channels.stdout).slice(0, 3).map((c) => c['name'])).toEqual(['one', 'two', 'three']);
  });

  it('a failing line prints its number and reason in its place, the others still run, and the exit status is 1', () => {
    const result = batch('people create --username x --password short\nfrobnicate now\npeople create --username batch2 --password "long enough 2"\n');
    expect(result.status).toBe(1);
    const [bad, unknown, good] = lines(result.stdout);
    expect(bad).toMatchObject({ line: 1 });
    expect(unknown).toMatchObject({ line: 2, error: 'unknown command "frobnicate now"' });
    expect(good).toMatchObject({ username: 'batch2' });
    expect(result.stderr).toContain('2 of 3 commands failed');
  });

  it('--stop-on-error stops at the first failing line', () => {
    const result = batch('frobnicate\npeople create --username batch3 --password "long enough 3"\n', '--stop-on-error');
    expect(result.status).toBe(1);
    expect(lines(result.stdout)).toEqual([{ line: 1, error: 'unknown command "frobnicate"' }]);
  });
});

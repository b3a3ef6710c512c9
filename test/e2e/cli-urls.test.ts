import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The CLI prints the server's real address (issue #25 item 9): it reads PORT and
 * GATEHOUSE_BASE_URL as the server does (src/config/config.ts), so a server started with
 * `PORT=3123` and `seed-demo` run with the same environment agree on every link.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/index.js');

describe('URLs printed by the CLI', () => {
  let dir: string;

  beforeAll(() => {
    if (!existsSync(CLI)) {
      const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
      if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
    }
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-urls-'));
  }, 180_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const seedDemo = (database: string, env: Record<string, string>) => {
    const run = spawnSync(process.execPath, [CLI, 'seed-demo', '--json'], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', DATABASE_URL: join(dir, database), GATEHOUSE_SECRET_FILE: join(dir, `${database}.secret`), ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as { sign_in_url?: string; channels: Array<{ url: string }> };
  };

  it('seed-demo links to the port the server listens on when PORT is set', () => {
    const first = seedDemo('port.db', { PORT: '3123' });
    expect(first.sign_in_url).toBe('http://localhost:3123/login');
    expect(first.channels.length).toBeGreaterThan(0);
    for (const channel of first.channels) expect(channel.url).toMatch(/^http:\/\/localhost:3123\/channels\/\d+$/);
    // Run again (the demo exists): the channel links still follow PORT.
    const again = seedDemo('port.db', { PORT: '4321' });
    for (const channel of again.channels) expect(channel.url).toMatch(/^http:\/\/localhost:4321\/channels\/\d+$/);
  });

  it('seed-demo links to GATEHOUSE_BASE_URL when it is set, whatever the port', () => {
    const seeded = seedDemo('base.db', { PORT: '3123', GATEHOUSE_BASE_URL: 'https://chat.example.com/gh' });
    expect(seeded.sign_in_url).toBe('https://chat.example.com/gh/login');
    for (const channel of seeded.channels) expect(channel.url).toMatch(/^https:\/\/chat\.example\.com\/gh\/channels\/\d+$/);
  });

  it('seed-demo links to localhost:8080 only when neither is set (the server\'s default too)', () => {
    const seeded = seedDemo('default.db', {});
    expect(seeded.sign_in_url).toBe('http://localhost:8080/login');
  });
});

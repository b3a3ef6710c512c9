import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { costsFromRecord, predictThisMachine, sizeFor } from '../../bench/lib/capacity.mjs';

/**
 * Issue #26 §4: the capacity model's arithmetic (bench/lib/capacity.mjs, docs/capacity.md) on a
 * fixed, hand-checkable benchmark record.
 */

const side = (o: { cpu: number; nginx: number; pg: number; commits: number; statements: number; calls: number; redisUs: number; rate: number; generator?: number; cores?: number }) => ({
  rate: o.rate,
  requestsPerSec: o.rate,
  cpuMicrosPerRequest: o.cpu,
  nginxCpuMicrosPerRequest: o.nginx,
  generatorCpuMicrosPerRequest: o.generator ?? 0,
  coresUsed: o.cores,
  statementsPerAnswer: o.statements,
  postgresPerAnswer: { commits: o.commits, backendCpuMicros: o.pg },
  redisPerAnswer: { calls: o.calls, usec: o.redisUs },
});

const RECORD = {
  mode: 'instances',
  instances: 3,
  cores: 2,
  results: [
    { scenario: 1, server: side({ cpu: 100, nginx: 20, pg: 50, commits: 1, statements: 2, calls: 2, redisUs: 10, rate: 3000 }), single: side({ cpu: 90, nginx: 20, pg: 40, commits: 1, statements: 2, calls: 2, redisUs: 10, rate: 2500, generator: 40 }), bare: { ...side({ cpu: 10, nginx: 20, pg: 0, commits: 0, statements: 0, calls: 0, redisUs: 0, rate: 20_000, cores: 1.6 }) } },
    { scenario: 4, server: side({ cpu: 400, nginx: 20, pg: 200, commits: 3, statements: 6, calls: 1, redisUs: 4, rate: 1000 }) },
    { scenario: 5, server: side({ cpu: 600, nginx: 20, pg: 300, commits: 3, statements: 8, calls: 1, redisUs: 6, rate: 800 }) },
  ],
};

describe('the capacity model', () => {
  it('takes each load kind’s costs per answer from its scenarios (grants: the mean of refresh and code exchange)', () => {
    const costs = costsFromRecord(RECORD);
    expect(costs.executes).toMatchObject({ instanceUs: 100, nginxUs: 20, postgresUs: 50, commits: 1, statements: 2, redisCalls: 2, redisUs: 10 });
    expect(costs.grants).toMatchObject({ instanceUs: 500, postgresUs: 250, commits: 3, statements: 7, redisCalls: 1, redisUs: 5 });
    expect(costs.bearer).toBeUndefined();
  });

  it('sizes instances, PostgreSQL and Redis at 50 % utilisation', () => {
    const size = sizeFor({ executes: 10_000, grants: 1000, webhooks: 1_000_000, retentionDays: 10 }, costsFromRecord(RECORD));
    // Instances: (10,000 × 100 + 1,000 × 500) µs/s = 1.5 cores busy → 3 at 50 %.
    expect(size.instanceCoresBusy).toBeCloseTo(1.5);
    expect(size.instances).toBe(3);
    // nginx: 11,000 × 20 µs = 0.22 cores → 1.
    expect(size.nginxCores).toBe(1);
    // PostgreSQL: (10,000 × 50 + 1,000 × 250) µs = 0.75 cores → 2; 13,000 commits/s; 27,000 statements/s.
    expect(size.postgres.coresBusy).toBeCloseTo(0.75);
    expect(size.postgres.cores).toBe(2);
    expect(size.postgres.commitsPerSec).toBe(13_000);
    expect(size.postgres.statementsPerSec).toBe(27_000);
    // Messages: 10,000/s × 86,400 s × 10 days × 400 B = 3.456 TB; WAL 10,000 × 600 B = 6 MB/s.
    expect(size.postgres.messagesStorageTb).toBeCloseTo(3.456);
    expect(size.postgres.walMbPerSec).toBeCloseTo(6);
    expect(size.postgres.webhooksStorageGb).toBeCloseTo(0.3);
    // Redis: 21,000 calls/s, (10,000 × 10 + 1,000 × 5) µs = 0.105 cores; 20,000 live buckets × 120 B.
    expect(size.redis.opsPerSec).toBe(21_000);
    expect(size.redis.coresBusy).toBeCloseTo(0.105);
    expect(size.redis.nodes).toBe(1);
    expect(size.redis.liveBuckets).toBe(20_000);
    expect(size.redis.memoryMb).toBeCloseTo(2.4);
    expect(size.postgres.enough && size.redis.enough).toBe(true);
    expect(size.limits).toEqual([]);
  });

  it('says when one PostgreSQL or one Redis is no longer enough, and why', () => {
    const size = sizeFor({ executes: 1_000_000, grants: 0, webhooks: 10_000_000 }, costsFromRecord(RECORD));
    // 1,000,000 × 50 µs = 50 cores busy → 100 at 50 % > 64; WAL 600 MB/s > 200; Redis 10 cores > 0.5.
    expect(size.postgres.enough).toBe(false);
    expect(size.redis.enough).toBe(false);
    expect(size.redis.nodes).toBe(20);
    expect(size.limits).toHaveLength(3);
    expect(size.limits[0]).toMatch(/PostgreSQL needs 100 cores/);
    expect(size.limits[1]).toMatch(/600 MB\/s of WAL/);
    expect(size.limits[2]).toMatch(/Redis needs 20\.0 cores/);
    // No retention given: storage is sized for a year.
    expect(size.postgres.retentionDays).toBe(365);
  });

  it('refuses a load whose scenarios the run did not measure', () => {
    expect(() => sizeFor({ bearer: 10 }, costsFromRecord(RECORD))).toThrow(/no costs for bearer/);
  });

  it('predicts this machine’s rate with N instances from one instance’s costs and the cores the bare run got', () => {
    const p = predictThisMachine(RECORD, 1);
    // One instance: 90 + 20 + 40 + 10 + 40 (generator) = 200 µs per answer; 1.6 cores → 8,000/s.
    expect(p?.perAnswerUs).toBe(200);
    expect(p?.predicted).toBeCloseTo(8000);
    expect(p?.measured).toBe(3000);
    expect(p?.ratio).toBeCloseTo(0.375);
    expect(predictThisMachine(RECORD, 4)).toBeUndefined();
  });
});

describe('npm run capacity', () => {
  /** scripts/capacity.mjs and its model in a tree of their own, so which run it reads is the test's choice. */
  const tree = (files: Record<string, object>) => {
    const root = mkdtempSync(join(tmpdir(), 'gatehouse-capacity-'));
    mkdirSync(join(root, 'scripts'));
    mkdirSync(join(root, 'bench', 'lib'), { recursive: true });
    copyFileSync('scripts/capacity.mjs', join(root, 'scripts', 'capacity.mjs'));
    copyFileSync('bench/lib/capacity.mjs', join(root, 'bench', 'lib', 'capacity.mjs'));
    for (const [path, record] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), JSON.stringify(record));
    }
    return root;
  };
  const run = (root: string) => {
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'capacity.mjs'), '--json', '--executes', '1000', '--grants', '100'], { encoding: 'utf8' });
    return { status: r.status, stderr: r.stderr, results: r.status === 0 ? String(JSON.parse(r.stdout).results).slice(root.length + 1) : undefined };
  };
  const record = (date: string, smoke = false) => ({ ...RECORD, date, smoke });

  it('answers on a fresh clone from the run bench/REPORT-instances.md reports (bench/REPORT-instances.json)', () => {
    const root = tree({ 'bench/REPORT-instances.json': record('reported') });
    try {
      expect(run(root)).toMatchObject({ status: 0, results: 'bench/REPORT-instances.json' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('prefers a full run of the user’s own to the reported one, and the reported one to a smoke run', () => {
    const root = tree({ 'bench/REPORT-instances.json': record('reported'), 'bench/results/2026-01-02T00-00-00-000Z-smoke-instances-2-postgres.json': record('smoke', true) });
    try {
      expect(run(root).results).toBe('bench/REPORT-instances.json');
      writeFileSync(join(root, 'bench/results/2026-01-01T00-00-00-000Z-instances-3-postgres.json'), JSON.stringify(record('own')));
      expect(run(root).results).toBe('bench/results/2026-01-01T00-00-00-000Z-instances-3-postgres.json');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('says what to run, without a stack trace, when there is no run at all', () => {
    const root = tree({});
    try {
      const r = run(root);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/npm run bench -- --postgres --instances 3/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

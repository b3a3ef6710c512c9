#!/usr/bin/env node
// `npm run capacity` (issue #26 §4, docs/capacity.md): how many instances, what PostgreSQL and what
// Redis a load needs, from the per-answer costs the multi-instance benchmark measured
// (`npm run bench -- --postgres --instances N`, its JSON in bench/results/). The model itself is
// bench/lib/capacity.mjs.
//
//   npm run capacity -- [--results bench/results/<file>.json] [--executes 100000] [--grants 10000]
//                       [--bearer 0] [--webhooks 10000000] [--retention-days 30] [--utilisation 0.5]
//                       [--json]
// Without --results, the newest bench/results/*-instances-*-postgres.json that is not a smoke run,
// else the run bench/REPORT-instances.md reports (bench/REPORT-instances.json, committed), else the
// newest smoke run, flagged as such. Defaults: the worked example of
// docs/capacity.md (10 million webhooks, 100,000 executes/s, 10,000 token grants/s).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { costsFromRecord, DEFAULTS, predictThisMachine, sizeFor } from '../bench/lib/capacity.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

function parseArgs(argv) {
  const o = { results: undefined, load: { executes: 100_000, grants: 10_000, bearer: 0, webhooks: 10_000_000, retentionDays: 0 }, options: {}, json: false };
  const number = (name, v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} needs a number ≥ 0 (got "${v}")`);
    return n;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--results') o.results = argv[++i];
    else if (a === '--executes') o.load.executes = number(a, argv[++i]);
    else if (a === '--grants') o.load.grants = number(a, argv[++i]);
    else if (a === '--bearer') o.load.bearer = number(a, argv[++i]);
    else if (a === '--webhooks') o.load.webhooks = number(a, argv[++i]);
    else if (a === '--retention-days') o.load.retentionDays = number(a, argv[++i]);
    else if (a === '--utilisation') o.options.utilisation = number(a, argv[++i]);
    else if (a === '--bytes-per-message') o.options.bytesPerMessage = number(a, argv[++i]);
    else if (a === '--json') o.json = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write('npm run capacity -- [--results file.json] [--executes n] [--grants n] [--bearer n] [--webhooks n] [--retention-days d] [--utilisation 0.5] [--bytes-per-message b] [--json]\n');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (see --help)`);
  }
  return o;
}

/**
 * The newest full --instances run of the user's own in bench/results/, else the run
 * bench/REPORT-instances.md reports (committed beside it as bench/REPORT-instances.json), else the
 * newest smoke run.
 */
function newestResults() {
  const dir = join(ROOT, 'bench', 'results');
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => /-instances-\d+-postgres\.json$/.test(f)).sort() : [];
  const full = files.filter((f) => !f.includes('-smoke')).at(-1);
  if (full) return join(dir, full);
  const reported = join(ROOT, 'bench', 'REPORT-instances.json');
  if (existsSync(reported)) return reported;
  if (files.length > 0) return join(dir, files.at(-1));
  throw new Error('no bench/results/*-instances-*-postgres.json and no bench/REPORT-instances.json: run `npm run bench -- --postgres --instances 3` first, or pass --results');
}

const f = (x, d = 0) => Number(x).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function main() {
  const o = parseArgs(process.argv.slice(2));
  const file = o.results ? resolve(o.results) : newestResults();
  const record = JSON.parse(readFileSync(file, 'utf8'));
  if (record.mode !== 'instances') throw new Error(`${file} is not a --instances run (mode ${record.mode})`);
  const costs = costsFromRecord(record);
  const options = { ...o.options, ...(record.bytesPerMessage ? { bytesPerMessage: record.bytesPerMessage } : {}) };
  const size = sizeFor(o.load, costs, options);
  const predictions = [1, 3, 4, 5].map((n) => predictThisMachine(record, n)).filter(Boolean);
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ results: file, costs, size, predictions }, null, 2)}\n`);
    return;
  }
  const L = [];
  L.push(`Costs per answer from ${file.replace(`${ROOT}/`, '')} (${record.instances} instances behind nginx, ${record.date}${record.smoke ? ', SMOKE RUN: 2 s measurements, rough' : ''}):`);
  for (const [kind, c] of Object.entries(costs)) {
    L.push(`  ${kind.padEnd(9)} instance ${f(c.instanceUs)} µs, nginx ${f(c.nginxUs)} µs, PostgreSQL ${f(c.postgresUs)} µs / ${f(c.commits, 2)} commits / ${f(c.statements, 2)} statements, Redis ${f(c.redisCalls, 2)} calls / ${f(c.redisUs, 1)} µs`);
  }
  const u = (options.utilisation ?? DEFAULTS.utilisation) * 100;
  L.push('', `Load: ${f(o.load.executes)} executes/s, ${f(o.load.grants)} token grants/s, ${f(o.load.bearer)} bearer calls/s, ${f(o.load.webhooks)} webhooks; every resource sized to run at ${u} %:`);
  L.push(`  instances   ${f(size.instances)} (one core each; ${f(size.instanceCoresBusy, 1)} cores busy)`);
  L.push(`  nginx       ${f(size.nginxCores)} cores`);
  L.push(`  PostgreSQL  ${f(size.postgres.cores)} cores (${f(size.postgres.coresBusy, 1)} busy), ${f(size.postgres.commitsPerSec)} commits/s, ${f(size.postgres.statementsPerSec)} statements/s, ${f(size.postgres.walMbPerSec, 1)} MB/s of WAL for messages; messages ${f(size.postgres.messagesStorageTb, 1)} TB over ${f(size.postgres.retentionDays)} days, webhooks ${f(size.postgres.webhooksStorageGb, 1)} GB`);
  L.push(`  Redis       ${f(size.redis.nodes)} node(s) (${f(size.redis.coresBusy, 2)} cores of command time), ${f(size.redis.opsPerSec)} calls/s, ${f(size.redis.liveBuckets)} live buckets ≈ ${f(size.redis.memoryMb, 1)} MB`);
  L.push('', size.limits.length === 0 ? 'One PostgreSQL primary and one Redis are enough.' : `Beyond one node (docs/deployment.md §Beyond one PostgreSQL):\n${size.limits.map((l) => `  - ${l}`).join('\n')}`);
  L.push('', `This machine: ${record.instances} instances predicted from one instance's costs per answer (all processes, load generator included) and the cores the bare run got, vs measured:`);
  for (const p of predictions) L.push(`  scenario ${p.scenario}: predicted ${f(p.predicted)} answers/s (${f(p.perAnswerUs)} µs of CPU per answer, load generator ${f(p.generatorUs)} µs of it; ${f(p.coresAvailable, 2)} cores available), measured ${f(p.measured)} (${f(p.ratio * 100)} %); with the ${f(p.coresUsedByN ?? NaN, 2)} cores the ${p.instances}-instance run got: predicted ${f(p.atUsedCores ?? NaN)} (measured ${f((p.measured / p.atUsedCores) * 100)} % of it)`);
  process.stdout.write(`${L.join('\n')}\n`);
}

try {
  main();
} catch (error) {
  process.stderr.write(`capacity: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}

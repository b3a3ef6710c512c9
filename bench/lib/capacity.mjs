// The capacity model of docs/capacity.md (issue #26 §4), pure: per-answer costs measured by
// `npm run bench -- --postgres --instances N` (bench/lib/instances.mjs) in, a sizing out.
// scripts/capacity.mjs is its command line (`npm run capacity`).
//
// Every cost is per answer and was measured, not estimated: the instances' CPU (/proc), the
// PostgreSQL backends' CPU (/proc of the backends serving the bench database), PostgreSQL's
// commits (pg_stat_database), the statements each instance ran (its /metrics), Redis's calls and
// its own time (INFO commandstats of a Redis the bench ran alone). A resource is sized so that it
// runs at `utilisation` of what it has at the asked load (headroom for bursts and for losing one
// instance, docs/deployment.md).

/** What one machine of each kind is taken to offer; every figure can be changed on the command line. */
export const DEFAULTS = {
  /** Share of each resource in use at the asked load. */
  utilisation: 0.5,
  /** Cores of the largest single PostgreSQL primary one can reasonably buy or rent. */
  postgresMaxCores: 64,
  /** WAL volume one primary and its replicas keep up with, MB/s (replication, archiving, checkpoints). */
  postgresMaxWalMbPerSec: 200,
  /** Redis runs commands on one thread: one core is all one node has. */
  redisCoresPerNode: 1,
  /** Bytes a stored message takes in PostgreSQL (heap + primary key + channel index), overridden by the run's measurement when it has one. */
  bytesPerMessage: 400,
  /** Bytes a webhook takes (row + primary key + two indexes). */
  bytesPerWebhook: 300,
  /** Bytes of one Redis bucket key with its hash fields and TTL bookkeeping. */
  bytesPerBucket: 120,
  /** SPEC §8: a webhook's bucket lives for its 2 s window. */
  bucketWindowSeconds: 2,
  /** WAL bytes written per inserted message (row image + index entries + record headers). */
  walBytesPerMessage: 600,
};

/** The benchmark scenario whose costs stand for each kind of load. */
export const LOAD_SCENARIOS = {
  executes: [1],
  /** Token grants: the mean of refresh (4) and authorization code + PKCE (5). */
  grants: [4, 5],
  /** Bearer API calls (GET /users/@me). */
  bearer: [3],
};

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The per-answer costs of each load kind from an instances record (bench/results/*-instances-*.json):
 * { executes: { instanceUs, nginxUs, postgresUs, commits, statements, redisCalls, redisUs }, … }.
 * A kind whose scenarios the run did not measure is left out.
 */
export function costsFromRecord(record) {
  const out = {};
  for (const [kind, scenarios] of Object.entries(LOAD_SCENARIOS)) {
    const rows = record.results.filter((r) => scenarios.includes(r.scenario));
    if (rows.length === 0) continue;
    const s = rows.map((r) => r.server);
    out[kind] = {
      instanceUs: mean(s.map((x) => x.cpuMicrosPerRequest ?? 0)),
      nginxUs: mean(s.map((x) => x.nginxCpuMicrosPerRequest ?? 0)),
      postgresUs: mean(s.map((x) => x.postgresPerAnswer?.backendCpuMicros ?? 0)),
      commits: mean(s.map((x) => x.postgresPerAnswer?.commits ?? 0)),
      statements: mean(s.map((x) => x.statementsPerAnswer ?? 0)),
      redisCalls: mean(s.map((x) => x.redisPerAnswer?.calls ?? 0)),
      redisUs: mean(s.map((x) => x.redisPerAnswer?.usec ?? 0)),
      measuredRate: mean(rows.map((r) => r.server.rate)),
    };
  }
  return out;
}

/**
 * The sizing for `load` ({ executes, grants, bearer } per second, and `webhooks` in total;
 * `retentionDays` of messages, 0 for "for ever", sized at one year) given `costs`.
 */
export function sizeFor(load, costs, options = {}) {
  const o = { ...DEFAULTS, ...options };
  const kinds = Object.keys(LOAD_SCENARIOS).filter((k) => (load[k] ?? 0) > 0);
  const missing = kinds.filter((k) => !costs[k]);
  if (missing.length > 0) throw new Error(`the benchmark results have no costs for ${missing.join(', ')} (scenarios ${missing.map((k) => LOAD_SCENARIOS[k].join('+')).join(', ')})`);
  const total = (field) => kinds.reduce((sum, k) => sum + load[k] * costs[k][field], 0);

  const instanceCores = total('instanceUs') / 1e6;
  const nginxCores = total('nginxUs') / 1e6;
  const postgresCores = total('postgresUs') / 1e6;
  const redisCores = total('redisUs') / 1e6;
  const commitsPerSec = total('commits');
  const statementsPerSec = total('statements');
  const redisOpsPerSec = total('redisCalls');

  const messagesPerSec = load.executes ?? 0;
  const retentionDays = load.retentionDays && load.retentionDays > 0 ? load.retentionDays : 365;
  const messageBytes = messagesPerSec * 86_400 * retentionDays * o.bytesPerMessage;
  const webhookBytes = (load.webhooks ?? 0) * o.bytesPerWebhook;
  const walMbPerSec = (messagesPerSec * o.walBytesPerMessage) / 1e6;
  // Buckets alive at once: at most one per webhook, and no more than the executes of one window.
  const liveBuckets = Math.min(load.webhooks ?? Infinity, messagesPerSec * o.bucketWindowSeconds);

  const need = (cores) => Math.ceil(cores / o.utilisation);
  const postgresNeeded = postgresCores / o.utilisation;
  const redisNeeded = redisCores / o.utilisation;
  const onePostgres = postgresNeeded <= o.postgresMaxCores && walMbPerSec <= o.postgresMaxWalMbPerSec;
  const oneRedis = redisNeeded <= o.redisCoresPerNode;

  const limits = [];
  if (postgresNeeded > o.postgresMaxCores) limits.push(`PostgreSQL needs ${postgresNeeded.toFixed(0)} cores at ${o.utilisation * 100} % (more than one primary's ${o.postgresMaxCores})`);
  if (walMbPerSec > o.postgresMaxWalMbPerSec) limits.push(`PostgreSQL would write ${walMbPerSec.toFixed(0)} MB/s of WAL for messages alone (more than ${o.postgresMaxWalMbPerSec} MB/s)`);
  if (!oneRedis) limits.push(`Redis needs ${redisNeeded.toFixed(1)} cores of command time (one node runs commands on one)`);

  return {
    load: { ...load },
    instances: Math.max(2, need(instanceCores)),
    instanceCoresBusy: instanceCores,
    nginxCores: need(nginxCores),
    postgres: {
      cores: Math.ceil(postgresNeeded),
      coresBusy: postgresCores,
      commitsPerSec,
      statementsPerSec,
      walMbPerSec,
      messagesStorageTb: messageBytes / 1e12,
      webhooksStorageGb: webhookBytes / 1e9,
      retentionDays,
      enough: onePostgres,
    },
    redis: {
      nodes: Math.max(1, Math.ceil(redisNeeded / o.redisCoresPerNode)),
      coresBusy: redisCores,
      opsPerSec: redisOpsPerSec,
      liveBuckets,
      memoryMb: (liveBuckets * o.bytesPerBucket) / 1e6,
      enough: oneRedis,
    },
    limits,
  };
}

/**
 * What the model says this benchmark machine should reach with N instances, to compare with what
 * it measured. Every process of the run shares the machine's cores — instances, nginx,
 * PostgreSQL's backends, Redis and the load generator — so the model's rate is the CPU the run
 * can have over the CPU all of them spend per answer. The per-answer costs are those of ONE
 * instance behind the same nginx (the `single` measurement), so the comparison shows whether N
 * instances cost more per answer than one (contention in PostgreSQL, Redis or the machine). The
 * CPU the run can have is what the bare run through the same nginx got (`coresUsed`): on a shared
 * machine other tenants take the rest, and the record's `cores` would overstate it.
 */
export function predictThisMachine(record, scenario) {
  const row = record.results.find((r) => r.scenario === scenario);
  if (!row || !row.single) return undefined;
  const one = row.single;
  const generatorUs = one.generatorCpuMicrosPerRequest ?? 0;
  const perAnswerUs = (one.cpuMicrosPerRequest ?? 0) + (one.nginxCpuMicrosPerRequest ?? 0) + (one.postgresPerAnswer?.backendCpuMicros ?? 0) + (one.redisPerAnswer?.usec ?? 0) + generatorUs;
  const coresAvailable = row.bare.coresUsed ?? record.cores;
  const predicted = (1e6 * coresAvailable) / perAnswerUs;
  const measured = row.server.requestsPerSec;
  // The same prediction with the cores the N-instance run actually got: what is left of the gap
  // is the N instances' higher cost per answer, not the machine's other tenants.
  const atUsedCores = row.server.coresUsed ? (1e6 * row.server.coresUsed) / perAnswerUs : undefined;
  return { scenario, instances: record.instances, coresAvailable, coresUsedByN: row.server.coresUsed, generatorUs, perAnswerUs, predicted, atUsedCores, measured, ratio: measured / predicted };
}

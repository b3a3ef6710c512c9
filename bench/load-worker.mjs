// One load run, in its own process (bench/lib/processes.mjs runLoad). Receives the job over IPC,
// builds every request as bytes before the clock starts, runs bench/lib/raw-load.mjs and sends
// back the figures. Request shapes:
//   paths:  each request takes the next path of the list (webhook URLs), with one fixed body;
//   bearer: GET one path, each request with the next bearer token of the list;
//   forms:  POST one path, each request with the next form body of the list (single-use
//           codes and refresh tokens: `reused` counts requests made after the list ran out;
//           `reusable: true` cycles the list instead, e.g. tokens to introspect);
//   otherwise one fixed request (`path`, `method`, `body`, `headers`);
//   check429: count the 429 answers that carry every rate-limit header (scenario 6).
// A job with `paced: true` (scenario 7) is sent at an even fixed rate by bench/lib/paced-load.mjs
// (why: see that file); one with `overallRate` (scenario 7's comparison) by autocannon, whose
// per-second bursts are what that comparison shows.
import autocannon from 'autocannon';
import { pacedLoad } from './lib/paced-load.mjs';
import { rawLoad, requestBuffer } from './lib/raw-load.mjs';

/** The job's requests as prepared bytes, and whether each may be sent only once. */
function pool(job) {
  const host = new URL(job.base).host;
  const method = job.method ?? 'GET';
  const headers = { ...(job.headers ?? {}) };
  if (job.shape === 'paths') return { once: false, pool: job.paths.map((path) => requestBuffer({ method, path, host, headers, body: job.body })) };
  if (job.shape === 'bearer') return { once: false, pool: job.tokens.map((t) => requestBuffer({ method, path: job.path, host, headers: { ...headers, authorization: `Bearer ${t}` }, body: job.body })) };
  if (job.shape === 'forms') {
    const formHeaders = { ...headers, 'content-type': 'application/x-www-form-urlencoded' };
    return { once: !job.reusable, pool: job.bodies.map((body) => requestBuffer({ method, path: job.path, host, headers: formHeaders, body })) };
  }
  return { once: false, pool: [requestBuffer({ method, path: job.path ?? '/', host, headers, body: job.body })] };
}

/** SPEC §8 / DESIGN §1: every 429 of a webhook URL names its bucket and when to retry. */
function check429Counter() {
  const counts = { total: 0, tooMany: 0, correct429: 0, badHeaders: 0, sampleBad: undefined };
  const onResponse = (status, h) => {
    counts.total += 1;
    if (status !== 429) return;
    counts.tooMany += 1;
    const ok =
      h['retry-after'] !== undefined &&
      h['x-ratelimit-limit'] === '10' &&
      h['x-ratelimit-remaining'] === '0' &&
      h['x-ratelimit-reset'] !== undefined &&
      h['x-ratelimit-reset-after'] !== undefined &&
      h['x-ratelimit-bucket'] !== undefined &&
      h['x-ratelimit-scope'] === 'shared';
    if (ok) counts.correct429 += 1;
    else {
      counts.badHeaders += 1;
      counts.sampleBad ??= h;
    }
  };
  return { counts, onResponse };
}

/** Scenario 7's comparison only: autocannon at a fixed overall rate, one fixed request or a list of paths. */
function autocannonRequest(job) {
  const request = { method: job.method ?? 'GET' };
  if (job.body !== undefined) request.body = job.body;
  let i = 0;
  if (job.shape === 'paths') {
    request.setupRequest = (req) => {
      req.path = job.paths[i++ % job.paths.length];
      return req;
    };
  } else request.path = job.path;
  return request;
}

process.on('message', async (m) => {
  if (m.type !== 'job') return;
  const job = m.job;
  try {
    if (job.paced) {
      const result = await pacedLoad({ base: job.base, method: job.method, paths: job.paths, body: job.body, headers: job.headers, connections: job.connections, duration: job.duration, rate: job.rate, warmup: job.warmup });
      process.send({ type: 'result', result });
      process.exit(0);
    }
    if (job.overallRate) {
      const r = await autocannon({ url: job.base, connections: job.connections, duration: job.duration, headers: job.headers ?? {}, requests: [autocannonRequest(job)], timeout: 10, overallRate: job.overallRate });
      const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));
      process.send({ type: 'result', result: { requestsPerSec: r.requests.average, totalRequests: r.requests.total, latency: { p50: r.latency.p50, p97_5: r.latency.p97_5, p99: r.latency.p99, max: r.latency.max, mean: r.latency.mean }, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, statusCodes, duration: r.duration, reused: 0 } });
      process.exit(0);
    }
    const prepared = pool(job);
    const checker = job.check429 ? check429Counter() : undefined;
    const result = await rawLoad({ base: job.base, pool: prepared.pool, once: prepared.once, connections: job.connections, duration: job.duration, onResponse: checker?.onResponse });
    process.send({ type: 'result', result: { ...result, ...(checker ? { check429: checker.counts } : {}) } });
    process.exit(0);
  } catch (error) {
    process.send({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
    process.exit(1);
  }
});
process.send({ type: 'ready' });

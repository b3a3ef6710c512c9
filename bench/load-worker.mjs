// One autocannon run, in its own process (bench/lib/processes.mjs runLoad). Receives the job over
// IPC, sends back the figures. Request shapes:
//   paths:  each request takes the next path of the list (webhook URLs), with one fixed body;
//   bearer: GET one path, each request with the next bearer token of the list;
//   forms:  POST one path, each request with the next form body of the list (single-use
//           codes and refresh tokens: `reused` counts requests made after the list ran out);
//   check429: count the 429 answers that carry every rate-limit header (scenario 6).
// A job with `paced: true` (scenario 7) is sent at an even fixed rate by bench/lib/paced-load.mjs
// instead of autocannon (why: see that file).
import autocannon from 'autocannon';
import { pacedLoad } from './lib/paced-load.mjs';

function build(job) {
  let i = 0;
  let reused = 0;
  const counts = { total: 0, tooMany: 0, correct429: 0, badHeaders: 0, sampleBad: undefined };
  const request = { method: job.method ?? 'GET' };
  if (job.body !== undefined) request.body = job.body;
  const headers = { ...(job.headers ?? {}) };

  if (job.shape === 'paths') {
    const paths = job.paths;
    request.setupRequest = (req) => {
      req.path = paths[i++ % paths.length];
      return req;
    };
  } else if (job.shape === 'bearer') {
    const tokens = job.tokens;
    request.path = job.path;
    request.setupRequest = (req) => {
      req.headers = { ...req.headers, authorization: `Bearer ${tokens[i++ % tokens.length]}` };
      return req;
    };
  } else if (job.shape === 'forms') {
    const bodies = job.bodies;
    request.path = job.path;
    headers['content-type'] = 'application/x-www-form-urlencoded';
    request.setupRequest = (req) => {
      if (i >= bodies.length) reused += 1;
      req.body = bodies[i++ % bodies.length];
      return req;
    };
  } else {
    request.path = job.path;
  }

  if (job.check429) {
    request.onResponse = (status, _body, _context, h) => {
      counts.total += 1;
      if (status !== 429) return;
      counts.tooMany += 1;
      // SPEC §8 / DESIGN §1: every 429 of a webhook URL names its bucket and when to retry.
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
  }
  return { request, headers, counts, reusedCount: () => reused };
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
    const { request, headers, counts, reusedCount } = build(job);
    const opts = {
      url: job.base,
      connections: job.connections,
      duration: job.duration,
      headers,
      requests: [request],
      timeout: 10,
    };
    if (job.overallRate) opts.overallRate = job.overallRate;
    const r = await autocannon(opts);
    const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));
    process.send({
      type: 'result',
      result: {
        requestsPerSec: r.requests.average,
        totalRequests: r.requests.total,
        latency: { p50: r.latency.p50, p97_5: r.latency.p97_5, p99: r.latency.p99, max: r.latency.max, mean: r.latency.mean },
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        statusCodes,
        duration: r.duration,
        reused: reusedCount(),
        ...(job.check429 ? { check429: counts } : {}),
      },
    });
    process.exit(0);
  } catch (error) {
    process.send({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
    process.exit(1);
  }
});
process.send({ type: 'ready' });

// An open-loop load at a fixed rate (scenario 7): request i is due at t0 + i / rate, so the
// requests are spread evenly over each second, and its latency is counted from the moment it was
// due, not from when it left. A server stall therefore counts against every request it held up,
// including those still waiting for a free connection (coordinated omission, the way wrk2 measures).
//
// Why not autocannon's overallRate: its client resets a per-connection counter from a
// setInterval(1000) and sends that connection's share of the second back to back until the
// counter is spent, so "5,000 requests/s over 50 connections" is 50 connections each sending 100
// requests as fast as the server answers at the top of every second: a saturated burst of a few
// hundred ms, then silence. Its latencies are those of the burst (the bare node:http server
// measured p99 6–18 ms that way), and its coordinated-omission correction assumes one request
// every ceil(1 / rate) = 1 ms per connection. run.mjs still reports that figure beside this one.
//
// The first `warmup` seconds run at the same rate and are not recorded (wrk2 calibrates the same
// way): they open the connections and let the JIT compile the handlers, which a cold process
// otherwise pays for in the first second of a 30-second figure.
//
// undici's Pool keeps the connections alive and parses the answers (a maintained client, faster
// than node:http's Agent, so the generator leaves the cores to the server).
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/** The generator wakes every millisecond (Node's timer resolution) and sends what has come due. */
const TICK_MS = 1;
/** An answer later than this counts as a timeout, as autocannon's `timeout: 10` does. */
const TIMEOUT_MS = 10_000;

function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const ms = (value) => Math.round(value * 100) / 100;

/**
 * Sends `rate` requests per second for `warmup` + `duration` seconds, request i to paths[i % paths.length],
 * over `connections` keep-alive connections, and resolves with autocannon's result shape
 * (latencies in ms, with two decimals instead of whole milliseconds) plus `sendLag`: how late the
 * generator itself sent requests (its own timer lag, included in every latency).
 */
export async function pacedLoad({ base, method, paths, body, headers, connections, duration, rate, warmup = 0 }) {
  const pool = new Pool(base, { connections, pipelining: 1, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, keepAliveTimeout: 60_000 });
  const skipped = Math.round(rate * warmup);
  const total = skipped + Math.round(rate * duration);
  const latencies = new Float64Array(total - skipped);
  const lags = new Float64Array(total - skipped);
  const statusCodes = {};
  let answered = 0;
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let sent = 0;
  let settled = 0;
  let finished;
  const done = new Promise((resolve) => (finished = resolve));

  const settle = () => {
    settled += 1;
    if (settled === total) finished();
  };
  const send = (i, t0) => {
    const due = t0 + (i * 1000) / rate;
    const recorded = i >= skipped;
    if (recorded) lags[i - skipped] = performance.now() - due;
    pool.request({ origin: base, path: paths[i % paths.length], method, headers, body }).then(
      async (response) => {
        await response.body.dump();
        if (!recorded) return settle();
        latencies[answered++] = performance.now() - due;
        statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
        if (response.statusCode < 200 || response.statusCode > 299) non2xx += 1;
        settle();
      },
      (error) => {
        if (!recorded) return settle();
        if (error?.code === 'UND_ERR_HEADERS_TIMEOUT' || error?.code === 'UND_ERR_BODY_TIMEOUT') timeouts += 1;
        else errors += 1;
        settle();
      },
    );
  };

  const t0 = performance.now();
  let measuredFrom = t0;
  await new Promise((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
      while (sent < due) {
        if (sent === skipped) measuredFrom = t0 + (skipped * 1000) / rate;
        send(sent++, t0);
      }
      if (sent < total) setTimeout(tick, TICK_MS);
      else resolve();
    };
    tick();
  });
  await done;
  const elapsed = (performance.now() - measuredFrom) / 1000;
  await pool.close();

  const sorted = latencies.subarray(0, answered).sort();
  const sortedLags = lags.sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    requestsPerSec: answered / elapsed,
    totalRequests: answered,
    // Every request the server answered, warm-up included: run.mjs divides the server's CPU by it.
    requestsServed: total - errors - timeouts,
    latency: {
      p50: ms(percentile(sorted, 0.5)),
      p97_5: ms(percentile(sorted, 0.975)),
      p99: ms(percentile(sorted, 0.99)),
      max: ms(sorted.length ? sorted[sorted.length - 1] : 0),
      mean: ms(answered ? sum / answered : 0),
    },
    non2xx,
    errors,
    timeouts,
    statusCodes,
    duration: elapsed,
    reused: 0,
    sendLag: { p50: ms(percentile(sortedLags, 0.5)), p99: ms(percentile(sortedLags, 0.99)), max: ms(sortedLags[sortedLags.length - 1] ?? 0) },
  };
}

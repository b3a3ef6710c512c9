/**
 * Prometheus metrics (issue #2 §10): answers by route pattern, statement, commit and bucket
 * timings, and the process's own metrics, in one registry per app (docs/performance.md §Metrics).
 * Invariant: one observation per answer, under the pattern its route was registered with and
 * never its URL (URLs carry webhook tokens); the names, labels and buckets prom-client would use.
 * Tested by test/http/operations.test.ts and test/unit/metric-series.test.ts.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { BoundCounter, BoundHistogram, type CounterSeries, type HistogramSeries } from './metric-series.js';
import type { onResponseHookHandler } from 'fastify';
import type { App } from './app-type.js';
import type { BucketDecision, BucketRule, BucketStore } from '../rate-limit/bucket.js';
import type { QueryTiming } from '../storage/connect.js';

/**
 * Prometheus metrics (issue #2 §10): request counts and latencies by route, database and
 * rate-limit store timings, and the process's own metrics.
 *
 * Each app instance has its own registry: tests build many apps in one process, and prom-client's
 * global registry refuses a metric registered twice. Process metrics (CPU, memory, event loop,
 * GC) describe the process, not an app, so they live in one registry per process, created on
 * first use and appended to every app's output.
 */
export interface Metrics {
  readonly registry: Registry;
  /** The Prometheus text exposition of this app's metrics followed by the process's. */
  render(): Promise<string>;
  readonly contentType: string;
  /**
   * Counts and times the answers of one route pattern, keeping the series of the last method and
   * status it saw: a busy route answers the same pair again and again (POST 204 on webhook
   * execute), and finding a series by its labels joins and hashes them (docs/performance.md
   * §Metrics).
   */
  requestObserver(route: string): (method: string, statusCode: number, durationMs: number) => void;
  observeQuery(timing: QueryTiming): void;
  observeBucket(operation: 'take' | 'peek' | 'reset', durationMs: number, decision?: BucketDecision): void;
}

/** Latency buckets in seconds: sub-millisecond SQLite reads up to multi-second stalls. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route label of a request that matched no route: never the raw URL (unbounded, and it may carry a secret). */
export const UNMATCHED_ROUTE = '(unmatched)';

let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const processRegistry = processMetrics();
  // The per-request metrics bind their label sets once (http/metric-series.ts, docs/performance.md §Metrics).
  const requests = new BoundCounter('http_requests_total', 'HTTP requests answered, by method, route pattern and status code.', ['method', 'route', 'status_code']);
  const requestDuration = new BoundHistogram(
    'http_request_duration_seconds',
    'Time from receiving a request to finishing its response, by method and route pattern.',
    ['method', 'route'],
    LATENCY_BUCKETS,
  );
  const queryDuration = new BoundHistogram(
    'db_query_duration_seconds',
    'Database statement execution time, by operation (select, insert, update, delete, raw; commit: a SQLite write group\'s COMMIT) and outcome.',
    ['operation', 'outcome'],
    LATENCY_BUCKETS,
  );
  const bucketDuration = new BoundHistogram('rate_limit_store_duration_seconds', 'Rate-limit bucket store operation time (memory or Redis), by operation.', ['operation'], LATENCY_BUCKETS);
  const bucketDecisions = new BoundCounter('rate_limit_decisions_total', 'Attempts counted against rate-limit buckets, by outcome (allowed or limited).', ['outcome']);
  for (const metric of [requests, requestDuration, queryDuration, bucketDuration, bucketDecisions]) {
    registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  }
  const allowed = bucketDecisions.series('allowed');
  const limited = bucketDecisions.series('limited');
  const bucketSeries = { take: bucketDuration.series('take'), peek: bucketDuration.series('peek'), reset: bucketDuration.series('reset') };
  const succeeded = new Map<string, HistogramSeries>();
  let succeededVersion = queryDuration.version;

  return {
    registry,
    contentType: registry.contentType,
    async render() {
      const [own, shared] = await Promise.all([registry.metrics(), processRegistry.metrics()]);
      return `${own}\n${shared}`;
    },
    requestObserver(route) {
      let lastMethod: string | undefined;
      let lastStatus = 0;
      let version = -1;
      let counter: CounterSeries | undefined;
      let histogram: HistogramSeries | undefined;
      return (method, statusCode, durationMs) => {
        const current = requests.version + requestDuration.version;
        if (counter === undefined || histogram === undefined || method !== lastMethod || statusCode !== lastStatus || version !== current) {
          counter = requests.series(method, route, String(statusCode));
          histogram = requestDuration.series(method, route);
          lastMethod = method;
          lastStatus = statusCode;
          version = current;
        }
        counter.inc();
        histogram.observe(durationMs / 1000);
      };
    },
    observeQuery(timing) {
      // Successful statements by operation without joining labels; errors are rare.
      if (timing.failed) {
        queryDuration.series(timing.operation, 'error').observe(timing.durationMs / 1000);
        return;
      }
      if (succeededVersion !== queryDuration.version) {
        succeeded.clear();
        succeededVersion = queryDuration.version;
      }
      let series = succeeded.get(timing.operation);
      if (series === undefined) {
        series = queryDuration.series(timing.operation, 'ok');
        succeeded.set(timing.operation, series);
      }
      series.observe(timing.durationMs / 1000);
    },
    observeBucket(operation, durationMs, decision) {
      bucketSeries[operation].observe(durationMs / 1000);
      if (decision) (decision.allowed ? allowed : limited).inc();
    },
  };
}

/**
 * Counts every response by its route pattern (`/api/v1/webhooks/:id/:token`), never by its URL:
 * URLs carry webhook tokens and would make one time series per id.
 */
export function installRequestMetrics(app: App, metrics: Metrics): void {
  // Each route observes its own answers under the pattern it was registered with, known once
  // here: reading `request.routeOptions.url` per answer made Fastify build a 13-field options
  // object (and ask the router about version constraints) on every request (docs/performance.md
  // §Metrics). A new array, never a push: Fastify copies a GET route's options for its HEAD
  // route before this hook runs, and the HEAD route gets its own observer from its own onRoute.
  app.addHook('onRoute', (route) => {
    const observeAnswer = metrics.requestObserver(route.url);
    const observe: onResponseHookHandler = (request, reply, done) => {
      observeAnswer(request.method, reply.statusCode, reply.elapsedTime);
      done();
    };
    const existing = route.onResponse;
    route.onResponse = existing === undefined ? [observe] : [...(Array.isArray(existing) ? existing : [existing]), observe];
  });
  // Requests no route matched reach Fastify's not-found handler, which has no onRoute.
  const observeUnmatched = metrics.requestObserver(UNMATCHED_ROUTE);
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) observeUnmatched(request.method, reply.statusCode, reply.elapsedTime);
    done();
  });
}

/** The same store, timed: every operation is observed whether it succeeds or throws. */
export function instrumentBucketStore(store: BucketStore, metrics: Metrics): BucketStore {
  // One then() per operation instead of an async wrapper's extra promise and turn (docs/performance.md §Metrics).
  const timed = <T>(operation: 'take' | 'peek' | 'reset', run: () => Promise<T>, counts: boolean): Promise<T> => {
    const started = performance.now();
    return run().then(
      (result) => {
        metrics.observeBucket(operation, performance.now() - started, counts ? (result as BucketDecision | undefined) : undefined);
        return result;
      },
      (error: unknown) => {
        metrics.observeBucket(operation, performance.now() - started);
        throw error;
      },
    );
  };
  // A store that answers in this process (memory) is timed around its synchronous call: no then,
  // no promise but the answer's (docs/performance.md §Metrics).
  const takeInLine = (takeSync: NonNullable<BucketStore['takeSync']>) => (key: string, rule: BucketRule, now: number, cost?: number): Promise<BucketDecision> => {
    const started = performance.now();
    let decision: BucketDecision;
    try {
      decision = takeSync(key, rule, now, cost);
    } catch (error) {
      metrics.observeBucket('take', performance.now() - started);
      return Promise.reject(error);
    }
    metrics.observeBucket('take', performance.now() - started, decision);
    return Promise.resolve(decision);
  };
  return {
    take: store.takeSync
      ? takeInLine(store.takeSync.bind(store))
      : (key: string, rule: BucketRule, now: number, cost?: number) => timed('take', () => store.take(key, rule, now, cost), true),
    peek: (key: string, rule: BucketRule, now: number) => timed('peek', () => store.peek(key, rule, now), false),
    reset: (key: string) => timed('reset', () => store.reset(key), false),
    close: () => store.close(),
  };
}

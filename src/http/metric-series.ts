/**
 * Counters and histograms for the per-request metrics, with their label sets bound once:
 * prom-client validates and hashes the label set on every `inc()` and `observe()`, 6–8 % of the
 * CPU on the hot paths (docs/performance.md §Metrics). Here a label set is looked up once (a Map by
 * the joined values) and each observation is a loop over the bucket bounds and two additions.
 * Invariant: prom-client renders them as its own (`get()` in its metric-object shape, registered in
 * the app's registry), with the same names, labels and buckets.
 * Tested by test/unit/metric-series.test.ts and test/http/operations.test.ts.
 */

type Labels = Record<string, string>;

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What prom-client's Registry reads from a registered metric. */
export interface CollectableMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): { name: string; help: string; type: 'counter' | 'histogram'; aggregator: 'sum'; values: MetricValue[] };
  reset(): void;
}

/** The series of one metric by label set: looked up by the joined values, created on first use. */
class SeriesByLabels<T> {
  readonly #entries = new Map<string, { labels: Labels; series: T }>();
  /** Bumped by clear(): a caller keeping a series between observations knows it was dropped. */
  version = 0;

  constructor(
    private readonly labelNames: readonly string[],
    private readonly create: () => T,
  ) {}

  get(values: readonly string[]): T {
    const key = values.join('\u0000');
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i] ?? '';
      });
      entry = { labels, series: this.create() };
      this.#entries.set(key, entry);
    }
    return entry.series;
  }

  entries(): IterableIterator<{ labels: Labels; series: T }> {
    return this.#entries.values();
  }

  clear(): void {
    this.#entries.clear();
    this.version += 1;
  }
}

export class HistogramSeries {
  /** Observations per bucket (not cumulative; summed when rendered); the last one is +Inf only. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i += 1;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count += 1;
  }
}

export class BoundHistogram implements CollectableMetric {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly #series: SeriesByLabels<HistogramSeries>;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    this.#series = new SeriesByLabels(labelNames, () => new HistogramSeries(buckets));
  }

  /** The series of one label set (values in the order of `labelNames`), created on first use. */
  series(...values: string[]): HistogramSeries {
    return this.#series.get(values);
  }

  /** Changes when reset() drops every series: a series kept by a caller is then stale. */
  get version(): number {
    return this.#series.version;
  }

  get() {
    const values: MetricValue[] = [];
    for (const { labels, series } of this.#series.entries()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        values.push({ labels: { le: String(bound), ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.#series.clear();
  }
}

export class CounterSeries {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

export class BoundCounter implements CollectableMetric {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  readonly #series: SeriesByLabels<CounterSeries>;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    this.#series = new SeriesByLabels(labelNames, () => new CounterSeries());
  }

  series(...values: string[]): CounterSeries {
    return this.#series.get(values);
  }

  /** Changes when reset() drops every series: a series kept by a caller is then stale. */
  get version(): number {
    return this.#series.version;
  }

  get() {
    const values = [...this.#series.entries()].map(({ labels, series }) => ({ labels, value: series.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.#series.clear();
  }
}

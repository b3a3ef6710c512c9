import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BoundCounter, BoundHistogram } from '../../src/http/metric-series.js';

describe('per-request metric series with their label sets bound once (src/http/metric-series.ts)', () => {
  it('render as Prometheus histograms: cumulative buckets, +Inf, sum and count per label set', async () => {
    const registry = new Registry();
    const histogram = new BoundHistogram('probe_seconds', 'A probe.', ['route'], [0.001, 0.01, 1]);
    registry.registerMetric(histogram as unknown as Parameters<Registry['registerMetric']>[0]);
    const a = histogram.series('/a');
    a.observe(0.0005);
    a.observe(0.001); // on a bound: counted in that bucket (le is "less than or equal")
    a.observe(0.5);
    a.observe(20);
    histogram.series('/b').observe(0.002);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE probe_seconds histogram');
    expect(text).toContain('probe_seconds_bucket{le="0.001",route="/a"} 2');
    expect(text).toContain('probe_seconds_bucket{le="0.01",route="/a"} 2');
    expect(text).toContain('probe_seconds_bucket{le="1",route="/a"} 3');
    expect(text).toContain('probe_seconds_bucket{le="+Inf",route="/a"} 4');
    expect(text).toContain('probe_seconds_sum{route="/a"} 20.5015');
    expect(text).toContain('probe_seconds_count{route="/a"} 4');
    expect(text).toContain('probe_seconds_bucket{le="0.001",route="/b"} 0');
    expect(text).toContain('probe_seconds_count{route="/b"} 1');
  });

  it('render counters per label set, the same series for the same labels', async () => {
    const registry = new Registry();
    const counter = new BoundCounter('probe_total', 'Probes.', ['method', 'status_code']);
    registry.registerMetric(counter as unknown as Parameters<Registry['registerMetric']>[0]);
    counter.series('GET', '200').inc();
    counter.series('GET', '200').inc();
    counter.series('POST', '429').inc(3);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE probe_total counter');
    expect(text).toContain('probe_total{method="GET",status_code="200"} 2');
    expect(text).toContain('probe_total{method="POST",status_code="429"} 3');
  });
});

import { metricsRegistry } from './registry';
import { recordDebit, recordHttpRequest } from './instruments';

/** Recording before enableMetrics (METRICS_ENABLED=false) changes nothing; this file never enables them. */
describe('instruments while metrics are off', () => {
  it('record nothing', async () => {
    recordHttpRequest('s', 'GET', '/x', 200, 0.01);
    recordDebit('ok', 0.002);
    const text = await metricsRegistry.metrics();
    expect(text).not.toContain('service="s"');
    expect(text).not.toContain('billstream_wallet_debit_duration_seconds_count{result="ok"}');
    // No process metrics either: collectDefaultMetrics runs only when metrics are enabled.
    expect(text).not.toContain('process_cpu_user_seconds_total');
  });
});

describe('counters and histograms of fixed series', () => {
  it('expose cumulative buckets, sum and count per label values, and counters per series', async () => {
    const { Registry } = await import('prom-client');
    const { FastCounter, FastHistogram } = await import('./series');
    const registry = new Registry();
    const h = new FastHistogram('t_seconds', 'test', ['route'] as const, [0.1, 1], registry);
    const c = new FastCounter('t_total', 'test', ['route', 'status'] as const, registry);
    for (const v of [0.05, 0.1, 0.5, 2]) h.labels('/a').observe(v);
    h.labels('/b').observe(0.2);
    c.labels('/a', '200').inc();
    c.labels('/a', '200').inc(2);
    c.labels('/a', '500').inc();
    const text = await registry.metrics();
    expect(text).toContain('# TYPE t_seconds histogram');
    expect(text).toContain('t_seconds_bucket{route="/a",le="0.1"} 2');
    expect(text).toContain('t_seconds_bucket{route="/a",le="1"} 3');
    expect(text).toContain('t_seconds_bucket{route="/a",le="+Inf"} 4');
    expect(text).toContain('t_seconds_sum{route="/a"} 2.65');
    expect(text).toContain('t_seconds_count{route="/a"} 4');
    expect(text).toContain('t_seconds_bucket{route="/b",le="0.1"} 0');
    expect(text).toContain('t_total{route="/a",status="200"} 3');
    expect(text).toContain('t_total{route="/a",status="500"} 1');
  });
});

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

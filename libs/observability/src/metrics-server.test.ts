// Through the index, as the processes load it: the instruments are registered.
import { listenMetrics, type MetricsListener } from './index';

describe('the metrics listener', () => {
  let listener: MetricsListener;
  beforeAll(async () => {
    listener = await listenMetrics(0, '127.0.0.1');
  });
  afterAll(() => listener.close());

  it('answers GET /metrics in the Prometheus text format, and nothing else', async () => {
    const ok = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    expect(await ok.text()).toContain('# TYPE billstream_http_requests_total counter');
    for (const [method, path] of [['GET', '/'], ['GET', '/v1/customers'], ['POST', '/metrics']]) {
      expect((await fetch(`http://127.0.0.1:${listener.port}${path}`, { method })).status).toBe(404);
    }
  });
});

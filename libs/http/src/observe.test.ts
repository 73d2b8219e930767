import type { Express } from 'express';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '@billstream/logger';
import { enableMetrics, metricsRegistry, SpanKind, startTracing, stopTracing } from '@billstream/observability';
import { createHttpApp, finishApp } from './app';
import { templateResolver } from './observe';
import { listen, type Listening } from './server';

const logger = createLogger({ service: 'test', level: 'silent' });

async function requests(labels: Record<string, string>): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric('billstream_http_requests_total')!.get();
  return metric.values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}

describe('request metrics and spans of an app (ADR 0020)', () => {
  const exporter = new InMemorySpanExporter();
  let http: Listening;

  beforeAll(async () => {
    enableMetrics();
    startTracing({ exporter, serviceName: 'test' });
    const app: Express = createHttpApp({ logger, service: 'observe-test', resolveRoute: templateResolver([{ method: 'get', path: '/v1/guarded/:id' }]) });
    app.use('/v1/guarded', (_req, res) => {
      res.status(401).json({ refused: true });
    });
    app.get('/v1/things/:thing_id', (_req, res) => {
      res.json({ ok: true });
    });
    app.get('/v1/boom', () => {
      throw new Error('boom');
    });
    finishApp(app, logger);
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await http.close();
    await stopTracing();
  });

  it('counts by route template and status, never by the path with its ids', async () => {
    const base = { service: 'observe-test', method: 'GET' };
    for (const id of ['a1', 'b2', 'c3']) expect((await fetch(`${http.url}/v1/things/${id}`)).status).toBe(200);
    expect((await fetch(`${http.url}/v1/nowhere/x9`)).status).toBe(404);
    expect((await fetch(`${http.url}/v1/boom`)).status).toBe(500);
    expect(await requests({ ...base, route: '/v1/things/:thing_id', status: '200' })).toBe(3);
    expect(await requests({ ...base, route: 'unmatched', status: '404' })).toBe(1);
    expect(await requests({ ...base, route: '/v1/boom', status: '500' })).toBe(1);
    const text = await metricsRegistry.metrics();
    expect(text).not.toMatch(/a1|b2|c3|x9/);
    expect(text).toContain('billstream_http_request_duration_seconds_bucket{service="observe-test",method="GET",route="/v1/things/:thing_id",le="+Inf"} 3');
  });

  it('names a request refused before any route by the template the resolver finds', async () => {
    expect((await fetch(`${http.url}/v1/guarded/k7`)).status).toBe(401);
    expect(await requests({ service: 'observe-test', route: '/v1/guarded/:id', status: '401' })).toBe(1);
  });

  it('makes a server span per request that continues the caller trace and names the route template; a 5xx marks it failed', async () => {
    exporter.reset();
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await fetch(`${http.url}/v1/things/z1`, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
    await fetch(`${http.url}/v1/boom`);
    const [ok, failed] = exporter.getFinishedSpans();
    expect(ok.kind).toBe(SpanKind.SERVER);
    expect(ok.name).toBe('GET /v1/things/:thing_id');
    expect(ok.spanContext().traceId).toBe(traceId);
    expect(ok.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(ok.attributes['http.response.status_code']).toBe(200);
    expect(failed.status.code).toBe(2);
  });

  it('resolves templates by method and whole segments', () => {
    const resolve = templateResolver([
      { method: 'get', path: '/v1/customers/:id' },
      { method: 'post', path: '/v1/customers' },
    ]);
    expect(resolve('GET', '/v1/customers/cus_1')).toBe('/v1/customers/:id');
    expect(resolve('GET', '/v1/customers/cus_1/x')).toBeUndefined();
    expect(resolve('POST', '/v1/customers')).toBe('/v1/customers');
    expect(resolve('DELETE', '/v1/customers')).toBeUndefined();
  });
});

import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { activeTraceId, extractContext, injectTraceHeaders, inSpan, SpanKind, startTracing, stopTracing, tracingEnabled, tracingFromEnv } from './tracing';

describe('tracing settings from the standard OTEL_* variables', () => {
  it('is off by default and with none or OTEL_SDK_DISABLED=true', () => {
    expect(tracingFromEnv('billstream-wallet', {})).toBeUndefined();
    expect(tracingFromEnv('billstream-wallet', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
    expect(tracingFromEnv('billstream-wallet', { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
  });

  it('is on with an exporter or an OTLP endpoint; OTEL_SERVICE_NAME names the service', () => {
    expect(tracingFromEnv('billstream-wallet', { OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ exporter: 'otlp', serviceName: 'billstream-wallet' });
    expect(tracingFromEnv('billstream-wallet', { OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'w' })).toEqual({ exporter: 'console', serviceName: 'w' });
    expect(tracingFromEnv('billstream-wallet', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toEqual({ exporter: 'otlp', serviceName: 'billstream-wallet' });
  });
});

describe('spans and W3C trace context', () => {
  // A provider's shutdown stops its exporter: one exporter per test.
  let exporter: InMemorySpanExporter;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
  });
  afterEach(() => stopTracing());

  it('without tracing, helpers run the work and add nothing', async () => {
    expect(tracingEnabled()).toBe(false);
    expect(await inSpan('x', {}, async (span) => span)).toBeUndefined();
    expect(injectTraceHeaders({ a: '1' })).toEqual({ a: '1' });
    expect(activeTraceId()).toBeUndefined();
  });

  it('carries a span through headers: the far side continues the same trace as a child', async () => {
    startTracing({ exporter, serviceName: 'test' });
    let headers: Record<string, string> = {};
    let traceId: string | undefined;
    await inSpan('publish', { kind: SpanKind.PRODUCER }, async () => {
      headers = injectTraceHeaders({ 'message-id': 'm1' });
      traceId = activeTraceId();
    });
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(headers['message-id']).toBe('m1');
    await inSpan('process', { kind: SpanKind.CONSUMER, parent: extractContext(headers) }, async () => undefined);
    const [producer, consumer] = exporter.getFinishedSpans();
    expect(producer.spanContext().traceId).toBe(traceId);
    expect(consumer.spanContext().traceId).toBe(traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
  });

  it('marks a span failed when its work throws, and passes the error on', async () => {
    startTracing({ exporter, serviceName: 'test' });
    await expect(inSpan('fails', {}, async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    const [span] = exporter.getFinishedSpans();
    expect(span.status.code).toBe(2);
    expect(span.events.some((e) => e.name === 'exception')).toBe(true);
  });
});

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind, startTracing, stopTracing } from '@billstream/observability';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * Issue #17: with tracing on, one usage event and one debit can be followed through the stack
 * in one trace: the gateway's server span, the hop to the service, the database calls, the
 * Kafka publish and the consumers on the other side, with W3C trace context in the Kafka
 * message headers. Spans go to the SDK's in-memory exporter; services, Postgres and Kafka are real.
 */
describe('tracing across the gateway, services, Postgres and Kafka', () => {
  const exporter = new InMemorySpanExporter();
  let stack: IntegrationStack;
  let receiver: http.Server;

  beforeAll(async () => {
    startTracing({ exporter, serviceName: 'billstream-test' });
    // Calls forwarded over loopback HTTP, as separate deployments make them: the gateway -> service hop is traced.
    stack = await startIntegrationStack({ extra: { inProcessCalls: false, env: { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_POLL_MS: '100' } } });
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await stack?.stop();
    await stopTracing();
  });

  /** A caller's trace context: every span of the request joins its trace. */
  const callerContext = () => {
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
  };
  const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const one = (spans: ReadableSpan[], what: (s: ReadableSpan) => boolean, label: string) => {
    const found = spans.filter(what);
    if (found.length !== 1) throw new Error(`expected one ${label}, found ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
    return found[0];
  };
  /** A consumed batch may come twice (a rebalance before its commit): each delivery is a span of the trace. */
  const some = (spans: ReadableSpan[], what: (s: ReadableSpan) => boolean, label: string) => {
    const found = spans.filter(what);
    if (found.length === 0) throw new Error(`expected a ${label}: ${spans.map((s) => s.name).join(', ')}`);
    return found;
  };

  it('one usage event: gateway request -> Kafka publish -> the aggregator consuming it and storing it, connected spans of one trace', async () => {
    const caller = callerContext();
    const res = await stack.api.post(
      '/v1/events',
      { event_id: `trace-${caller.traceId}`, event_name: 'api_call', external_customer_id: 'trace-cust', timestamp: new Date().toISOString() },
      { traceparent: caller.traceparent },
    );
    expect(res.status).toBe(202);
    await waitFor(async () => spansOf(caller.traceId).some((s) => s.name === 'usage-events process' && s.attributes['messaging.consumer.group.name'] === 'ingestion-aggregator.usage-events'), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'the aggregator consumer span of the event',
    });
    const spans = spansOf(caller.traceId);
    const server = one(spans, (s) => s.kind === SpanKind.SERVER && s.name === 'POST /v1/events', 'gateway server span');
    expect(parentOf(server)).toBe(caller.spanId);
    expect(server.attributes['http.response.status_code']).toBe(202);
    const producer = one(spans, (s) => s.kind === SpanKind.PRODUCER && s.name === 'usage-events publish', 'producer span');
    expect(parentOf(producer)).toBe(server.spanContext().spanId);
    const consumers = some(
      spans,
      (s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.consumer.group.name'] === 'ingestion-aggregator.usage-events',
      'aggregator consumer span',
    );
    for (const c of consumers) expect(parentOf(c)).toBe(producer.spanContext().spanId);
    const consumerIds = new Set(consumers.map((c) => c.spanContext().spanId));
    // The aggregator's database statements (dedup and insert) are children of its consumer span.
    await waitFor(async () => spansOf(caller.traceId).some((s) => s.name.startsWith('db ') && consumerIds.has(parentOf(s) ?? '')), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'a database span under the consumer span',
    });
    const db = spansOf(caller.traceId).filter((s) => s.name.startsWith('db ') && consumerIds.has(parentOf(s) ?? ''));
    expect(db.every((s) => s.attributes['db.namespace'] === 'ingestion')).toBe(true);
  });

  it('one debit: gateway -> wallet service over HTTP -> its database -> outbox -> Kafka -> the webhook dispatcher -> the delivery, one trace', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    expect((await stack.api.post('/v1/webhook-endpoints', { url, events: ['wallet.transaction.created'] })).status).toBe(201);
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `trace-${Date.now()}` });
    const wallet = await stack.api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', initial_credits_to_load: '5' });
    expect(wallet.status).toBe(201);

    const caller = callerContext();
    const debit = await stack.api.post(`/v1/wallets/${wallet.body.id}/debit`, { credits: '1', idempotency_key: 'trace-1' }, { traceparent: caller.traceparent });
    expect(debit.status).toBe(201);
    await waitFor(
      async () => spansOf(caller.traceId).some((s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.destination.name'] === 'wallet-events' && String(s.attributes['messaging.consumer.group.name']).startsWith('webhook')),
      { timeoutMs: 60_000, intervalMs: 100, what: "the webhook dispatcher's consumer span of the debit's event" },
    );
    const spans = spansOf(caller.traceId);
    const gateway = one(spans, (s) => s.kind === SpanKind.SERVER && s.name === 'POST /v1/wallets/:id/debit' && s.attributes['billstream.service'] === 'gateway', 'gateway server span');
    expect(parentOf(gateway)).toBe(caller.spanId);
    const hop = one(spans, (s) => s.kind === SpanKind.CLIENT && s.name === 'POST wallet', 'gateway -> wallet client span');
    expect(parentOf(hop)).toBe(gateway.spanContext().spanId);
    const walletServer = one(spans, (s) => s.kind === SpanKind.SERVER && s.attributes['billstream.service'] === 'wallet', 'wallet server span');
    expect(parentOf(walletServer)).toBe(hop.spanContext().spanId);
    expect(walletServer.name).toBe('POST /v1/wallets/:id/debit');
    // Database statements of the debit run under the wallet's span (the debit batcher's transaction included).
    const walletDb = spans.filter((s) => s.name.startsWith('db ') && s.attributes['db.namespace'] === 'wallet');
    expect(walletDb.length).toBeGreaterThan(0);
    const consumers = some(
      spans,
      (s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.destination.name'] === 'wallet-events' && String(s.attributes['messaging.consumer.group.name']).startsWith('webhook'),
      'webhook dispatcher consumer span',
    );
    // The outbox row carried the trace context: the consumer continues a span of this trace.
    for (const c of consumers) expect(spans.map((s) => s.spanContext().spanId)).toContain(parentOf(c));
    // The delivery attempt, made later by the worker, continues the trace the event came with.
    await waitFor(async () => spansOf(caller.traceId).some((s) => s.name === 'webhook deliver wallet.transaction.created'), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the delivery span of the debit',
    });
    const all = spansOf(caller.traceId);
    const deliveries = all.filter((s) => s.name === 'webhook deliver wallet.transaction.created');
    for (const d of deliveries) {
      expect(d.kind).toBe(SpanKind.CLIENT);
      expect(d.attributes['http.response.status_code']).toBe(204);
      expect(all.map((s) => s.spanContext().spanId)).toContain(parentOf(d));
    }
  });
});

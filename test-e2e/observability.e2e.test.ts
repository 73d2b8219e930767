import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@billstream/testing';
import { hasSeries, scrape, valueOf } from './support/metrics';
import { startProcessStack, type ProcessStack, type ServiceProcessName } from './support/stack';

/**
 * Issue #17: every service process exposes Prometheus metrics on its METRICS_PORT, and they
 * move with the traffic a client sends through the gateway.
 */
describe('metrics of the seven service processes (real Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let failing: http.Server;
  let failingUrl: string;
  let failingHits = 0;

  beforeAll(async () => {
    stack = await startProcessStack({
      env: { 'webhook-dispatcher': { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_POLL_MS: '100' } },
    });
    failing = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        failingHits += 1;
        res.writeHead(500).end();
      });
    });
    await new Promise<void>((r) => failing.listen(0, '127.0.0.1', () => r()));
    failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/hooks`;
  }, 120_000);
  afterAll(async () => {
    await new Promise<void>((r) => (failing ? failing.close(() => r()) : r()));
    await stack?.stop();
  });

  const metricsOf = (name: ServiceProcessName) => scrape(stack.metricsUrls[name]);

  it('every service answers GET /metrics on its metrics port with the process and Node metrics, without a key', async () => {
    for (const name of Object.keys(stack.metricsUrls) as ServiceProcessName[]) {
      const samples = await metricsOf(name);
      expect(hasSeries(samples, 'process_cpu_user_seconds_total')).toBe(true);
      expect(hasSeries(samples, 'nodejs_eventloop_lag_seconds')).toBe(true);
      expect(hasSeries(samples, 'nodejs_heap_size_used_bytes')).toBe(true);
    }
  });

  it('the public gateway port never serves metrics, with or without a key', async () => {
    for (const path of ['/metrics', '/v1/metrics']) {
      const anonymous = await fetch(`${stack.urls.gateway}${path}`);
      expect([401, 404]).toContain(anonymous.status);
      expect(await anonymous.text()).not.toContain('billstream_http_requests_total');
      const withKey = await stack.api.get(path);
      expect(withKey.status).toBe(404);
    }
  });

  it('request counters and latency histograms move by route template; a failed request moves the error series', async () => {
    const route = { service: 'gateway', method: 'GET', route: '/v1/customers' };
    const before = await metricsOf('gateway');
    for (let i = 0; i < 5; i += 1) expect((await stack.api.get('/v1/customers')).status).toBe(200);
    expect((await stack.api.get('/v1/customers/cus_does_not_exist')).status).toBe(404);
    expect((await stack.api.withKey(undefined).get('/v1/customers')).status).toBe(401);
    const after = await metricsOf('gateway');

    const requests = (s: typeof before, labels: Record<string, string>) => valueOf(s, 'billstream_http_requests_total', labels);
    expect(requests(after, { ...route, status: '200' }) - requests(before, { ...route, status: '200' })).toBe(5);
    expect(requests(after, { ...route, status: '401' }) - requests(before, { ...route, status: '401' })).toBe(1);
    const one = { service: 'gateway', method: 'GET', route: '/v1/customers/:id' };
    expect(requests(after, { ...one, status: '404' }) - requests(before, { ...one, status: '404' })).toBe(1);
    // The path's id never becomes a label.
    expect(after.some((s) => Object.values(s.labels).some((v) => v.includes('cus_does_not_exist')))).toBe(false);
    const count = (s: typeof before) => valueOf(s, 'billstream_http_request_duration_seconds_count', route);
    expect(count(after) - count(before)).toBe(6);
    expect(valueOf(after, 'billstream_http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(count(after));

    // The forwarded call is counted by the customer service under its own route template.
    const customer = await metricsOf('customer');
    expect(valueOf(customer, 'billstream_http_requests_total', { service: 'customer', route: '/v1/customers', status: '200' })).toBeGreaterThanOrEqual(5);
  });

  it('usage events: accepted at the gateway, stored by the aggregator, consumed from Kafka with the group lag exposed', async () => {
    const before = { gateway: await metricsOf('gateway'), aggregator: await metricsOf('ingestion-aggregator') };
    const events = Array.from({ length: 20 }, (_, i) => ({
      event_id: `obs-${Date.now()}-${i}`,
      event_name: 'api_call',
      external_customer_id: `obs-cust-${i % 3}`,
      timestamp: new Date().toISOString(),
    }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    const gateway = await metricsOf('gateway');
    expect(valueOf(gateway, 'billstream_ingestion_events_accepted_total') - valueOf(before.gateway, 'billstream_ingestion_events_accepted_total')).toBe(20);
    expect(
      valueOf(gateway, 'billstream_kafka_messages_published_total', { topic: 'usage-events' }) -
        valueOf(before.gateway, 'billstream_kafka_messages_published_total', { topic: 'usage-events' }),
    ).toBe(20);

    const group = { group: 'ingestion-aggregator.usage-events', topic: 'usage-events' };
    let aggregator = before.aggregator;
    await waitFor(
      async () => {
        aggregator = await metricsOf('ingestion-aggregator');
        return valueOf(aggregator, 'billstream_ingestion_events_stored_total', { result: 'stored' }) - valueOf(before.aggregator, 'billstream_ingestion_events_stored_total', { result: 'stored' }) === 20;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: '20 usage events stored' },
    );
    expect(valueOf(aggregator, 'billstream_kafka_messages_consumed_total', group) - valueOf(before.aggregator, 'billstream_kafka_messages_consumed_total', group)).toBeGreaterThanOrEqual(20);
    expect(valueOf(aggregator, 'billstream_kafka_batch_duration_seconds_count', group)).toBeGreaterThan(0);
    // The lag series of the group appears, and drains to 0 once its offsets are committed.
    await waitFor(
      async () => {
        const now = await metricsOf('ingestion-aggregator');
        return hasSeries(now, 'billstream_kafka_consumer_lag_messages', group) && valueOf(now, 'billstream_kafka_consumer_lag_messages', group) === 0;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the usage-events lag to drain to 0' },
    );
  });

  it('consumer lag grows while a group does not consume: the gauge counts the messages waiting for it', async () => {
    const group = { group: 'ingestion-aggregator.usage-events', topic: 'usage-events' };
    // Stopped, the group consumes nothing; its restarted process reports the lag from the broker while it rejoins.
    await stack.kill('ingestion-aggregator');
    const events = Array.from({ length: 15 }, (_, i) => ({
      event_id: `obs-lag-${Date.now()}-${i}`,
      event_name: 'api_call',
      external_customer_id: `obs-lag-${i % 2}`,
      timestamp: new Date().toISOString(),
    }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    await stack.restart('ingestion-aggregator');
    // Scraped right after the restart, before the restarted member rejoined and caught up, or after:
    // either the 15 waiting messages are counted, or they were consumed (lag back to 0 and 15 more stored).
    const seen: number[] = [];
    await waitFor(
      async () => {
        const now = await metricsOf('ingestion-aggregator');
        if (hasSeries(now, 'billstream_kafka_consumer_lag_messages', group)) seen.push(valueOf(now, 'billstream_kafka_consumer_lag_messages', group));
        return valueOf(now, 'billstream_ingestion_events_stored_total', { result: 'stored' }) >= 15 && seen.at(-1) === 0;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the restarted aggregator to catch up' },
    );
    expect(Math.max(...seen)).toBeGreaterThanOrEqual(15);
  });

  it('the outbox relay delay and backlog, and webhook failures, retries and the oldest pending delivery', async () => {
    const endpoint = await stack.api.post('/v1/webhook-endpoints', { url: failingUrl, events: ['customer.created'] });
    expect(endpoint.status).toBe(201);
    const before = { customer: await metricsOf('customer'), webhook: await metricsOf('webhook-dispatcher') };
    const created = await stack.api.post('/v1/customers', { external_customer_id: `obs-${Date.now()}`, name: 'Obs' });
    expect(created.status).toBe(201);

    const schema = { schema: 'customer' };
    await waitFor(
      async () =>
        valueOf(await metricsOf('customer'), 'billstream_outbox_published_total', schema) > valueOf(before.customer, 'billstream_outbox_published_total', schema),
      { timeoutMs: 20_000, intervalMs: 100, what: 'the customer outbox row to be published' },
    );
    const customer = await metricsOf('customer');
    expect(valueOf(customer, 'billstream_outbox_relay_delay_seconds_count', schema)).toBeGreaterThan(valueOf(before.customer, 'billstream_outbox_relay_delay_seconds_count', schema));
    expect(hasSeries(customer, 'billstream_outbox_backlog_messages', schema)).toBe(true);
    expect(hasSeries(customer, 'billstream_outbox_oldest_unpublished_age_seconds', schema)).toBe(true);

    let webhook = before.webhook;
    await waitFor(
      async () => {
        webhook = await metricsOf('webhook-dispatcher');
        return valueOf(webhook, 'billstream_webhook_delivery_attempts_total', { result: 'failure' }) > valueOf(before.webhook, 'billstream_webhook_delivery_attempts_total', { result: 'failure' });
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'a failed delivery attempt' },
    );
    expect(failingHits).toBeGreaterThanOrEqual(1);
    expect(valueOf(webhook, 'billstream_webhook_retries_scheduled_total')).toBeGreaterThan(valueOf(before.webhook, 'billstream_webhook_retries_scheduled_total'));
    // The retry is an hour away: the delivery stays pending and ages.
    expect(valueOf(webhook, 'billstream_webhook_pending_deliveries')).toBeGreaterThanOrEqual(1);
    expect(valueOf(webhook, 'billstream_webhook_oldest_pending_age_seconds')).toBeGreaterThan(0);
    expect(valueOf(webhook, 'billstream_kafka_messages_consumed_total', { topic: 'customer-events' })).toBeGreaterThan(0);
  });

  it('wallet debits are timed by result', async () => {
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `obs-w-${Date.now()}` });
    const wallet = await stack.api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', initial_credits_to_load: '2' });
    expect(wallet.status).toBe(201);
    const before = await metricsOf('wallet');
    expect((await stack.api.post(`/v1/wallets/${wallet.body.id}/debit`, { credits: '1', idempotency_key: 'obs-1' })).status).toBe(201);
    const refused = await stack.api.post(`/v1/wallets/${wallet.body.id}/debit`, { credits: '5', idempotency_key: 'obs-2' });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    const after = await metricsOf('wallet');
    const count = (s: typeof before, result: string) => valueOf(s, 'billstream_wallet_debit_duration_seconds_count', { result });
    expect(count(after, 'ok') - count(before, 'ok')).toBe(1);
    expect(count(after, 'refused') - count(before, 'refused')).toBe(1);
  });

  it('entitlement checks are counted by result; the projection counts what it applied and how late', async () => {
    const feature = await stack.api.post('/v1/features', { name: 'Obs', lookup_key: `obs-f-${Date.now()}`, type: 'BOOLEAN' });
    expect(feature.status).toBe(201);
    const plan = await stack.api.post('/v1/plans', { name: 'Obs', prices: [{ type: 'FIXED', currency: 'usd', amount: '1', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] });
    expect(plan.status).toBe(201);
    expect((await stack.api.post('/v1/entitlements', { plan_id: plan.body.id, feature_id: feature.body.id })).status).toBe(201);
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `obs-e-${Date.now()}` });
    const other = await stack.api.post('/v1/customers', { external_customer_id: `obs-e2-${Date.now()}` });
    expect((await stack.api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id })).status).toBe(201);
    const check = (customerId: string) => stack.api.post('/v1/entitlements/check', { customer_id: customerId, feature_lookup_key: feature.body.lookup_key });
    // The subscription reaches the check through billing-events (ADR 0061): wait until it is allowed.
    await waitFor(async () => (await check(customer.body.id)).body.allowed === true, { timeoutMs: 10_000, what: 'the subscription counted by the check' });
    const before = await metricsOf('entitlements');
    expect((await check(customer.body.id)).body.allowed).toBe(true);
    expect((await check(other.body.id)).body.allowed).toBe(false);
    const after = await metricsOf('entitlements');
    const checks = (s: typeof before, result: string) => valueOf(s, 'billstream_entitlement_checks_total', { result });
    expect(checks(after, 'allowed') - checks(before, 'allowed')).toBe(1);
    expect(checks(after, 'denied') - checks(before, 'denied')).toBe(1);
    for (const kind of ['feature', 'entitlement', 'subscription', 'customer']) expect(valueOf(after, 'billstream_entitlements_projection_applied_total', { kind })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'billstream_entitlements_projection_delay_seconds_count')).toBeGreaterThanOrEqual(4);
  });
});

import { waitFor } from '@billstream/testing';
import { awayFrom, nextUtcDay, nextUtcHour } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * The console overview's aggregates (issue #33), through the gateway on real Postgres and Kafka:
 * GET /v1/reports/billing_daily (billing), GET /v1/reports/webhook_failures (the webhook
 * dispatcher) and GET /v1/reports/events_hourly (the ingestion aggregator). Both are summed by the database and confined to the key's tenant.
 */
describe('overview reports (through the gateway)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_POLL_MS: '100' } } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const today = () => new Date().toISOString().slice(0, 10);

  it('sums invoiced (finalized, by day) and collected (succeeded payments, by day) per currency', async () => {
    // Finalized and queried on one UTC day (test-e2e/support/clock.ts): never across midnight.
    await awayFrom(nextUtcDay(), 20_000);
    const plan = await stack.api.post('/v1/plans', { name: 'Report plan', prices: [{ type: 'FIXED', currency: 'usd', amount: '12.5', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] });
    expect(plan.status).toBe(201);
    const invoices: Array<{ id: string; total: number }> = [];
    for (const ext of ['report-1', 'report-2']) {
      const c = await stack.api.post('/v1/customers', { external_customer_id: ext });
      expect((await stack.api.post('/v1/subscriptions', { customer_id: c.body.id, plan_id: plan.body.id })).status).toBe(201);
      const [draft] = (await stack.api.get(`/v1/invoices?customer_id=${c.body.id}`)).body.items;
      const finalized = draft.status === 'draft' ? (await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {})).body : draft;
      invoices.push(finalized);
    }
    expect(invoices.map((i) => i.total)).toEqual([1250, 1250]);
    const paid = await stack.api.post('/v1/payments', { invoice_id: invoices[0]!.id, amount: 1000, payment_method_type: 'OFFLINE' });
    expect(paid.status).toBe(201);
    if (paid.body.payment_status === 'pending') expect((await stack.api.post(`/v1/payments/${paid.body.id}/succeed`, {})).status).toBe(200);

    const res = await stack.api.get(`/v1/reports/billing_daily?start_date=${today()}&end_date=${today()}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ start_date: today(), end_date: today(), days: [{ date: today(), currency: 'usd', invoiced: 2500, collected: 1000 }] });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await stack.api.get(`/v1/reports/billing_daily?start_date=${yesterday}&end_date=${yesterday}`)).body.days).toEqual([]);
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await other.get(`/v1/reports/billing_daily?start_date=${today()}&end_date=${today()}`)).body.days).toEqual([]);
  });

  it('counts failed webhook attempts of the last hours, by endpoint', async () => {
    const dead = await stack.api.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/refused', events: ['customer.created'], description: 'nobody listens' });
    expect(dead.status).toBe(201);
    for (const ext of ['hooked-1', 'hooked-2']) expect((await stack.api.post('/v1/customers', { external_customer_id: ext })).status).toBe(201);
    const res = await waitFor(async () => {
      const r = await stack.api.get('/v1/reports/webhook_failures');
      return r.body.failed_attempts >= 2 ? r : undefined;
    }, { timeoutMs: 20_000, what: 'two failed attempts' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      since: expect.stringMatching(/Z$/),
      failed_attempts: 2,
      endpoints: [{ endpoint_id: dead.body.id, url: 'http://127.0.0.1:9/refused', failed_attempts: 2, last_failed_at: expect.stringMatching(/Z$/), last_error: expect.any(String) }],
    });
    expect(Date.now() - Date.parse(res.body.since)).toBeGreaterThanOrEqual(24 * 3_600_000 - 60_000);
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await other.get('/v1/reports/webhook_failures?hours=1')).body).toMatchObject({ failed_attempts: 0, endpoints: [] });
  });

  it('counts events stored per hour of receipt, duplicates once, without counting the events table', async () => {
    // Sent and counted in one hour: never across the hour's end.
    await awayFrom(nextUtcHour(), 20_000);
    const hour = `${new Date().toISOString().slice(0, 13)}:00:00.000Z`;
    const before = (await stack.api.get('/v1/reports/events_hourly?hours=1')).body.hours.find((h: { hour: string }) => h.hour === hour)?.events ?? 0;
    // A backdated timestamp counts in the hour it was received; a repeated event_id once.
    const ev = (id: string, timestamp = new Date().toISOString()) => ({ event_id: id, event_name: 'hourly', external_customer_id: 'hourly', timestamp });
    for (const e of [ev('h1'), ev('h2', '2026-01-15T08:00:00Z'), ev('h1'), ev('h3')]) expect((await stack.api.post('/v1/events', e)).status).toBe(202);
    await waitFor(async () => (await stack.api.post('/v1/events/query', { event_name: 'hourly' })).body.total_count === 3, { what: 'three events stored' });
    const res = await waitFor(async () => {
      const r = await stack.api.get('/v1/reports/events_hourly');
      const now = r.body.hours.find((h: { hour: string }) => h.hour === `${new Date().toISOString().slice(0, 13)}:00:00.000Z`);
      return now && now.events >= before + 3 ? r : undefined;
    }, { what: 'the hour counted' });
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.since) % 3_600_000).toBe(0);
    expect(Date.now() - Date.parse(res.body.since)).toBeGreaterThan(23 * 3_600_000);
    expect(Date.now() - Date.parse(res.body.since)).toBeLessThanOrEqual(24 * 3_600_000);
    const total = (await stack.api.get('/v1/events/monitoring')).body.total_events;
    expect(res.body.hours.reduce((sum: number, h: { events: number }) => sum + h.events, 0)).toBe(total);
    expect(res.body.hours.every((h: { hour: string; events: number }) => Date.parse(h.hour) >= Date.parse(res.body.since) && h.events > 0)).toBe(true);
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await other.get('/v1/reports/events_hourly?hours=720')).body.hours).toEqual([]);
  });

  it('refuses bad ranges with 400 naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/reports/billing_daily?start_date=2026-11-02&end_date=2026-11-01', 'end_date'],
      ['/v1/reports/billing_daily?start_date=2026-01-01&end_date=2026-06-01', 'end_date'],
      ['/v1/reports/billing_daily?start_date=2026-02-30&end_date=2026-03-01', 'start_date'],
      ['/v1/reports/billing_daily?end_date=2026-03-01', 'start_date'],
      ['/v1/reports/billing_daily?start_date=2026-03-01&end_date=2026-03-01&x=1', 'x'],
      ['/v1/reports/webhook_failures?hours=0', 'hours'],
      ['/v1/reports/webhook_failures?hours=721', 'hours'],
      ['/v1/reports/webhook_failures?hours=abc', 'hours'],
      ['/v1/reports/events_hourly?hours=0', 'hours'],
      ['/v1/reports/events_hourly?hours=1.5', 'hours'],
      ['/v1/reports/events_hourly?from=1', 'from'],
    ];
    for (const [path, field] of cases) {
      const res = await stack.api.get(path);
      expect({ path, status: res.status, field: res.body.error?.details?.field }).toEqual({ path, status: 400, field });
    }
  });
});

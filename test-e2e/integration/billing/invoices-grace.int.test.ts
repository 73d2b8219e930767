import { waitFor } from '@billstream/testing';
import { DAY, awayFromMonthEnd, isoZ, monthStart } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * BILLING_FINALIZE_DELAY, the grace window for late events (docs/api/billing.md#invoices): a draft
 * waits that long before the period job finalizes it, and its usage is read again then (and a
 * commitment's true-up computed again on it, ADR 0042). The closed period is last month, computed
 * from the real clock at each use (test-e2e/support/clock.ts), never across a month's end.
 */
describe('the finalize delay: late events of a closed period are billed (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY: '3s' } } });
  });
  beforeEach(() => awayFromMonthEnd(30_000));
  afterAll(async () => {
    await stack?.stop();
  });

  it('finalizes a draft only after the delay, with the usage that arrived meanwhile', async () => {
    const meterId = (await stack.api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } })).body.id;
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: 'late' })).body.id;
    const ingest = async (ids: string[]) => {
      const events = ids.map((id) => ({ event_id: id, event_name: 'api_call', external_customer_id: 'late', timestamp: isoZ(monthStart(-1) + 14 * DAY) }));
      expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    };
    const stored = (value: string) =>
      waitFor(
        async () => {
          const res = await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: 'late', start_time: isoZ(monthStart(-1)), end_time: isoZ(monthStart(0)) });
          return res.body.value === value;
        },
        { timeoutMs: 20_000, what: `usage ${value}` },
      );
    await ingest(['a', 'b', 'c', 'd']);
    await stored('4');
    const plan = await stack.api.post('/v1/plans', {
      name: 'Usage',
      prices: [{ type: 'USAGE', currency: 'usd', amount: '1', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meterId }],
    });
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: plan.body.id, start_date: isoZ(monthStart(-1)) });
    const [draft] = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items;
    expect(draft).toMatchObject({ status: 'draft', subtotal: 400 });

    // Late events of last month arrive inside the grace window.
    await ingest(['e', 'f', 'g']);
    await stored('7');
    expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).body.invoices_finalized).toBe(0);
    expect((await stack.api.get(`/v1/invoices/${draft.id}`)).body.status).toBe('draft');

    await new Promise((r) => setTimeout(r, 3_200));
    expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).body.invoices_finalized).toBe(1);
    const final = (await stack.api.get(`/v1/invoices/${draft.id}`)).body;
    expect(final).toMatchObject({ status: 'finalized', subtotal: 700, amount_due: 700, invoice_number: expect.stringMatching(/^INV-/) });
    expect(final.line_items).toEqual([expect.objectContaining({ quantity: '7', amount: 700 })]);

    // Events later than the finalization no longer change it.
    await ingest(['h']);
    await stored('8');
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    expect((await stack.api.get(`/v1/invoices/${draft.id}`)).body.subtotal).toBe(700);
  });

  it('computes a commitment true-up again on the usage repriced at finalization: never a stale amount', async () => {
    const meterId = (await stack.api.post('/v1/meters', { name: 'committed calls', event_name: 'committed_call', aggregation: { type: 'COUNT' } })).body.id;
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: 'late-commit' })).body.id;
    const plan = await stack.api.post('/v1/plans', {
      name: 'Committed',
      prices: [
        { type: 'FIXED', currency: 'usd', amount: '49', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' },
        { type: 'USAGE', currency: 'usd', amount: '0.5', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meterId },
      ],
    });
    // Last month closed with no usage yet: 6000 − 4900 (its ADVANCE charge, billed on the create invoice).
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: plan.body.id, start_date: isoZ(monthStart(-1)), commitment_amount: 6000 });
    expect(sub.status).toBe(201);
    const lastMonth = async () => {
      const items = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items as Array<{ id: string; billing_reason: string; status: string; subtotal: number; line_items: Array<{ line_type: string; amount: number }> }>;
      return items.find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
    };
    const draft = await lastMonth();
    expect([draft.status, draft.line_items.map((l) => [l.line_type, l.amount])]).toEqual([
      'draft',
      [
        ['CHARGE', 0],
        ['CHARGE', 4900],
        ['COMMITMENT_TRUE_UP', 1100],
      ],
    ]);

    // 10 calls of last month (500) arrive inside the grace window: the true-up falls to 600.
    const events = Array.from({ length: 10 }, (_, i) => ({ event_id: `late-commit-${i}`, event_name: 'committed_call', external_customer_id: 'late-commit', timestamp: isoZ(monthStart(-1) + 14 * DAY) }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(
      async () => (await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: 'late-commit', start_time: isoZ(monthStart(-1)), end_time: isoZ(monthStart(0)) })).body.value === '10',
      { timeoutMs: 20_000, what: 'usage 10' },
    );
    await new Promise((r) => setTimeout(r, 3_200));
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    const final = await lastMonth();
    expect(final.id).toBe(draft.id);
    expect([final.status, final.subtotal, final.line_items.map((l) => [l.line_type, l.amount])]).toEqual([
      'finalized',
      6000,
      [
        ['CHARGE', 500],
        ['CHARGE', 4900],
        ['COMMITMENT_TRUE_UP', 600],
      ],
    ]);
  });
});

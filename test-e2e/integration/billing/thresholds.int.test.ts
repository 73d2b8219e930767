import { waitFor } from '@billstream/testing';
import { isoZ, monthStart } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice, usagePrice } from './prices';

/**
 * Progressive (threshold) billing (docs/api/thresholds.md, ADR 0046) as a client meets it:
 * through the gateway, on the whole stack with real Postgres and Kafka. The plan bills 1.00 a
 * call (FLAT_FEE: it may be billed at a threshold) and 0.10 a call in VOLUME tiers (it waits for
 * the period's end), plus 10.00 in advance. Thresholds count both (the period-to-date usage
 * amount); threshold invoices carry the first only.
 */
interface Line {
  price_id: string | null;
  line_type: string;
  amount: number;
  quantity: string;
}
interface Invoice {
  id: string;
  billing_reason: string;
  status: string;
  subtotal: number;
  total: number;
  period_start: string;
  line_items: Line[];
}

describe('threshold billing through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let meterId: string;
  let plan: { id: string; flatId: string; volumeId: string };
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({
      extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '100' } },
    });
    meterId = (await stack.api.post('/v1/meters', { name: 'threshold calls', event_name: 'thr_call', aggregation: { type: 'COUNT' } })).body.id;
    const volume = usagePrice(meterId, { amount: undefined, billing_model: 'TIERED', tier_mode: 'VOLUME', tiers: [{ up_to: null, unit_amount: '0.1' }] });
    const res = await stack.api.post('/v1/plans', { name: 'Metered', prices: [{ ...fixedPrice, amount: '10' }, usagePrice(meterId, { amount: '1' }), volume] });
    expect(res.status).toBe(201);
    const prices = res.body.prices as Array<{ id: string; type: string; billing_model: string }>;
    plan = { id: res.body.id, flatId: prices.find((p) => p.billing_model === 'FLAT_FEE' && p.type === 'USAGE')!.id, volumeId: prices.find((p) => p.billing_model === 'TIERED')!.id };
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function subscriber(thresholds: number[]) {
    const externalId = `thr-${++n}-${Date.now()}`;
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: externalId })).body.id as string;
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: plan.id, usage_thresholds: thresholds.map((amount) => ({ amount })) });
    expect(sub.status).toBe(201);
    return { id: sub.body.id as string, externalId, sent: 0 };
  }
  async function calls(c: { externalId: string; sent: number }, count: number): Promise<void> {
    const events = Array.from({ length: count }, (_, i) => ({ event_name: 'thr_call', external_customer_id: c.externalId, timestamp: new Date().toISOString(), event_id: `${c.externalId}-${c.sent + i}` }));
    c.sent += count;
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(
      async () =>
        Number((await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: c.externalId, start_time: isoZ(monthStart(-1)), end_time: isoZ(monthStart(2)) })).body.value) >= c.sent,
      { timeoutMs: 20_000, what: `${c.sent} calls stored` },
    );
  }
  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  const thresholdInvoices = async (id: string): Promise<Invoice[]> =>
    ((await stack.api.get(`/v1/invoices?subscription_id=${id}&limit=100`)).body.items as Invoice[]).filter((i) => i.billing_reason === 'SUBSCRIPTION_THRESHOLD');
  const shape = (i: Invoice) => i.line_items.map((l) => [l.line_type, l.price_id, l.amount]);
  const DAY = 86_400_000;

  it('bills the eligible usage to date once per crossing, the highest of several at once, and deducts it on the closing invoice', async () => {
    const c = await subscriber([500, 1000, 2000]);
    expect((await stack.api.get(`/v1/subscriptions/${c.id}`)).body.usage_thresholds).toEqual([{ amount: 500 }, { amount: 1000 }, { amount: 2000 }]);
    await calls(c, 3);
    await cron();
    expect(await thresholdInvoices(c.id)).toEqual([]);

    // 6 calls: 600 + 60 crosses 500. Runs racing (two period jobs) make one invoice.
    await calls(c, 3);
    await Promise.all([cron(), cron()]);
    await cron();
    const [first, ...none] = await thresholdInvoices(c.id);
    expect(none).toEqual([]);
    expect(shape(first!)).toEqual([['CHARGE', plan.flatId, 600]]);

    // 21 calls: 2100 + 210 crosses 1000 and 2000 at once: one invoice, the usage to date less what the first billed.
    await calls(c, 15);
    await cron();
    await cron();
    const all = await thresholdInvoices(c.id);
    expect(all).toHaveLength(2);
    const second = all.find((i) => i.id !== first!.id)!;
    expect(shape(second)).toEqual([
      ['CHARGE', plan.flatId, 2100],
      ['THRESHOLD_DEDUCTION', plan.flatId, -600],
    ]);
    expect(second.subtotal).toBe(1500);

    // A voided threshold invoice's usage goes to the closing invoice: only the first's 600 is deducted there.
    expect((await stack.api.post(`/v1/invoices/${second.id}/void`, {})).status).toBe(200);
    expect((await stack.api.post(`/v1/subscriptions/${c.id}/cancel`, {})).status).toBe(200);
    const closing = ((await stack.api.get(`/v1/invoices?subscription_id=${c.id}&limit=100`)).body.items as Invoice[]).find((i) => i.billing_reason === 'SUBSCRIPTION_CANCEL')!;
    expect(shape(closing)).toEqual([
      ['CHARGE', plan.flatId, 2100],
      ['CHARGE', plan.volumeId, 210],
      ['THRESHOLD_DEDUCTION', plan.flatId, -600],
    ]);
    expect(closing.subtotal).toBe(2100 + 210 - 600);
  });

  it('usage notices issue the invoice without the period job; a change takes new thresholds; bad thresholds are refused', async () => {
    const c = await subscriber([150]);
    await calls(c, 2);
    // 200 + 20 crosses 150: the usage notice's check makes the invoice (the period job is off).
    const [made] = await waitFor(async () => {
      const found = await thresholdInvoices(c.id);
      return found.length === 1 && found;
    }, { timeoutMs: 15_000, what: 'a threshold invoice from the usage notices' });
    expect(shape(made!)).toEqual([['CHARGE', plan.flatId, 200]]);

    const bad = await stack.api.post('/v1/subscriptions', { customer_id: (await stack.api.post('/v1/customers', { external_customer_id: `thr-bad-${Date.now()}` })).body.id, plan_id: plan.id, usage_thresholds: [{ amount: 500 }, { amount: 500 }] });
    expect([bad.status, bad.body.error.details.field]).toEqual([400, 'usage_thresholds.1.amount']);

    const other = (await stack.api.post('/v1/plans', { name: 'Metered 2', prices: [{ ...fixedPrice, amount: '20' }, usagePrice(meterId, { amount: '2' })] })).body;
    // The change happens at its call's whole second (docs/adr/0057-invoicing-edges.md): usage stamped in
    // that second is the new plan's. The calls above are the old plan's: change in a later second.
    await new Promise((r) => setTimeout(r, 1_010 - (Date.now() % 1_000)));
    const changed = await stack.api.post(`/v1/subscriptions/${c.id}/change`, { plan_id: other.id, usage_thresholds: [{ amount: 1000 }] });
    expect(changed.status).toBe(200);
    expect(changed.body.subscription.usage_thresholds).toEqual([{ amount: 1000 }]);
    // The change's invoice bills the old plan's usage up to now less what the threshold invoice billed.
    expect(shape(changed.body.invoice)).toEqual(
      expect.arrayContaining([
        ['CHARGE', plan.flatId, 200],
        ['THRESHOLD_DEDUCTION', plan.flatId, -200],
      ]),
    );
  });

  it('thresholds given on a period-end change take effect only at the period end: the old ones until the period job crosses it, the new ones after', async () => {
    const daily = { billing_period: 'DAILY' };
    const dailyPlan = async (name: string, fixed: string) => {
      const res = await stack.api.post('/v1/plans', { name, prices: [{ ...fixedPrice, ...daily, amount: fixed }, usagePrice(meterId, { ...daily, amount: '1' })] });
      expect(res.status).toBe(201);
      const prices = res.body.prices as Array<{ id: string; type: string }>;
      return { id: res.body.id as string, fixedId: prices.find((p) => p.type === 'FIXED')!.id, usageId: prices.find((p) => p.type === 'USAGE')!.id };
    };
    const d1 = await dailyPlan('Daily metered', '10');
    const d2 = await dailyPlan('Daily metered pro', '20');
    const externalId = `thr-${++n}-${Date.now()}`;
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: externalId })).body.id as string;
    // Anniversary DAILY from almost a day ago: the period ends in 30 s. Old thresholds: 10.00.
    const created = await stack.api.post('/v1/subscriptions', {
      customer_id: customerId,
      plan_id: d1.id,
      start_date: new Date(Date.now() - DAY + 30_000).toISOString(),
      usage_thresholds: [{ amount: 1000 }],
    });
    expect(created.status).toBe(201);
    const c = { id: created.body.id as string, externalId, sent: 0 };
    const periodEnd = created.body.current_period_end as string;

    // New thresholds (3.00) with a change at the period end: pending, the subscription keeps 10.00.
    const changed = await stack.api.post(`/v1/subscriptions/${c.id}/change`, { plan_id: d2.id, effective: 'period_end', usage_thresholds: [{ amount: 300 }] });
    expect(changed.status).toBe(200);
    expect(changed.body.invoice).toBeNull();
    expect(changed.body.subscription).toMatchObject({ plan_id: d1.id, usage_thresholds: [{ amount: 1000 }], pending_change: { plan_id: d2.id, effective_at: periodEnd, usage_thresholds: [{ amount: 300 }] } });

    // 5 calls: 5.00 crosses the new 3.00 but not the old 10.00: no threshold invoice before the end (period job and notices).
    await calls(c, 5);
    expect(Date.now()).toBeLessThan(Date.parse(periodEnd));
    await cron();
    expect(Date.now()).toBeLessThan(Date.parse(periodEnd));
    expect(await thresholdInvoices(c.id)).toEqual([]);

    // The period job crosses the end: the cycle invoice bills the old period's 5.00, the change applies with its thresholds.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(periodEnd) - Date.now() + 500)));
    await cron();
    const after = (await stack.api.get(`/v1/subscriptions/${c.id}`)).body;
    expect(after).toMatchObject({ plan_id: d2.id, usage_thresholds: [{ amount: 300 }], pending_change: null, current_period_start: periodEnd });
    const all = (await stack.api.get(`/v1/invoices?subscription_id=${c.id}&limit=100`)).body.items as Invoice[];
    const cycle = all.filter((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE');
    expect(cycle).toHaveLength(1);
    expect(shape(cycle[0]!)).toEqual([
      ['CHARGE', d1.usageId, 500],
      ['CHARGE', d2.fixedId, 2000],
    ]);
    expect(await thresholdInvoices(c.id)).toEqual([]);

    // The new period: 2.00 is under 3.00; 3.00 crosses it: one threshold invoice of the new plan's usage from the period start.
    await calls(c, 2);
    await cron();
    expect(await thresholdInvoices(c.id)).toEqual([]);
    await calls(c, 1);
    await cron();
    await cron();
    const [made, ...none] = await thresholdInvoices(c.id);
    expect(none).toEqual([]);
    expect(made).toMatchObject({ period_start: periodEnd, subtotal: 300 });
    expect(shape(made!)).toEqual([['CHARGE', d2.usageId, 300]]);
  }, 90_000);
});

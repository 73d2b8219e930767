import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { paidInFull } from '../../support/payments';

/**
 * Edges of invoicing a period as a client meets them, through the gateway on the whole stack
 * with real Postgres and Kafka: negative usage of a SUM meter (docs/api/usage-events.md, ADR
 * 0057), a FIXED_AMOUNT coupon's allowance per billed period across every invoice of the period
 * (docs/api/coupons.md, ADR 0040), and the instant of an immediate plan change and the usage
 * after it (docs/api/plan-changes.md, ADR 0043). A "next period" is made real by DAILY
 * subscriptions started a day minus a few seconds ago; the period job runs by
 * POST /v1/cron/bill-subscriptions.
 */
const DAY = 86_400_000;
const daily = (amount: string, cadence = 'ADVANCE') => ({ type: 'FIXED', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'DAILY', invoice_cadence: cadence });
const monthly = (amount: string) => ({ ...daily(amount), billing_period: 'MONTHLY' });
const perUnit = (meterId: string, amount: string, billingPeriod = 'DAILY') => ({
  type: 'USAGE',
  currency: 'usd',
  amount,
  billing_model: 'FLAT_FEE',
  billing_period: billingPeriod,
  invoice_cadence: 'ARREAR',
  meter_id: meterId,
});

interface Line {
  price_id: string | null;
  price_type: string;
  line_type: string;
  quantity: string;
  amount: number;
  discount_amount: number;
  period_start: string;
  period_end: string;
}
interface Invoice {
  id: string;
  billing_reason: string;
  period_start: string;
  period_end: string;
  subtotal: number;
  total_discount: number;
  total: number;
  line_items: Line[];
}

describe('invoicing edges through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let sumMeter: string;
  let countMeter: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({
      extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '250' } },
    });
    sumMeter = (await stack.api.post('/v1/meters', { name: 'tokens', event_name: 'edge_tokens', aggregation: { type: 'SUM', field: 'tokens' } })).body.id;
    countMeter = (await stack.api.post('/v1/meters', { name: 'calls', event_name: 'edge_call', aggregation: { type: 'COUNT' } })).body.id;
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  });
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
  });

  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  async function customer(): Promise<{ id: string; externalId: string }> {
    const externalId = `edges-${++n}-${Date.now()}`;
    const res = await stack.api.post('/v1/customers', { external_customer_id: externalId });
    expect(res.status).toBe(201);
    return { id: res.body.id, externalId };
  }
  async function plan(prices: unknown[]): Promise<{ id: string; prices: Array<{ id: string; type: string }> }> {
    const res = await stack.api.post('/v1/plans', { name: 'Edges', prices });
    expect(res.status).toBe(201);
    return res.body;
  }
  async function subscribe(body: Record<string, unknown>): Promise<{ id: string; current_period_start: string; current_period_end: string }> {
    const res = await stack.api.post('/v1/subscriptions', body);
    expect(res.status).toBe(201);
    return res.body;
  }
  const invoicesOf = async (subscriptionId: string): Promise<Invoice[]> => {
    const res = await stack.api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`);
    expect(res.status).toBe(200);
    return (res.body.items as Invoice[]).sort((a, b) => a.period_start.localeCompare(b.period_start) || a.period_end.localeCompare(b.period_end));
  };
  /** Sends events and waits until the meter over [from, to) shows `expected`. */
  async function send(meterId: string, externalId: string, events: Array<Record<string, unknown>>, from: string, to: string, expected: string): Promise<void> {
    expect((await stack.api.post('/v1/events/bulk', { events: events.map((e) => ({ external_customer_id: externalId, ...e })) })).status).toBe(202);
    await waitFor(async () => (await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: externalId, start_time: from, end_time: to })).body.value === expected, {
      timeoutMs: 20_000,
      what: `usage ${expected} of ${externalId}`,
    });
  }
  const usageLine = (i: { line_items: Line[] }, priceId: string) => i.line_items.filter((l) => l.price_id === priceId && l.line_type === 'CHARGE');

  describe('c. a negative value of a SUM meter', () => {
    it('is summed as sent; a negative total bills 0, and cancel, the upcoming invoice and the period end all invoice', async () => {
      const p = await plan([daily('10'), perUnit(sumMeter, '0.5')]);
      const [fixed, usage] = [p.prices.find((x) => x.type === 'FIXED')!.id, p.prices.find((x) => x.type === 'USAGE')!.id];
      // Its first period ends a few seconds from now.
      const start = new Date(Date.now() - DAY + 8_000);
      const c1 = await customer();
      const s1 = await subscribe({ customer_id: c1.id, plan_id: p.id, start_date: start.toISOString() });
      const c2 = await customer();
      const s2 = await subscribe({ customer_id: c2.id, plan_id: p.id, start_date: start.toISOString() });
      const at = new Date(start.getTime() + 60_000).toISOString();
      const [from, to] = [start.toISOString(), new Date(start.getTime() + DAY).toISOString()];
      // One customer's total is negative (3 - 10), the other's positive with a negative event in it (10 - 4).
      await send(sumMeter, c1.externalId, [{ event_name: 'edge_tokens', timestamp: at, properties: { tokens: 3 } }, { event_name: 'edge_tokens', timestamp: at, properties: { tokens: -10 } }], from, to, '-7');
      await send(sumMeter, c2.externalId, [{ event_name: 'edge_tokens', timestamp: at, properties: { tokens: '10' } }, { event_name: 'edge_tokens', timestamp: at, properties: { tokens: '-4' } }], from, to, '6');

      const up1 = await stack.api.get(`/v1/subscriptions/${s1.id}/upcoming-invoice`);
      expect(up1.status).toBe(200);
      expect(usageLine(up1.body, usage)).toEqual([expect.objectContaining({ quantity: '0', amount: 0 })]);
      const up2 = await stack.api.get(`/v1/subscriptions/${s2.id}/upcoming-invoice`);
      expect(up2.status).toBe(200);
      expect(usageLine(up2.body, usage)).toEqual([expect.objectContaining({ quantity: '6', amount: 300 })]);
      // The current period's usage: the same billed quantities.
      const u1 = await stack.api.get(`/v1/subscriptions/${s1.id}/usage`);
      expect(u1.status).toBe(200);
      expect(u1.body.amount).toBe(0);

      // The period end: the cycle invoice bills the usage (0 and 3.00) and the next period's fixed fee.
      await new Promise((r) => setTimeout(r, Math.max(0, start.getTime() + DAY - Date.now() + 500)));
      await cron();
      const cycle1 = (await invoicesOf(s1.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
      expect(cycle1.line_items.map((l) => [l.price_id, l.quantity, l.amount])).toEqual([
        [usage, '0', 0],
        [fixed, '1', 1000],
      ]);
      expect(cycle1.total).toBe(1000);
      const cycle2 = (await invoicesOf(s2.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
      expect(cycle2.line_items.map((l) => [l.price_id, l.quantity, l.amount])).toEqual([
        [usage, '6', 300],
        [fixed, '1', 1000],
      ]);

      // A negative total in the new period: an immediate cancel invoices it (0 of usage).
      const later = new Date(Date.parse(s1.current_period_end) + 1_000).toISOString();
      await send(sumMeter, c1.externalId, [{ event_name: 'edge_tokens', timestamp: later, properties: { tokens: -2.5 } }], s1.current_period_end, new Date(Date.parse(s1.current_period_end) + DAY).toISOString(), '-2.5');
      const cancel = await stack.api.post(`/v1/subscriptions/${s1.id}/cancel`, { cancel_at: 'immediately' });
      expect(cancel.status).toBe(200);
      const cancelled = (await invoicesOf(s1.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CANCEL')!;
      expect(usageLine(cancelled, usage)).toEqual([expect.objectContaining({ quantity: '0', amount: 0 })]);
    }, 60_000);
  });

  describe('d. a FIXED_AMOUNT coupon', () => {
    it('takes at most amount_off of each period across its invoices: the cycle invoice finds nothing left of the period the create invoice used', async () => {
      const p = await plan([daily('10'), perUnit(countMeter, '1')]);
      const [fixed, usage] = [p.prices.find((x) => x.type === 'FIXED')!.id, p.prices.find((x) => x.type === 'USAGE')!.id];
      const coupon = await stack.api.post('/v1/coupons', { name: 'Five off', type: 'FIXED_AMOUNT', amount_off: 500, currency: 'usd', duration: 'FOREVER' });
      expect(coupon.status).toBe(201);
      const start = new Date(Date.now() - DAY + 6_000);
      const c = await customer();
      const sub = await subscribe({ customer_id: c.id, plan_id: p.id, start_date: start.toISOString(), discounts: [{ coupon_id: coupon.body.id }] });
      const [created] = await invoicesOf(sub.id);
      // P1's create invoice: 10.00 less the whole 5.00 of P1.
      expect(created).toMatchObject({ billing_reason: 'SUBSCRIPTION_CREATE', subtotal: 1000, total_discount: 500, total: 500 });
      const at = new Date(start.getTime() + 60_000).toISOString();
      await send(countMeter, c.externalId, [0, 1, 2, 3].map((i) => ({ event_name: 'edge_call', timestamp: at, event_id: `${c.externalId}-${i}` })), start.toISOString(), new Date(start.getTime() + DAY).toISOString(), '4');
      await new Promise((r) => setTimeout(r, Math.max(0, start.getTime() + DAY - Date.now() + 500)));
      await cron();
      const cycle = (await invoicesOf(sub.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
      // P1's usage (4.00) has nothing of P1's 5.00 left; P2's fee takes P2's 5.00.
      expect(cycle.line_items.map((l) => [l.price_id, l.amount, l.discount_amount])).toEqual([
        [usage, 400, 0],
        [fixed, 1000, 500],
      ]);
      expect(cycle).toMatchObject({ subtotal: 1400, total_discount: 500, total: 900 });
      // P2 is used up: its upcoming invoice (P2's usage, P3's fee) takes 5.00 of P3 only.
      await send(countMeter, c.externalId, [{ event_name: 'edge_call', timestamp: new Date(start.getTime() + DAY + 1_000).toISOString(), event_id: `${c.externalId}-p2` }], new Date(start.getTime() + DAY).toISOString(), new Date(start.getTime() + 2 * DAY).toISOString(), '1');
      const upcoming = await stack.api.get(`/v1/subscriptions/${sub.id}/upcoming-invoice`);
      expect(upcoming.status).toBe(200);
      expect((upcoming.body.line_items as Line[]).map((l) => [l.price_id, l.amount, l.discount_amount])).toEqual([
        [usage, 100, 0],
        [fixed, 1000, 500],
      ]);
    }, 60_000);
  });

  describe('e and f. an immediate plan change', () => {
    it('is one instant, a whole second: the change invoice ends where the new period starts, in the answer, the stored invoice, the subscription and the events', async () => {
      const a = await plan([monthly('30'), perUnit(countMeter, '1', 'MONTHLY')]);
      const b = await plan([daily('2'), perUnit(countMeter, '0.5')]);
      const c = await customer();
      const sub = await subscribe({ customer_id: c.id, plan_id: a.id, start_date: new Date(Date.now() - 3 * DAY).toISOString() });
      // Paid, so the fee's unused time is a proration credit on the change invoice (ADR 0056).
      await paidInFull(stack.api, sub.id);
      const preview = await stack.api.post(`/v1/subscriptions/${sub.id}/change/preview`, { plan_id: b.id });
      expect(preview.status).toBe(200);
      expect(preview.body.invoice.period_end).toBe(preview.body.subscription.effective_at);
      expect(preview.body.subscription.current_period_start).toBe(preview.body.subscription.effective_at);
      expect(preview.body.subscription.effective_at).toMatch(/T\d\d:\d\d:\d\d\.000Z$/);
      const before = Date.now();
      const res = await stack.api.post(`/v1/subscriptions/${sub.id}/change`, { plan_id: b.id });
      expect(res.status).toBe(200);
      const { subscription, invoice } = res.body as { subscription: { current_period_start: string }; invoice: Invoice };
      const at = subscription.current_period_start;
      // The call's whole second.
      expect(at).toMatch(/T\d\d:\d\d:\d\d\.000Z$/);
      expect(Date.parse(at)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());
      expect(invoice.period_end).toBe(at);
      const stored = (await stack.api.get(`/v1/invoices/${invoice.id}`)).body as Invoice;
      expect(stored.period_end).toBe(at);
      expect((await stack.api.get(`/v1/subscriptions/${sub.id}`)).body.current_period_start).toBe(at);
      // The old plan's usage ends there; its fee's unused time and the new period's fee start there.
      expect(stored.line_items.map((l) => [l.line_type, l.price_type, l.period_start === at ? 'from' : l.period_end === at ? 'to' : 'neither'])).toEqual([
        ['CHARGE', 'USAGE', 'to'],
        ['CHARGE', 'FIXED', 'from'],
        ['PRORATION_CREDIT', 'FIXED', 'from'],
      ]);
      // The events (and so the webhooks) carry the same instant.
      const events = (await billingDb('outbox').whereIn('message_key', [sub.id, invoice.id]).orderBy('id')).map((e: { value: string }) => JSON.parse(e.value) as { type: string; payload: Record<string, Record<string, string>> });
      const updated = events.filter((e) => e.type === 'subscription.updated').at(-1)!;
      expect(updated.payload.subscription!.current_period_start).toBe(at);
      const drafted = events.find((e) => e.type === 'invoice.create.drafted')!;
      expect(drafted.payload.invoice!.period_end).toBe(at);
    });

    it.each([
      ['the same billing period', 'MONTHLY'],
      ['another billing period', 'DAILY'],
    ])('counts the usage sent after it on the new usage price of the upcoming invoice (%s)', async (_, period) => {
      const a = await plan([monthly('30'), perUnit(countMeter, '1', 'MONTHLY')]);
      const b = await plan([period === 'DAILY' ? daily('2') : monthly('60'), perUnit(countMeter, '0.25', period)]);
      const newUsage = b.prices.find((x) => x.type === 'USAGE')!.id;
      const c = await customer();
      const sub = await subscribe({ customer_id: c.id, plan_id: a.id, start_date: new Date(Date.now() - 2 * DAY).toISOString() });
      const res = await stack.api.post(`/v1/subscriptions/${sub.id}/change`, { plan_id: b.id });
      expect(res.status).toBe(200);
      const changedAt = res.body.invoice.period_end as string;
      // Three calls right after the change, stamped by a client's clock in seconds (the change's own second), and one a moment later in ms.
      const second = changedAt.slice(0, 19) + 'Z';
      const events = [
        ...[0, 1, 2].map((i) => ({ event_name: 'edge_call', timestamp: second, event_id: `${c.externalId}-after-${i}` })),
        { event_name: 'edge_call', timestamp: new Date().toISOString(), event_id: `${c.externalId}-after-ms` },
      ];
      await send(countMeter, c.externalId, events, changedAt, new Date(Date.now() + DAY).toISOString(), '4');
      const upcoming = await stack.api.get(`/v1/subscriptions/${sub.id}/upcoming-invoice`);
      expect(upcoming.status).toBe(200);
      expect(usageLine(upcoming.body, newUsage)).toEqual([expect.objectContaining({ quantity: '4', amount: 100, period_start: changedAt })]);
      // And none of them on the change invoice's old usage line.
      expect(res.body.invoice.line_items.filter((l: Line) => l.price_type === 'USAGE').map((l: Line) => l.quantity)).toEqual(['0']);
    });
  });
});

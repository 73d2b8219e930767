import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { DAY, awayFromMonthEnd, iso, isoZ, monthStart, monthlyPeriodAround, ymd } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice, usagePrice } from './prices';

/**
 * Minimum commitments and price overrides (docs/api/billing.md#minimum-commitments, docs/api/billing.md#price-overrides, ADR 0042) as a client meets them: through the
 * gateway, on the whole stack with real Postgres and Kafka. A backdated MONTHLY subscription
 * (from the first of the month three months before the run's, test-e2e/support/clock.ts) makes
 * every past period's invoice at its creation; the period job's
 * schedule is off and POST /v1/cron/bill-subscriptions finalizes them (repricing their usage).
 * Prices: 49.00 ADVANCE (4900) and 0.50 a call in ARREAR.
 */

interface Line {
  price_id: string | null;
  price_type: string;
  line_type: string;
  amount: number;
  discount_amount: number;
  net_amount: number;
  description: string;
  period_start: string;
  period_end: string;
  proration_factor?: string;
}
interface Invoice {
  id: string;
  billing_reason: string;
  status: string;
  period_start: string;
  period_end: string;
  subtotal: number;
  total_discount: number;
  total: number;
  line_items: Line[];
}

describe('minimum commitments and price overrides through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let meterId: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    meterId = (await stack.api.post('/v1/meters', { name: 'commit calls', event_name: 'commit_call', aggregation: { type: 'COUNT' } })).body.id;
  });
  // The months above are computed at each use from the real clock: never across a month's end.
  beforeEach(() => awayFromMonthEnd(30_000));
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
  });

  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  const trueUps = (i: Invoice) => i.line_items.filter((l) => l.line_type === 'COMMITMENT_TRUE_UP');
  const fieldOf = (res: { status: number; body: { error?: { internal_error: string; details?: { field?: string } } } }) => [res.status, res.body.error?.internal_error, res.body.error?.details?.field];

  async function customer(): Promise<{ id: string; externalId: string }> {
    const externalId = `commit-${++n}-${Date.now()}`;
    const res = await stack.api.post('/v1/customers', { external_customer_id: externalId });
    expect(res.status).toBe(201);
    return { id: res.body.id, externalId };
  }
  async function plan(usage: Record<string, unknown> = {}): Promise<{ id: string; fixedId: string; usageId: string }> {
    const res = await stack.api.post('/v1/plans', { name: 'Committed', prices: [fixedPrice, { ...usagePrice(meterId), ...usage }] });
    expect(res.status).toBe(201);
    const prices = res.body.prices as Array<{ id: string; type: string }>;
    return { id: res.body.id, fixedId: prices.find((p) => p.type === 'FIXED')!.id, usageId: prices.find((p) => p.type === 'USAGE')!.id };
  }
  /** VOLUME tiers of the plan: 2.00 a call from the 6th (10 calls: 2000). */
  const tieredUsage = { amount: undefined, billing_model: 'TIERED', tier_mode: 'VOLUME', tiers: [{ up_to: '5', unit_amount: '1' }, { up_to: null, unit_amount: '2' }] };
  /** The override's: 0.20 a call from the 6th (10 calls: 200), 0.10 up to 5 (3 calls: 30). */
  const cheapTiers = [{ up_to: '5', unit_amount: '0.1' }, { up_to: null, unit_amount: '0.2' }];
  /** 10 calls in the second month (two months before the run's; 500), stored before the subscription bills them. */
  async function septemberUsage(externalId: string): Promise<void> {
    const at = isoZ(monthStart(-2) + 9.5 * DAY);
    const events = Array.from({ length: 10 }, (_, i) => ({ event_name: 'commit_call', external_customer_id: externalId, timestamp: at, event_id: `${externalId}-${i}` }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(
      async () => (await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: externalId, start_time: isoZ(monthStart(-2)), end_time: isoZ(monthStart(-1)) })).body.value === '10',
      { timeoutMs: 20_000, what: `usage of ${externalId}` },
    );
  }
  async function subscribe(body: Record<string, unknown>) {
    const res = await stack.api.post('/v1/subscriptions', body);
    expect(res.status).toBe(201);
    return res.body as { id: string; commitment_amount: number | null; current_period_start: string };
  }
  const invoicesOf = async (subscriptionId: string): Promise<Invoice[]> => {
    const res = await stack.api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`);
    expect(res.status).toBe(200);
    return (res.body.items as Invoice[]).sort((a, b) => a.period_start.localeCompare(b.period_start) || a.billing_reason.localeCompare(b.billing_reason));
  };
  /** Each invoice as [reason, period start day, subtotal, true-up amounts]. */
  const shape = (invoices: Invoice[]) => invoices.map((i) => [i.billing_reason, i.period_start.slice(0, 10), i.subtotal, trueUps(i).map((l) => l.amount)]);

  it('adds a true-up line of exactly commitment − period charges to each closing invoice, none when charges exceed it, and keeps it through finalization', async () => {
    const p = await plan();
    const above = await customer();
    const below = await customer();
    await septemberUsage(above.externalId);
    await septemberUsage(below.externalId);

    // 6000 a month: the first month billed 4900 (ADVANCE, on the create invoice), the second 4900 + 500 of usage, the third 4900.
    const sub = await subscribe({ customer_id: above.id, plan_id: p.id, start_date: isoZ(monthStart(-3)), commitment_amount: 6000 });
    expect(sub.commitment_amount).toBe(6000);
    expect((await stack.api.get(`/v1/subscriptions/${sub.id}`)).body.commitment_amount).toBe(6000);
    const expected = [
      ['SUBSCRIPTION_CREATE', ymd(monthStart(-3)), 4900, []],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-3)), 4900 + 1100, [1100]],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-2)), 500 + 4900 + 600, [600]],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-1)), 4900 + 1100, [1100]],
    ];
    const drafts = await invoicesOf(sub.id);
    expect(shape(drafts)).toEqual(expected);
    const september = drafts[2]!;
    expect(september.line_items.at(-1)).toMatchObject({
      price_id: null,
      price_type: 'FIXED',
      line_type: 'COMMITMENT_TRUE_UP',
      amount: 600,
      net_amount: 600,
      period_start: iso(monthStart(-2)),
      period_end: iso(monthStart(-1)),
      description: expect.stringContaining('Minimum commitment true-up'),
    });
    expect(september.line_items.at(-1)!.proration_factor).toBeUndefined();

    // 5000 a month: the second month's 5400 is above it, so it has no true-up.
    const low = await subscribe({ customer_id: below.id, plan_id: p.id, start_date: isoZ(monthStart(-3)), commitment_amount: 5000 });
    expect(shape(await invoicesOf(low.id))).toEqual([
      ['SUBSCRIPTION_CREATE', ymd(monthStart(-3)), 4900, []],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-3)), 4900 + 100, [100]],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-2)), 500 + 4900, []],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-1)), 4900 + 100, [100]],
    ]);

    // Finalization reprices the usage and computes the true-up again: the same amounts, one line each.
    await cron();
    await cron();
    const final = await invoicesOf(sub.id);
    expect(final.every((i) => i.status === 'finalized')).toBe(true);
    expect(shape(final)).toEqual(expected);
    expect(shape(await invoicesOf(low.id)).map((s) => s[3])).toEqual([[], [100], [], [100]]);

    // The upcoming invoice closes the current month (4900 billed at its start, no usage yet): 1100 more.
    const upcoming = await stack.api.get(`/v1/subscriptions/${sub.id}/upcoming-invoice`);
    expect(upcoming.status).toBe(200);
    expect(trueUps(upcoming.body).map((l) => [l.amount, l.period_start.slice(0, 10)])).toEqual([[1100, ymd(monthStart(0))]]);
    // A subscription without a commitment has no true-up anywhere.
    const plain = await subscribe({ customer_id: (await customer()).id, plan_id: p.id, start_date: isoZ(monthStart(-3)) });
    expect(plain.commitment_amount).toBeNull();
    expect((await invoicesOf(plain.id)).flatMap(trueUps)).toEqual([]);
  });

  it('prorates the true-up of a period cut short by a cancel, and bills the true-up of a pause', async () => {
    const p = await plan();
    // 20 to 24 days ago (more than half of the period, so that the prorated commitment is above
    // the 4900 billed), on a day no later than the 28th: the next month has that day, whatever the run's date.
    const start = new Date(monthlyPeriodAround(Date.now(), 20).start);
    const sub = await subscribe({ customer_id: (await customer()).id, plan_id: p.id, start_date: start.toISOString(), commitment_amount: 10_000 });
    const cancelled = await stack.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at: 'immediately' });
    expect(cancelled.status).toBe(200);
    const invoices = await invoicesOf(sub.id);
    expect(invoices.map((i) => i.billing_reason)).toEqual(['SUBSCRIPTION_CANCEL', 'SUBSCRIPTION_CREATE']);
    const cancel = invoices[0]!;
    const [line] = trueUps(cancel);
    const factor = line!.proration_factor!;
    const ran = new Date(cancel.period_end).getTime() - start.getTime();
    const monthEnd = new Date(start);
    monthEnd.setUTCMonth(monthEnd.getUTCMonth() + 1);
    expect(Number(factor)).toBeCloseTo(ran / (monthEnd.getTime() - start.getTime()), 9);
    // round(10000 × factor) half up, exactly, less the 4900 billed at the period's start.
    const scaled = 10_000n * BigInt(factor.replace('.', ''));
    const target = Number((scaled + 500_000_000_000n) / 1_000_000_000_000n);
    expect(line).toMatchObject({ amount: target - 4900, price_id: null, line_type: 'COMMITMENT_TRUE_UP', period_start: start.toISOString(), period_end: cancel.period_end });
    expect(cancel.subtotal).toBe(target - 4900);

    const paused = await subscribe({ customer_id: (await customer()).id, plan_id: p.id, start_date: start.toISOString(), commitment_amount: 10_000 });
    expect((await stack.api.post(`/v1/subscriptions/${paused.id}/pause`, {})).status).toBe(200);
    const pause = (await invoicesOf(paused.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_PAUSE')!;
    expect(trueUps(pause)).toHaveLength(1);
    expect(trueUps(pause)[0]!.amount).toBeGreaterThan(0);
  });

  it('discounts the true-up with a coupon without applies_to_price_ids, and not with one limited to prices', async () => {
    const p = await plan();
    const coupon = async (extra: Record<string, unknown>) => {
      const res = await stack.api.post('/v1/coupons', { name: 'Commit', type: 'PERCENTAGE', percent_off: '10', duration: 'FOREVER', ...extra });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const every = await subscribe({ customer_id: (await customer()).id, plan_id: p.id, start_date: isoZ(monthStart(-3)), commitment_amount: 6000, discounts: [{ coupon_id: await coupon({}) }] });
    const august = (await invoicesOf(every.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
    expect(trueUps(august).map((l) => [l.amount, l.discount_amount, l.net_amount])).toEqual([[1100, 110, 990]]);
    expect(august).toMatchObject({ subtotal: 6000, total_discount: 600, total: 5400 });

    const limited = await subscribe({
      customer_id: (await customer()).id,
      plan_id: p.id,
      start_date: isoZ(monthStart(-3)),
      commitment_amount: 6000,
      discounts: [{ coupon_id: await coupon({ applies_to_price_ids: [p.fixedId] }) }],
    });
    const augustLimited = (await invoicesOf(limited.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
    expect(trueUps(augustLimited).map((l) => [l.amount, l.discount_amount, l.net_amount])).toEqual([[1100, 0, 1100]]);
    expect(augustLimited).toMatchObject({ subtotal: 6000, total_discount: 490, total: 5510 });
  });

  it('refuses a bad commitment_amount naming the field, writing nothing', async () => {
    const p = await plan();
    const cust = await customer();
    const count = async () => Number((await billingDb('subscriptions').where({ customer_id: cust.id }).count({ n: '*' }))[0]!.n);
    for (const bad of [-1, 1.5, '100', null, 1e16]) {
      expect(fieldOf(await stack.api.post('/v1/subscriptions', { customer_id: cust.id, plan_id: p.id, commitment_amount: bad }))).toEqual([400, 'validation_error', 'commitment_amount']);
    }
    expect(await count()).toBe(0);
    const zero = await subscribe({ customer_id: cust.id, plan_id: p.id, start_date: isoZ(monthStart(-3)), commitment_amount: 0 });
    expect(zero.commitment_amount).toBe(0);
    expect((await invoicesOf(zero.id)).flatMap(trueUps)).toEqual([]);
  });

  describe('price overrides', () => {
    it('bills a FIXED and a TIERED override instead of the plan prices: cycle invoices, the upcoming invoice and the unbilled usage', async () => {
      const p = await plan(tieredUsage);
      const cust = await customer();
      await septemberUsage(cust.externalId);
      const sub = await subscribe({
        customer_id: cust.id,
        plan_id: p.id,
        start_date: isoZ(monthStart(-3)),
        price_overrides: [
          { price_id: p.fixedId, amount: '39' },
          { price_id: p.usageId, tiers: cheapTiers },
        ],
      });
      const view = (await stack.api.get(`/v1/subscriptions/${sub.id}`)).body;
      expect(view.price_overrides).toEqual([
        { price_id: p.fixedId, override_price_id: expect.stringMatching(/^price_/), amount: '39', tiers: null },
        { price_id: p.usageId, override_price_id: expect.stringMatching(/^price_/), amount: null, tiers: [{ up_to: '5', unit_amount: '0.1', flat_amount: null }, { up_to: null, unit_amount: '0.2', flat_amount: null }] },
      ]);
      const [fixedOverride, usageOverride] = view.price_overrides.map((o: { override_price_id: string }) => o.override_price_id);
      // Each override is a price of its own, scoped to the subscription; the plan lists only its own prices.
      expect((await stack.api.get(`/v1/prices/${fixedOverride}`)).body).toMatchObject({ amount: '39', parent_price_id: p.fixedId, subscription_id: sub.id, plan_id: p.id, type: 'FIXED' });
      expect((await stack.api.get(`/v1/prices/${usageOverride}`)).body).toMatchObject({ billing_model: 'TIERED', tier_mode: 'VOLUME', parent_price_id: p.usageId, subscription_id: sub.id });
      expect((await stack.api.get(`/v1/plans/${p.id}`)).body.prices.map((x: { id: string; parent_price_id: string | null }) => [x.id, x.parent_price_id])).toEqual([
        [p.fixedId, null],
        [p.usageId, null],
      ]);

      const invoices = await invoicesOf(sub.id);
      expect(invoices.map((i) => [i.billing_reason, i.period_start.slice(0, 10), i.subtotal])).toEqual([
        ['SUBSCRIPTION_CREATE', ymd(monthStart(-3)), 3900],
        ['SUBSCRIPTION_CYCLE', ymd(monthStart(-3)), 3900],
        ['SUBSCRIPTION_CYCLE', ymd(monthStart(-2)), 200 + 3900],
        ['SUBSCRIPTION_CYCLE', ymd(monthStart(-1)), 3900],
      ]);
      expect(invoices[2]!.line_items.map((l) => [l.price_id, l.amount])).toEqual([
        [usageOverride, 200],
        [fixedOverride, 3900],
      ]);
      await cron();
      expect((await invoicesOf(sub.id))[2]).toMatchObject({ status: 'finalized', subtotal: 4100 });

      // The same plan without overrides still bills its own prices.
      const plain = await subscribe({ customer_id: (await customer()).id, plan_id: p.id, start_date: isoZ(monthStart(-3)) });
      expect(plain).toMatchObject({ price_overrides: [] });
      expect((await invoicesOf(plain.id)).map((i) => i.subtotal)).toEqual([4900, 4900, 4900, 4900]);

      // The upcoming invoice and the unbilled usage of the current month price with the overrides: 3 calls now are 0.30, not 3.00.
      const now = new Date().toISOString();
      const events = [0, 1, 2].map((i) => ({ event_name: 'commit_call', external_customer_id: cust.externalId, timestamp: now, event_id: `${cust.externalId}-now-${i}` }));
      expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
      await waitFor(async () => (await stack.api.get(`/v1/subscriptions/${sub.id}/usage`)).body.amount === 30, { timeoutMs: 20_000, what: 'the unbilled usage at the override tiers' });
      const usage = (await stack.api.get(`/v1/subscriptions/${sub.id}/usage`)).body;
      expect(usage.items.map((i: { price_id: string; quantity: string; amount: number }) => [i.price_id, i.quantity, i.amount])).toEqual([[usageOverride, '3', 30]]);
      const upcoming = (await stack.api.get(`/v1/subscriptions/${sub.id}/upcoming-invoice`)).body as Invoice;
      expect(upcoming.line_items.map((l) => [l.price_id, l.amount])).toEqual([
        [usageOverride, 30],
        [fixedOverride, 3900],
      ]);
    });

    it('discounts an override with a coupon naming the plan price it replaces', async () => {
      const p = await plan();
      const c = await stack.api.post('/v1/coupons', { name: 'Fixed only', type: 'PERCENTAGE', percent_off: '10', duration: 'FOREVER', applies_to_price_ids: [p.fixedId] });
      expect(c.status).toBe(201);
      const sub = await subscribe({
        customer_id: (await customer()).id,
        plan_id: p.id,
        start_date: isoZ(monthStart(-3)),
        price_overrides: [{ price_id: p.fixedId, amount: '39' }],
        discounts: [{ coupon_id: c.body.id }],
      });
      const create = (await invoicesOf(sub.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CREATE')!;
      expect(create.line_items.map((l) => [l.amount, l.discount_amount])).toEqual([[3900, 390]]);
      expect(create).toMatchObject({ subtotal: 3900, total_discount: 390, total: 3510 });
    });

    it('refuses a price it does not bill, a second override, the wrong one of amount and tiers, and bad tiers, naming the field and writing nothing', async () => {
      const p = await plan(tieredUsage);
      const other = await plan();
      const cust = await customer();
      const overrides = async () => Number((await billingDb('prices').whereIn('parent_price_id', [p.fixedId, p.usageId]).count({ n: '*' }))[0]!.n);
      const before = await overrides();
      const cases: Array<[unknown[], string]> = [
        [[{ price_id: 'price_missing', amount: '1' }], 'price_overrides.0.price_id'],
        [[{ price_id: p.fixedId, amount: '1' }, { price_id: other.fixedId, amount: '1' }], 'price_overrides.1.price_id'],
        [[{ price_id: p.fixedId, amount: '1' }, { price_id: p.fixedId, amount: '2' }], 'price_overrides.1.price_id'],
        [[{ price_id: p.usageId, amount: '1' }], 'price_overrides.0.tiers'],
        [[{ price_id: p.fixedId, tiers: cheapTiers }], 'price_overrides.0.amount'],
        [[{ price_id: p.fixedId, amount: '1', tiers: cheapTiers }], 'price_overrides.0.amount'],
        [[{ price_id: p.fixedId }], 'price_overrides.0.amount'],
        [[{ price_id: p.fixedId, amount: '-1' }], 'price_overrides.0.amount'],
        [[{ price_id: p.usageId, tiers: [{ up_to: '5', unit_amount: '1' }] }], 'price_overrides.0.tiers.0.up_to'],
        [[{ price_id: p.usageId, tiers: [] }], 'price_overrides.0.tiers'],
        [[], 'price_overrides'],
      ];
      for (const [price_overrides, field] of cases) {
        expect(fieldOf(await stack.api.post('/v1/subscriptions', { customer_id: cust.id, plan_id: p.id, price_overrides }))).toEqual([400, 'validation_error', field]);
      }
      expect(Number((await billingDb('subscriptions').where({ customer_id: cust.id }).count({ n: '*' }))[0]!.n)).toBe(0);
      expect(await overrides()).toBe(before);
    });
  });
});

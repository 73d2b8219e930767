/* One file: the plan-change scenarios share one stack, its plans and the helpers that recompute every amount from the contract's formulas. */
import { waitFor } from '@billstream/testing';
import { DAY, iso, isoZ, monthlyPeriodAround } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice, usagePrice } from './prices';
import { paidInFull } from '../../support/payments';

/**
 * Plan changes (docs/api/plan-changes.md, ADR 0043) as a client meets them: through the gateway,
 * on the whole stack with real Postgres and Kafka. Subscriptions start at START, 10 to 14 days
 * before the run (MONTHLY, anniversary, test-e2e/support/clock.ts), so a change happens inside
 * the period [START, END) at the wall clock's now, whatever the date of the run;
 * every expected amount is computed here from the instant the change answered (its lines'
 * windows), with the contract's formulas: a factor of 12 decimals half up, one rounding half up.
 * The period job's schedule is off; POST /v1/cron/bill-subscriptions runs it.
 */
const { start: START, end: END } = monthlyPeriodAround();
const START_AT = isoZ(START);

interface Line {
  id: string;
  price_id: string | null;
  price_type: string;
  line_type: string;
  amount: number;
  quantity: string;
  offset_amount: number;
  discount_amount: number;
  net_amount: number;
  credited_amount: number;
  proration_factor?: string | null;
  period_start: string;
  period_end: string;
}
interface Invoice {
  id: string;
  billing_reason: string;
  status: string;
  period_start: string;
  period_end: string;
  subtotal: number;
  total_discount: number;
  excess_credit: number;
  total: number;
  amount_due: number;
  line_items: Line[];
}
interface Subscription {
  id: string;
  plan_id: string;
  billing_period: string;
  status: string;
  current_period_start: string;
  current_period_end: string;
  updated_at: string;
  pending_change: null | { change_id: string; plan_id: string; effective_at: string; proration_behavior: string };
}

/** part / whole, 12 decimals, half up (the contract's proration factor), as a scaled integer. */
function factor(partMs: number, wholeMs: number): bigint {
  return (2n * BigInt(partMs) * 10n ** 12n + BigInt(wholeMs)) / (2n * BigInt(wholeMs));
}
/** round(amount × factor) half up, amount in minor units. */
function times(amount: number, f: bigint): number {
  return Number((2n * BigInt(amount) * f + 10n ** 12n) / (2n * 10n ** 12n));
}

describe('plan changes through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let meterId: string;
  let n = 0;
  let planA: { id: string; fixedId: string; usageId: string };
  let planB: { id: string; fixedId: string; usageId: string };

  beforeAll(async () => {
    stack = await startIntegrationStack({
      extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '250' } },
    });
    meterId = (await stack.api.post('/v1/meters', { name: 'change calls', event_name: 'change_call', aggregation: { type: 'COUNT' } })).body.id;
    planA = await plan('Basic', '49', '0.5');
    planB = await plan('Pro', '99', '0.3');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function plan(name: string, fixed: string, perCall: string, extra: Record<string, unknown> = {}) {
    const res = await stack.api.post('/v1/plans', { name, prices: [{ ...fixedPrice, amount: fixed, ...extra }, usagePrice(meterId, { amount: perCall, ...extra })] });
    expect(res.status).toBe(201);
    const prices = res.body.prices as Array<{ id: string; type: string }>;
    return { id: res.body.id as string, fixedId: prices.find((p) => p.type === 'FIXED')!.id, usageId: prices.find((p) => p.type === 'USAGE')!.id };
  }
  async function customer(): Promise<{ id: string; externalId: string }> {
    const externalId = `change-${++n}-${Date.now()}`;
    const res = await stack.api.post('/v1/customers', { external_customer_id: externalId });
    expect(res.status).toBe(201);
    return { id: res.body.id, externalId };
  }
  async function subscribe(body: Record<string, unknown>): Promise<Subscription> {
    const res = await stack.api.post('/v1/subscriptions', body);
    expect(res.status).toBe(201);
    return res.body as Subscription;
  }
  async function calls(externalId: string, count: number, at: string): Promise<void> {
    const events = Array.from({ length: count }, (_, i) => ({ event_name: 'change_call', external_customer_id: externalId, timestamp: at, event_id: `${externalId}-${at}-${i}` }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(
      async () =>
        Number(
          (await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: externalId, start_time: START_AT, end_time: isoZ(END) })).body.value,
        ) >= count,
      { timeoutMs: 20_000, what: `usage of ${externalId}` },
    );
  }
  const invoicesOf = async (subscriptionId: string): Promise<Invoice[]> => {
    const res = await stack.api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`);
    expect(res.status).toBe(200);
    return res.body.items as Invoice[];
  };
  const change = (id: string, body: Record<string, unknown>) => stack.api.post(`/v1/subscriptions/${id}/change`, body);
  const errorOf = (res: { status: number; body: { error?: { internal_error: string; details?: { field?: string } } } }) => [res.status, res.body.error?.internal_error, res.body.error?.details?.field];
  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  /** Every invoice identity of docs/api/billing.md#invoice-arithmetic, and no negative amount. */
  function checkIdentities(i: Invoice): void {
    expect(i.subtotal).toBe(i.line_items.reduce((s, l) => s + l.amount, 0));
    expect(i.total).toBeGreaterThanOrEqual(0);
    for (const l of i.line_items) {
      expect(l.net_amount).toBeGreaterThanOrEqual(0);
      expect(l.credited_amount).toBeLessThanOrEqual(l.net_amount);
      if (l.amount < 0) expect(l.net_amount).toBe(0);
      else expect(l.net_amount).toBe(l.amount - l.offset_amount - l.discount_amount);
    }
    const credits = -i.line_items.filter((l) => l.amount < 0).reduce((s, l) => s + l.amount, 0);
    const offsets = i.line_items.reduce((s, l) => s + l.offset_amount, 0);
    expect(offsets + i.excess_credit).toBe(credits);
  }

  it('upgrades mid-period: the old plan up to now, its unused time credited, the new plan for the rest, exactly once per key', async () => {
    const c = await customer();
    const sub = await subscribe({ customer_id: c.id, plan_id: planA.id, start_date: START_AT });
    await calls(c.externalId, 4, isoZ(START + 1.5 * DAY));
    const [created] = await invoicesOf(sub.id);
    expect(created).toMatchObject({ billing_reason: 'SUBSCRIPTION_CREATE', subtotal: 4900 });
    await paidInFull(stack.api, sub.id);

    const res = await change(sub.id, { plan_id: planB.id, idempotency_key: `up-${sub.id}` });
    expect(res.status).toBe(200);
    const { subscription, invoice } = res.body as { subscription: Subscription; invoice: Invoice };
    expect(subscription).toMatchObject({ id: sub.id, plan_id: planB.id, current_period_start: iso(START), current_period_end: iso(END) });
    expect(invoice.billing_reason).toBe('SUBSCRIPTION_UPDATE');
    const t = Date.parse(invoice.period_end);
    expect(invoice.period_start).toBe(iso(START));
    const f = factor(END - t, END - START);
    const byType = (type: string, priceId: string) => invoice.line_items.filter((l) => l.line_type === type && l.price_id === priceId);
    // The old plan's usage of [START, t): 4 calls at 0.50.
    expect(byType('CHARGE', planA.usageId)).toEqual([expect.objectContaining({ amount: 200, quantity: '4', period_start: iso(START), period_end: invoice.period_end })]);
    // The new plan's ADVANCE charge for [t, END), prorated by (END - t) / (END - START).
    expect(byType('CHARGE', planB.fixedId)).toEqual([expect.objectContaining({ amount: times(9900, f), period_start: invoice.period_end, period_end: iso(END) })]);
    // The unused time of the 49.00 billed on START, with the same factor.
    expect(byType('PRORATION_CREDIT', planA.fixedId)).toEqual([expect.objectContaining({ amount: -Math.min(times(4900, f), 4900), net_amount: 0 })]);
    expect(invoice.line_items).toHaveLength(3);
    checkIdentities(invoice);
    // The credited line took the credit: a credit note or a later change can never give it again.
    const old = (await stack.api.get(`/v1/invoices/${created!.id}`)).body as Invoice;
    expect(old.line_items[0]!.credited_amount).toBe(Math.min(times(4900, f), 4900));
    expect((await stack.api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id).toBe(planB.id);

    // The same key and body: the first answer (the subscription as it left it); another body: 409.
    const again = await change(sub.id, { plan_id: planB.id, idempotency_key: `up-${sub.id}` });
    expect(again.status).toBe(200);
    expect(again.body.invoice.id).toBe(invoice.id);
    expect(again.body.subscription.plan_id).toBe(planB.id);
    expect(errorOf(await change(sub.id, { plan_id: planA.id, idempotency_key: `up-${sub.id}` }))).toEqual([409, 'idempotency_conflict', 'idempotency_key']);
    // The same plan and period again: nothing to change.
    expect(errorOf(await change(sub.id, { plan_id: planB.id }))).toEqual([400, 'validation_error', 'plan_id']);

    // Back down at t2: B's advance line for [t, END) is credited for [t2, END) over [t, END); A's START line never again.
    await paidInFull(stack.api, sub.id);
    const down = await change(sub.id, { plan_id: planA.id });
    expect(down.status).toBe(200);
    const second = down.body.invoice as Invoice;
    const t2 = Date.parse(second.period_end);
    expect(second.period_start).toBe(invoice.period_end);
    const bLine = invoice.line_items.find((l) => l.price_id === planB.fixedId)!;
    const f2 = factor(END - t2, END - t);
    const credits = second.line_items.filter((l) => l.line_type === 'PRORATION_CREDIT');
    // What B's line is worth (its amount less its own discount; the credit it absorbed on that invoice does not lower it).
    const worth = bLine.amount - bLine.discount_amount;
    expect(credits).toEqual([expect.objectContaining({ price_id: planB.fixedId, amount: -Math.min(times(worth, f2), worth) })]);
    expect(second.line_items.find((l) => l.price_id === planA.fixedId && l.line_type === 'CHARGE')!.amount).toBe(times(4900, factor(END - t2, END - START)));
    checkIdentities(second);
    // A downgrade's surplus is excess credit: the invoice is not negative, the wallet gets it at finalization.
    expect(second.excess_credit).toBeGreaterThan(0);
    expect(second.total).toBe(0);

    await cron();
    const finalized = (await stack.api.get(`/v1/invoices/${second.id}`)).body as Invoice;
    expect(finalized.status).toBe('paid');
    const wallets = (await stack.api.get(`/v1/customers/${c.id}/wallets`)).body.items as Array<{ id: string; wallet_type: string }>;
    const prepaid = wallets.find((w) => w.wallet_type === 'PRE_PAID')!;
    expect(prepaid).toBeDefined();
    const txs = (await stack.api.get(`/v1/wallets/${prepaid.id}/transactions?limit=100`)).body.items as Array<{ transaction_reason: string; amount: string; idempotency_key?: string }>;
    const excess = txs.filter((x) => x.transaction_reason === 'CREDIT_NOTE');
    expect(excess).toHaveLength(1);
    expect(Number(excess[0]!.amount)).toBeCloseTo(second.excess_credit / 100, 9);
    // The period job again: still once.
    await cron();
    expect(((await stack.api.get(`/v1/wallets/${prepaid.id}/transactions?limit=100`)).body.items as Array<{ transaction_reason: string }>).filter((x) => x.transaction_reason === 'CREDIT_NOTE')).toHaveLength(1);
  });

  it('makes one invoice for concurrent changes: the same key answers once, different keys change once', async () => {
    const c = await customer();
    const sub = await subscribe({ customer_id: c.id, plan_id: planA.id, start_date: START_AT });
    const same = await Promise.all(Array.from({ length: 6 }, () => change(sub.id, { plan_id: planB.id, idempotency_key: `same-${sub.id}` })));
    expect(same.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(same.map((r) => r.body.invoice.id)).size).toBe(1);
    const other = await Promise.all(Array.from({ length: 6 }, (_, i) => change(sub.id, { plan_id: planA.id, idempotency_key: `other-${sub.id}-${i}` })));
    expect(other.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of other.filter((x) => x.status !== 200)) expect(errorOf(r)).toEqual([400, 'validation_error', 'plan_id']);
    const updates = (await invoicesOf(sub.id)).filter((i) => i.billing_reason === 'SUBSCRIPTION_UPDATE');
    expect(updates).toHaveLength(2);
  });

  it('previews the change without storing, debiting or publishing anything', async () => {
    const c = await customer();
    const sub = await subscribe({ customer_id: c.id, plan_id: planA.id, start_date: START_AT });
    await paidInFull(stack.api, sub.id);
    const before = (await stack.api.get(`/v1/subscriptions/${sub.id}`)).body as Subscription;
    const preview = await stack.api.post(`/v1/subscriptions/${sub.id}/change/preview`, { plan_id: planB.id });
    expect(preview.status).toBe(200);
    const p = preview.body as { subscription: Subscription & { effective_at: string }; invoice: Invoice & { as_of: string } };
    expect(p.subscription.plan_id).toBe(planB.id);
    expect(p.invoice.billing_reason).toBe('SUBSCRIPTION_UPDATE');
    expect((p.invoice as unknown as { id?: string }).id).toBeUndefined();
    expect(p.invoice.period_end).toBe(p.subscription.effective_at);
    const t = Date.parse(p.subscription.effective_at);
    expect(p.invoice.line_items.map((l) => [l.line_type, l.price_id, l.amount])).toEqual([
      ['CHARGE', planA.usageId, 0],
      ['CHARGE', planB.fixedId, times(9900, factor(END - t, END - START))],
      ['PRORATION_CREDIT', planA.fixedId, -times(4900, factor(END - t, END - START))],
    ]);
    // Nothing stored: the subscription, its invoices and the credited line are as they were.
    expect((await stack.api.get(`/v1/subscriptions/${sub.id}`)).body).toEqual(before);
    const invoices = await invoicesOf(sub.id);
    expect(invoices.map((i) => i.billing_reason)).toEqual(['SUBSCRIPTION_CREATE']);
    expect(invoices[0]!.line_items[0]!.credited_amount).toBe(0);
    // The change made next has the same shape (its own instant).
    const made = await change(sub.id, { plan_id: planB.id });
    expect(made.body.invoice.line_items.map((l: Line) => [l.line_type, l.price_id])).toEqual(p.invoice.line_items.map((l) => [l.line_type, l.price_id]));
  });

  it('changes at the period end: pending_change until then, replaced or dropped, applied by the period job with the cycle invoice', async () => {
    const daily = { billing_period: 'DAILY' };
    const d1 = await plan('Daily basic', '10', '0.1', daily);
    const d2 = await plan('Daily pro', '20', '0.2', daily);
    const c = await customer();
    // Anniversary DAILY from almost a day ago: the period ends in a few seconds.
    const start = new Date(Date.now() - DAY + 6_000).toISOString();
    const sub = await subscribe({ customer_id: c.id, plan_id: d1.id, start_date: start });
    const res = await change(sub.id, { plan_id: d2.id, effective: 'period_end' });
    expect(res.status).toBe(200);
    expect(res.body.invoice).toBeNull();
    expect(res.body.subscription).toMatchObject({ plan_id: d1.id, pending_change: { plan_id: d2.id, effective_at: sub.current_period_end } });
    // Dropped, then dropping again is 404; asked again.
    const dropped = await stack.api.call('DELETE', `/v1/subscriptions/${sub.id}/pending_change`);
    expect(dropped.status).toBe(200);
    expect(dropped.body.pending_change).toBeNull();
    expect((await stack.api.call('DELETE', `/v1/subscriptions/${sub.id}/pending_change`)).status).toBe(404);
    expect((await change(sub.id, { plan_id: d2.id, effective: 'period_end' })).status).toBe(200);

    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(sub.current_period_end) - Date.now() + 500)));
    await cron();
    const after = (await stack.api.get(`/v1/subscriptions/${sub.id}`)).body as Subscription;
    expect(after).toMatchObject({ plan_id: d2.id, pending_change: null, current_period_start: sub.current_period_end });
    const cycle = (await invoicesOf(sub.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
    // The old plan's ARREAR usage of the closed period (none), the new plan's ADVANCE charge of the next.
    expect(cycle.line_items.map((l) => [l.price_id, l.amount])).toEqual([
      [d1.usageId, 0],
      [d2.fixedId, 2000],
    ]);
  });

  it('entitlements and the real-time balance follow an immediate change within 2 s', async () => {
    const usageOnly = async (name: string, perCall: string) => (await stack.api.post('/v1/plans', { name, prices: [usagePrice(meterId, { amount: perCall })] })).body.id as string;
    const cheap = await usageOnly('Usage 0.50', '0.5');
    const cheaper = await usageOnly('Usage 0.30', '0.3');
    const feature = (await stack.api.post('/v1/features', { name: 'Exports', lookup_key: `exports-${Date.now()}`, type: 'BOOLEAN' })).body;
    expect((await stack.api.post('/v1/entitlements', { plan_id: cheaper, feature_id: feature.id })).status).toBe(201);
    const c = await customer();
    const walletId = (await stack.api.post('/v1/wallets', { customer_id: c.id, currency: 'usd', initial_credits_to_load: '100' })).body.id as string;
    const sub = await subscribe({ customer_id: c.id, plan_id: cheap, start_date: START_AT });
    const rtb = async () => (await stack.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`)).body.real_time_balance as string;
    const check = async () => (await stack.api.post('/v1/entitlements/check', { customer_id: c.id, feature_lookup_key: feature.lookup_key })).body.allowed as boolean;
    /** Milliseconds from `from` until `probe` holds. */
    const within = async (from: number, probe: () => Promise<boolean>, what: string) => {
      await waitFor(probe, { timeoutMs: 10_000, intervalMs: 20, what });
      return Date.now() - from;
    };

    // 10 calls on the old plan at 0.50: 5.00 unbilled.
    await calls(c.externalId, 10, new Date().toISOString());
    await waitFor(async () => (await rtb()) === '95', { timeoutMs: 10_000, what: 'real-time balance 95' });
    expect(await check()).toBe(false);

    // The change happens at its call's whole second (docs/adr/0057-invoicing-edges.md): usage stamped in
    // that second is the new plan's. The calls above are the old plan's: change in a later second.
    await new Promise((r) => setTimeout(r, 1_010 - (Date.now() % 1_000)));
    const changedAt = Date.now();
    const res = await change(sub.id, { plan_id: cheaper });
    expect(res.status).toBe(200);
    // The old plan's usage moved to the change's invoice (a draft the balance counts): still 95; the feature at once.
    expect(res.body.invoice.line_items.map((l: Line) => [l.price_id, l.quantity, l.amount])).toEqual([[expect.any(String), '10', 500]]);
    expect(await within(changedAt, check, 'the new plan grants the feature')).toBeLessThanOrEqual(2000);
    expect(await rtb()).toBe('95');

    // Usage from the change on is priced anew: 10 calls at 0.30.
    const events = Array.from({ length: 10 }, (_, i) => ({ event_name: 'change_call', external_customer_id: c.externalId, timestamp: new Date().toISOString(), event_id: `${c.externalId}-after-${i}` }));
    const accepted = Date.now();
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    expect(await within(accepted, async () => (await rtb()) === '92', 'real-time balance 92')).toBeLessThanOrEqual(2000);
  });

  it("grants the new plan's credits prorated at once, stops the old plan's, and never grants a period twice", async () => {
    const granted = await plan('Granted', '49', '0.5');
    const grant = (await stack.api.post('/v1/credit_grants', { plan_id: granted.id, name: 'Monthly credits', credits: '30', cadence: 'RECURRING' })).body;
    expect(grant.id).toMatch(/^cgrant_/);
    const c = await customer();
    const sub = await subscribe({ customer_id: c.id, plan_id: planA.id, start_date: START_AT });
    const res = await change(sub.id, { plan_id: granted.id });
    expect(res.status).toBe(200);
    const t = Date.parse(res.body.invoice.period_end);
    const applications = async () => (await stack.api.get(`/v1/credit_grants/${grant.id}/applications?subscription_id=${sub.id}`)).body.items as Array<{ period_start: string; credits: string; status: string }>;
    // 30 × (END − t) / (END − START), 12 decimals, half up.
    const f = factor(END - t, END - START);
    const expected = (30n * f).toString().padStart(13, '0');
    const credits = `${expected.slice(0, -12)}.${expected.slice(-12)}`.replace(/\.?0+$/, '');
    await waitFor(async () => (await applications()).some((a) => a.status === 'applied'), { timeoutMs: 10_000, what: 'the prorated grant applied' });
    expect(await applications()).toEqual([expect.objectContaining({ period_start: iso(START), status: 'applied', credits })]);
    // Back to A and up again within the period: the period is never granted twice.
    expect((await change(sub.id, { plan_id: planA.id })).status).toBe(200);
    expect((await change(sub.id, { plan_id: granted.id })).status).toBe(200);
    await cron();
    expect(await applications()).toHaveLength(1);
    const wallets = (await stack.api.get(`/v1/customers/${c.id}/wallets`)).body.items as Array<{ credit_balance: string }>;
    expect(wallets.map((w) => Number(w.credit_balance))).toEqual([Number(credits)]);
  });

  it('takes price overrides and a new commitment with the change; the upcoming invoice bills the new plan from the change; a cancel drops a pending change', async () => {
    const c = await customer();
    const sub = await subscribe({ customer_id: c.id, plan_id: planA.id, start_date: START_AT, commitment_amount: 5000 });
    const res = await change(sub.id, { plan_id: planB.id, price_overrides: [{ price_id: planB.fixedId, amount: '80' }], commitment_amount: 20_000 });
    expect(res.status).toBe(200);
    const s = res.body.subscription;
    expect(s).toMatchObject({ commitment_amount: 20_000, price_overrides: [{ price_id: planB.fixedId, amount: '80', override_price_id: expect.stringMatching(/^price_/) }] });
    const overrideId = s.price_overrides[0].override_price_id as string;
    const t = Date.parse(res.body.invoice.period_end);
    // The new plan's ADVANCE charge is the override's 80.00, prorated.
    expect(res.body.invoice.line_items.find((l: Line) => l.price_id === overrideId)).toMatchObject({ line_type: 'CHARGE', amount: times(8000, factor(END - t, END - START)) });
    // An override of a price the new plan does not bill: 400, nothing changed.
    expect(errorOf(await change(sub.id, { plan_id: planA.id, price_overrides: [{ price_id: planB.fixedId, amount: '1' }] }))).toEqual([400, 'validation_error', 'price_overrides.0.price_id']);
    expect((await stack.api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id).toBe(planB.id);

    // The upcoming invoice: B's usage from the change, B's (overridden) fee for the next period, the commitment trued up on the whole period.
    const upcoming = (await stack.api.get(`/v1/subscriptions/${sub.id}/upcoming-invoice`)).body as Invoice;
    const usageLine = upcoming.line_items.find((l) => l.price_id === planB.usageId)!;
    expect(usageLine.period_start).toBe(res.body.invoice.period_end);
    expect(upcoming.line_items.find((l) => l.price_id === overrideId)).toMatchObject({ amount: 8000, period_start: iso(END) });
    expect(upcoming.line_items.find((l) => l.line_type === 'COMMITMENT_TRUE_UP')).toMatchObject({ period_start: iso(START), period_end: iso(END) });

    expect((await change(sub.id, { plan_id: planA.id, effective: 'period_end' })).body.subscription.pending_change).toMatchObject({ plan_id: planA.id });
    const cancelling = await stack.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at: 'end_of_period' });
    expect(cancelling.status).toBe(200);
    expect(cancelling.body).toMatchObject({ cancel_at_period_end: true, pending_change: null });
    expect(errorOf(await change(sub.id, { plan_id: planA.id }))).toEqual([400, 'validation_error', 'status']);
  });

  it('swaps a trial without an invoice, moves to another billing period at once, and refuses what cannot change', async () => {
    const c = await customer();
    const trial = await subscribe({ customer_id: c.id, plan_id: planA.id, trial_period_days: 14 });
    const swapped = await change(trial.id, { plan_id: planB.id });
    expect(swapped.status).toBe(200);
    expect(swapped.body).toMatchObject({ subscription: { status: 'trialing', plan_id: planB.id }, invoice: null });

    const yearly = await plan('Annual', '500', '0.4', { billing_period: 'ANNUAL' });
    const sub = await subscribe({ customer_id: c.id, plan_id: planA.id, start_date: START_AT, commitment_amount: 100_000 });
    await paidInFull(stack.api, sub.id);
    const res = await change(sub.id, { plan_id: yearly.id });
    expect(res.status).toBe(200);
    const t = res.body.subscription.current_period_start as string;
    expect(res.body.subscription).toMatchObject({ billing_period: 'ANNUAL', plan_id: yearly.id });
    expect(Date.parse(res.body.subscription.current_period_end) - Date.parse(t)).toBe(365 * DAY);
    const lines = (res.body.invoice as Invoice).line_items;
    // The new period billed whole in ADVANCE; the unused time of the period credited.
    expect(lines.find((l) => l.price_id === yearly.fixedId)).toMatchObject({ amount: 50000, period_start: t });
    const credit = times(4900, factor(END - Date.parse(t), END - START));
    expect(lines.find((l) => l.line_type === 'PRORATION_CREDIT')!.amount).toBe(-credit);
    // The period ended at t: its commitment is trued up on [START, t), prorated, against what the period billed (4900 − the credit).
    expect(lines.find((l) => l.line_type === 'COMMITMENT_TRUE_UP')).toMatchObject({
      amount: times(100_000, factor(Date.parse(t) - START, END - START)) - (4900 - credit),
      period_start: iso(START),
      period_end: t,
    });

    expect(errorOf(await change(sub.id, { plan_id: 'plan_unknown' }))).toEqual([404, 'not_found', 'plan_id']);
    const euro = (await stack.api.post('/v1/plans', { name: 'Euro', prices: [{ ...fixedPrice, currency: 'eur' }] })).body.id;
    expect(errorOf(await change(sub.id, { plan_id: euro }))).toEqual([400, 'validation_error', 'plan_id']);
    expect(errorOf(await change(sub.id, { plan_id: planA.id, billing_period: 'WEEKLY' }))).toEqual([400, 'validation_error', 'billing_period']);
    const archived = await plan('Archived', '1', '1');
    expect((await stack.api.call('DELETE', `/v1/plans/${archived.id}`)).status).toBe(204);
    expect(errorOf(await change(sub.id, { plan_id: archived.id }))).toEqual([400, 'validation_error', 'plan_id']);
    expect(errorOf(await change(sub.id, { plan_id: planA.id, proration_behavior: 'sometimes' }))).toEqual([400, 'validation_error', 'proration_behavior']);
    expect((await stack.api.post(`/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(200);
    expect(errorOf(await change(sub.id, { plan_id: planA.id }))).toEqual([400, 'validation_error', 'status']);
  });
});

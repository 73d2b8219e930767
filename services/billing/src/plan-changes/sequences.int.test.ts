import fc from 'fast-check';
import type { Allocation, Wallets } from '../clients/wallets/domain';
import { billingPeriodOf, type Invoice } from '../invoices/domain';
import type { NewPrice } from '../prices/domain';
import { CTX, monthlyFixed, startBillingHarness, type BillingHarness } from '../testing/harness';
import { planChangeOf } from './wire';

/**
 * Issue #31, item 1 (docs/api/billing.md#invoice-arithmetic, ADR 0038 and 0043): over random sequences of plan
 * changes (with and without prorations), coupons, finalizations, payments and credit notes on
 * random usage, on the billing service and a real Postgres (the aggregator and the wallet are
 * fakes), every invoice keeps its identities: subtotal = Σ amount, total = subtotal −
 * total_discount + excess_credit − credits, amount_due = total − pre-payment notes,
 * amount_remaining = amount_due − amount_paid; no invoice and no line is negative, a negative
 * line nets 0, no line is credited beyond its net amount (proration credits and notes together),
 * and a change's preview equals the change made at the same instant. Without coupons and
 * notes, a period's FIXED charges after every change are each plan's prices for the time it
 * ran, within one minor unit per part and price: credits and charges share one factor, no drift
 * (the unused time of an invoice not paid yet lowering what it has due by a credit note, ADR 0056).
 */
const S = Date.parse('2026-01-01T00:00:00Z');
const E = Date.parse('2026-02-01T00:00:00Z');
const MINUTE = 60_000;

/** The wallet's allocation as these sequences need it: no wallet, nothing paid with credits. */
class NoCredits implements Pick<Wallets, 'allocate' | 'allocateMany'> {
  async allocate(_scope: unknown, invoiceId: string): Promise<Allocation> {
    return { invoice_id: invoiceId, status: 'allocated', prepaid: null, postpaid: null };
  }
  async allocateMany(_scope: unknown, invoices: Array<{ invoiceId: string }>): Promise<Allocation[]> {
    return invoices.map((i) => ({ invoice_id: i.invoiceId, status: 'allocated', prepaid: null, postpaid: null }));
  }
}

const base = { billingCycle: 'anniversary' as const, timezone: 'UTC', paymentTermsDays: 0, draft: false, metadata: {} };
const advance = (amount: string): NewPrice => ({ ...monthlyFixed, amount });
const arrear = (amount: string): NewPrice => ({ ...monthlyFixed, amount, invoiceCadence: 'ARREAR' });
const usage = (amount: string): NewPrice => ({ ...monthlyFixed, type: 'USAGE', amount, invoiceCadence: 'ARREAR', meterId: 'meter_calls' });
/** Each plan's FIXED prices per month, in minor units (ADVANCE and ARREAR): what its time costs. */
const PLANS: Array<{ prices: NewPrice[]; fixedMinor: number }> = [
  { prices: [advance('10'), usage('0.5')], fixedMinor: 1000 },
  { prices: [advance('35.99'), arrear('5')], fixedMinor: 3599 + 500 },
  { prices: [advance('0.99'), usage('0.013')], fixedMinor: 99 },
  { prices: [advance('1234.57'), advance('3.33')], fixedMinor: 123457 + 333 },
];

type Op =
  | { kind: 'change'; plan: number; prorate: boolean; minutes: number }
  | { kind: 'coupon'; percent?: string; amountOff?: number }
  | { kind: 'usage'; calls: number }
  | { kind: 'finalize' }
  | { kind: 'pay'; fraction: number }
  | { kind: 'note'; fraction: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('change' as const), plan: fc.integer({ min: 0, max: PLANS.length - 1 }), prorate: fc.boolean(), minutes: fc.integer({ min: 0, max: 9_000 }) }) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({ kind: fc.constant('coupon' as const), percent: fc.integer({ min: 1, max: 10_000 }).map((n) => String(n / 100)) }),
      fc.record({ kind: fc.constant('coupon' as const), amountOff: fc.integer({ min: 1, max: 20_000 }) }),
    ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('usage' as const), calls: fc.integer({ min: 0, max: 100_000 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'finalize' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pay' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('note' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }) },
);

jest.setTimeout(600_000);

describe('invoice arithmetic over random sequences of plan changes, coupons, payments and credit notes (real Postgres)', () => {
  let h: BillingHarness;
  const plans: string[] = [];
  let n = 0;

  beforeAll(async () => {
    h = await startBillingHarness('2026-01-01T00:00:00Z', { wallets: new NoCredits() as unknown as Wallets });
    h.meters.known.set('meter_calls', '0');
    for (const [i, p] of PLANS.entries()) plans.push((await h.service.plans.create(CTX, { name: `P${i}`, lookupKey: null, description: null, metadata: {}, prices: p.prices }, 'r')).id);
  });
  afterAll(async () => {
    await h?.stop();
  });

  const invoicesOf = async (subscriptionId: string): Promise<Invoice[]> => {
    const ids: string[] = await h.db('invoices').where({ subscription_id: subscriptionId }).orderBy('created_at').pluck('id');
    return Promise.all(ids.map((id) => h.service.invoices.get(CTX, id)));
  };
  /** An invoice's money without its ids and timestamps: what a preview and a change must share. */
  const money = (i: Invoice) => ({
    reason: i.billingReason,
    periodStart: i.periodStart,
    periodEnd: i.periodEnd,
    totals: [i.subtotal, i.totalDiscount, i.excessCredit, i.total, i.amountDue],
    discounts: i.discounts.map((d) => [d.discountId, d.amount]),
    lines: i.lines.map((l) => [l.lineType, l.priceId, l.quantity, l.amount, l.offsetAmount, l.discountAmount, l.netAmount, l.prorationFactor, l.periodStart, l.periodEnd]),
  });

  function checkInvoice(i: Invoice): void {
    expect(i.subtotal).toBe(i.lines.reduce((s, l) => s + l.amount, 0));
    expect(i.total).toBe(i.subtotal - i.totalDiscount + i.excessCredit - i.totalPrepaidCreditsApplied);
    expect(i.amountDue).toBe(i.total - i.prePaymentCreditNotesAmount);
    expect(i.amountRemaining).toBe(i.amountDue - i.amountPaid);
    for (const v of [i.total, i.amountDue, i.amountRemaining, i.amountPaid, i.totalDiscount, i.excessCredit]) expect(v).toBeGreaterThanOrEqual(0);
    expect(i.totalDiscount).toBe(i.lines.reduce((s, l) => s + l.discountAmount, 0));
    expect(i.totalDiscount).toBe(i.discounts.reduce((s, d) => s + d.amount, 0));
    const negatives = i.lines.filter((l) => l.lineType === 'PRORATION_CREDIT' || l.lineType === 'THRESHOLD_DEDUCTION');
    expect(i.lines.reduce((s, l) => s + l.offsetAmount, 0) + i.excessCredit).toBe(negatives.reduce((s, l) => s - l.amount, 0));
    for (const l of i.lines) {
      expect(l.netAmount).toBeGreaterThanOrEqual(0);
      expect(l.creditedAmount).toBeGreaterThanOrEqual(0);
      expect(l.creditedAmount).toBeLessThanOrEqual(l.netAmount);
      if (negatives.includes(l)) expect([l.amount <= 0, l.netAmount, l.offsetAmount, l.discountAmount]).toEqual([true, 0, 0, 0]);
      else expect(l.netAmount).toBe(l.amount - l.offsetAmount - l.discountAmount);
    }
  }

  /** Runs one sequence on a new subscription from Jan 1; answers its invoices after the period closed and everything was finalized. */
  async function run(ops: Op[]): Promise<{ invoices: Invoice[]; parts: Array<{ plan: number; from: number; to: number }>; plain: boolean }> {
    h.clock.set('2026-01-01T00:00:00Z');
    h.meters.known.set('meter_calls', '0');
    const customer = await h.customer(`seq-${++n}-${Date.now()}`);
    let plan = 0;
    const sub = await h.service.subscriptions.create(CTX, { ...base, customer: { id: customer }, planId: plans[0]!, startDate: new Date(S) });
    let at = S;
    const parts: Array<{ plan: number; from: number; to: number }> = [];
    let from = S;
    let plain = true;
    for (const o of ops) {
      if (o.kind === 'change') {
        const next = at + o.minutes * MINUTE;
        if (next >= E - MINUTE || o.plan === plan) continue;
        at = next;
        h.clock.set(new Date(at).toISOString());
        const body = { plan_id: plans[o.plan]!, proration_behavior: o.prorate ? ('create_prorations' as const) : ('none' as const), effective: 'immediately' as const };
        const preview = await h.service.planChanges.preview(CTX, sub.id, planChangeOf(sub.id, body));
        const made = await h.service.planChanges.change(CTX, sub.id, planChangeOf(sub.id, body));
        expect(preview.invoice && money(preview.invoice)).toEqual(made.invoice && money(made.invoice));
        expect({ ...preview.subscription, updated_at: null }).toEqual({ ...made.subscription, updated_at: null });
        if (!o.prorate) plain = false;
        parts.push({ plan, from, to: at });
        from = at;
        plan = o.plan;
      } else if (o.kind === 'coupon') {
        plain = false;
        const coupon = await h.service.coupons.create(CTX, {
          name: 'c',
          code: null,
          type: o.percent ? 'PERCENTAGE' : 'FIXED_AMOUNT',
          percentOff: o.percent ? o.percent : null,
          amountOff: o.percent ? null : (o.amountOff ?? null),
          currency: o.percent ? null : 'usd',
          duration: 'FOREVER',
          durationInPeriods: null,
          appliesToPriceIds: null,
          maxRedemptions: null,
          redeemBy: null,
          metadata: {},
        });
        await h.service.coupons.attach(CTX, sub.id, { id: coupon.id });
      } else if (o.kind === 'usage') {
        h.meters.known.set('meter_calls', String(o.calls));
      } else {
        const invoices = await invoicesOf(sub.id);
        if (o.kind === 'finalize') {
          for (const i of invoices.filter((x) => x.status === 'draft')) await h.service.invoices.finalizeNow(CTX, i.id, 'r');
        } else if (o.kind === 'pay') {
          const open = invoices.find((x) => x.status === 'finalized' && x.amountRemaining > 0);
          const amount = open ? Math.floor(open.amountRemaining * o.fraction) : 0;
          if (open && amount > 0) await h.service.payments.create(CTX, { invoiceId: open.id, amount, paymentMethodType: 'OFFLINE' }, 'r');
        } else {
          const target = invoices.find((x) => (x.status === 'finalized' || x.status === 'paid') && x.lines.some((l) => l.netAmount > l.creditedAmount));
          const left = target ? target.lines.reduce((s, l) => s + Math.max(0, l.netAmount - l.creditedAmount), 0) : 0;
          const amount = Math.floor(left * o.fraction);
          if (target && amount > 0) {
            plain = false;
            const res = await h.service.creditNotes.create(CTX, { invoiceId: target.id, reason: 'OTHER', amount, refund: target.amountPaid > 0 ? 'OFFLINE' : 'NONE' }).catch((e: Error) => e);
            // A note larger than what the invoice can still give back is refused with a 400, nothing written.
            if (res instanceof Error) expect((res as { status?: number }).status ?? 400).toBe(400);
          }
        }
      }
    }
    parts.push({ plan, from, to: E });
    // The period closes; every draft is finalized.
    h.clock.set('2026-02-01T00:00:01Z');
    await h.service.periods.runOnce(CTX);
    for (const i of (await invoicesOf(sub.id)).filter((x) => x.status === 'draft')) await h.service.invoices.finalizeNow(CTX, i.id, 'r');
    return { invoices: await invoicesOf(sub.id), parts, plain };
  }

  it('keeps every identity and credits nothing twice; a preview is the change; prorated changes do not drift', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        const { invoices, parts, plain } = await run(ops);
        for (const i of invoices) checkInvoice(i);
        // One SUBSCRIPTION_UPDATE invoice per change at most (none when it billed nothing).
        expect(invoices.filter((i) => i.billingReason === 'SUBSCRIPTION_UPDATE').length).toBeLessThanOrEqual(parts.length - 1);
        if (!plain) return;
        // January's FIXED money, after the credits: each plan's prices for the time it ran.
        const january = invoices.flatMap((i) => i.lines).filter((l) => l.priceType === 'FIXED' && billingPeriodOf(l)?.getTime() === S);
        // The unused time a change took off an invoice still due is a credit note on it, not a line (ADR 0056): plain
        // runs make no other note, so every note here is a change's, on January's FIXED ADVANCE lines.
        const lowered = Number((await h.db('credit_notes').whereIn('invoice_id', invoices.map((i) => i.id)).sum<Array<{ s: string | null }>>({ s: 'amount' }))[0]?.s ?? 0);
        const billed = january.reduce((s, l) => s + l.amount, 0) - lowered;
        const exact = parts.reduce((s, p) => s + (PLANS[p.plan]!.fixedMinor * (p.to - p.from)) / (E - S), 0);
        const lines = parts.reduce((s, p) => s + PLANS[p.plan]!.prices.filter((x) => x.type === 'FIXED').length, 0);
        if (Math.abs(billed - exact) > lines && process.env.DEBUG_SEQ) {
          console.log(JSON.stringify({ parts, lines: invoices.map((i) => [i.billingReason, i.status, i.lines.map((l) => [l.lineType, l.priceId, l.amount, l.netAmount, l.creditedAmount, l.periodStart, l.periodEnd, l.billingPeriodStart])]) }, null, 1));
        }
        expect(Math.abs(billed - exact)).toBeLessThanOrEqual(lines);
      }),
      {
        numRuns: Number(process.env.PROPERTY_RUNS ?? 40),
        interruptAfterTimeLimit: 400_000,
        // Counterexamples found before, kept: up and back down within minutes; and changes at one
        // instant (several in one whole second, ADR 0057), unpaid and paid.
        examples: [
          [[{ kind: 'change', plan: 1, prorate: true, minutes: 1 }, { kind: 'change', plan: 0, prorate: true, minutes: 1 }, { kind: 'usage', calls: 0 }]],
          [
            [
              { kind: 'pay', fraction: 1 },
              { kind: 'change', plan: 1, prorate: true, minutes: 1 },
              { kind: 'finalize' },
              { kind: 'pay', fraction: 1 },
              { kind: 'change', plan: 0, prorate: true, minutes: 0 },
              { kind: 'finalize' },
              { kind: 'change', plan: 1, prorate: true, minutes: 0 },
              { kind: 'usage', calls: 0 },
            ],
          ],
        ],
      },
    );
  });
});

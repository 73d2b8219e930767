import Decimal from 'decimal.js';
import fc from 'fast-check';
import { minorDigits } from '@billstream/contracts';
import type { Price } from '../prices/domain';
import { paymentStatusOf, priceInvoice, settleInvoice, type InvoiceLine } from './domain';
import { invoiceLines } from './lines';

/**
 * Issue #13, item 4: over random plans, usage, prorations, credits and payments, an invoice's
 * money always adds up: every line is an integer of minor units rounded once (half up) from its
 * exact amount, subtotal is the sum of the lines, total = subtotal - credits applied, amount_due
 * = total, amount_remaining = amount_due - amount_paid, and the payment status follows.
 *
 * docs/api/billing.md#invoice-arithmetic (ADR 0038): on these ordinary invoices (CHARGE lines, no deduction,
 * discount, proration credit or credit note) the invoice arithmetic reduces to docs/api/billing.md's
 * totals: `billingTotals` is the totals function as billing computed it before section 0.
 */
function billingTotals(lines: Array<{ amount: number; prepaidCreditsApplied: number }>, amountPaid: number) {
  const subtotal = lines.reduce((s, l) => s + l.amount, 0);
  const credits = lines.reduce((s, l) => s + l.prepaidCreditsApplied, 0);
  const total = subtotal - credits;
  return { subtotal, totalPrepaidCreditsApplied: credits, total, amountDue: total, amountPaid, amountRemaining: total - amountPaid };
}

/** The arithmetic's totals (docs/api/billing.md#invoice-arithmetic) of priced lines with their credits, and what docs/api/billing.md's would be. */
function totalsOf(lines: InvoiceLine[], amountPaid: number) {
  const priced = priceInvoice(lines);
  const t = settleInvoice(priced, lines, amountPaid);
  expect(t).toMatchObject({ ...billingTotals(lines, amountPaid), totalDiscount: 0, excessCredit: 0, prePaymentCreditNotesAmount: 0 });
  return t;
}
const D = Decimal.clone({ precision: 200 });
const currency = fc.constantFrom('usd', 'jpy', 'kwd', 'eur', 'clf');
const amount = fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 6 })).map(([n, scale]) => new D(n).div(new D(10).pow(scale)).toFixed());
const quantity = fc.tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 3 })).map(([n, scale]) => new D(n).div(new D(10).pow(scale)).toFixed());
const factor = fc.integer({ min: 0, max: 1_000_000_000_000 }).map((n) => new D(n).div(1e12).toFixed(12));

let seq = 0;
function price(cur: string, p: Partial<Price>): Price {
  seq += 1;
  return {
    id: `price_${String(seq).padStart(6, '0')}`,
    tenantId: 't',
    environmentId: 'e',
    planId: 'plan_x',
    type: 'FIXED',
    currency: cur,
    amount: '1',
    billingModel: 'FLAT_FEE',
    billingPeriod: 'MONTHLY',
    billingPeriodCount: 1,
    invoiceCadence: 'ADVANCE',
    meterId: null,
    filterValues: null,
    package: null,
    tierMode: null,
    tiers: null,
    displayName: null,
    taxRateIds: [],
    taxBehavior: null,
    parentPriceId: null,
    subscriptionId: null,
    status: 'active',
    createdAt: new Date(1_700_000_000_000 + seq),
    updatedAt: new Date(1_700_000_000_000 + seq),
    ...p,
  };
}

const priceOf = (cur: string): fc.Arbitrary<Price> =>
  fc.oneof(
    fc.tuple(amount, fc.constantFrom('ADVANCE' as const, 'ARREAR' as const)).map(([a, cadence]) => price(cur, { amount: a, invoiceCadence: cadence })),
    amount.map((a) => price(cur, { type: 'USAGE', amount: a, invoiceCadence: 'ARREAR', meterId: 'meter_x' })),
    fc
      .tuple(amount, fc.integer({ min: 1, max: 1000 }), fc.constantFrom('UP' as const, 'DOWN' as const))
      .map(([a, size, round]) => price(cur, { type: 'USAGE', billingModel: 'PACKAGE', amount: a, package: { size: String(size), round }, invoiceCadence: 'ARREAR', meterId: 'meter_x' })),
    fc
      .tuple(fc.integer({ min: 1, max: 500 }), amount, amount, fc.option(amount, { nil: null }), fc.constantFrom('VOLUME' as const, 'SLAB' as const))
      .map(([bound, first, second, flat, mode]) =>
        price(cur, {
          type: 'USAGE',
          billingModel: 'TIERED',
          amount: null,
          tierMode: mode,
          tiers: [
            { upTo: String(bound), unitAmount: first, flatAmount: flat },
            { upTo: null, unitAmount: second, flatAmount: null },
          ],
          invoiceCadence: 'ARREAR',
          meterId: 'meter_x',
        }),
      ),
  );

const invoiceCase = currency.chain((cur) =>
  fc.record({
    cur: fc.constant(cur),
    prices: fc.array(priceOf(cur), { minLength: 1, maxLength: 6 }),
    usage: quantity,
    arrearFactor: fc.option(factor, { nil: undefined }),
    advanceFactor: fc.option(factor, { nil: undefined }),
    creditShares: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 40, maxLength: 40 }),
    paymentShares: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 5 }),
  }),
);

const window = (f: string | undefined) => ({ start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-02-01T00:00:00Z'), factor: f });

describe('invoice money (property)', () => {
  it('always adds up: lines rounded once, totals are sums, credits and payments never break the identities', () => {
    fc.assert(
      fc.property(invoiceCase, (c) => {
        const usage = new Map(c.prices.map((p) => [p.id, c.usage]));
        const lines = invoiceLines(c.prices, { window: window(c.arrearFactor), usage }, window(c.advanceFactor));
        const priced = priceInvoice(lines);
        expect(priced.discounts).toEqual([]);
        expect(priced.lines).toEqual(lines.map((l) => ({ ...l, lineType: 'CHARGE', offsetAmount: 0, discountAmount: 0, netAmount: l.amount, creditedAmount: 0, taxAmount: 0, taxes: [], taxBehavior: null })));
        const scale = new D(10).pow(minorDigits(c.cur));
        for (const line of lines) {
          expect(Number.isSafeInteger(line.amount) && line.amount >= 0).toBe(true);
          if (line.priceType === 'FIXED') {
            const p = c.prices.find((x) => x.id === line.priceId)!;
            const f = p.invoiceCadence === 'ARREAR' ? c.arrearFactor : c.advanceFactor;
            const exact = new D(p.amount!).times(f ?? 1).times(scale);
            expect(line.amount).toBe(exact.toDecimalPlaces(0, D.ROUND_HALF_UP).toNumber());
          }
        }
        // Credits: a line takes at most its net amount (as the wallet's allocation does), in line order.
        const credited = priced.lines.map((l, i) => ({ ...l, prepaidCreditsApplied: Math.floor(l.netAmount * c.creditShares[i % c.creditShares.length]) }));
        const totals = totalsOf(credited, 0);
        expect(totals.subtotal).toBe(lines.reduce((s, l) => s + l.amount, 0));
        expect(totals.totalPrepaidCreditsApplied).toBe(credited.reduce((s, l) => s + l.prepaidCreditsApplied, 0));
        expect(totals.total).toBe(totals.subtotal - totals.totalPrepaidCreditsApplied);
        expect(totals.amountDue).toBe(totals.total);
        expect(totals.amountRemaining).toBe(totals.amountDue);
        expect(totals.total).toBeGreaterThanOrEqual(0);
        // Payments: each at most what remains; the identities hold after each, and the status follows.
        let paid = 0;
        for (const share of c.paymentShares) {
          paid += Math.floor((totals.amountDue - paid) * share);
          const after = totalsOf(credited, paid);
          expect(after.amountRemaining).toBe(after.amountDue - paid);
          expect(after.amountRemaining).toBeGreaterThanOrEqual(0);
          const status = paymentStatusOf(after.amountDue, paid);
          expect(status).toBe(after.amountRemaining === 0 ? 'succeeded' : paid > 0 ? 'partially_paid' : 'pending');
        }
        const settled = totalsOf(credited, totals.amountDue);
        expect(settled.amountRemaining).toBe(0);
        expect(paymentStatusOf(settled.amountDue, totals.amountDue)).toBe('succeeded');
      }),
      { numRuns: 500 },
    );
  });

  it('orders lines as credits pay them: ARREAR charges of the closed period, then ADVANCE charges of the next', () => {
    const fixedA = price('usd', { amount: '10', invoiceCadence: 'ADVANCE' });
    const usageP = price('usd', { type: 'USAGE', amount: '0.5', invoiceCadence: 'ARREAR', meterId: 'meter_x' });
    const fixedR = price('usd', { amount: '3', invoiceCadence: 'ARREAR' });
    const lines = invoiceLines([fixedA, usageP, fixedR], { window: window(undefined), usage: new Map([[usageP.id, '7']]) }, window('0.500000000000'));
    expect(lines.map((l) => [l.priceId, l.amount, l.position])).toEqual([
      [usageP.id, 350, 0],
      [fixedR.id, 300, 1],
      [fixedA.id, 500, 2],
    ]);
    expect(lines[2].description).toMatch(/prorated x 0.500000000000/);
  });
});

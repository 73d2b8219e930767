import Decimal from 'decimal.js';
import fc from 'fast-check';
import { invoiceArithmetic, invoiceTotals } from '.';
import { invoiceCase, percent } from '../testing/arithmetic-arbitraries';
import { creditNoteLineTax, invoiceTax, type TaxableLine, type TaxRateInput, type TaxRounding } from './tax';

/**
 * The whole arithmetic with tax (docs/api/billing.md#invoice-arithmetic steps 1-5, then
 * docs/api/taxes.md#arithmetic step 6) over random invoices: charges and true-ups, threshold
 * deductions, discounts (a 100 % one too) and proration credits, each billing line inclusive or
 * exclusive with up to three random rates, both roundings; then wallet credits that pay a line at
 * most its net and its exclusive tax, and random sequences of credit notes per line. Checked
 * against exact figures computed here (decimal.js at 200 digits): a line whose discounts or
 * offsets took it to 0 bears no tax, negative lines bear none, Σ line tax = total_tax = Σ
 * breakdown, the total is Σ (net + exclusive tax) − credits and never negative, no minor unit is
 * gained or lost, and notes never return more tax than billed, all of it once wholly credited.
 */
const D = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_UP });
const RUNS = Number(process.env.TAX_PROPERTY_RUNS ?? 1000);
const RATE_POOL = 4;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

const taxedCase = fc.record({
  invoice: invoiceCase,
  rates: fc.array(percent, { minLength: RATE_POOL, maxLength: RATE_POOL }).map((ps): TaxRateInput[] => ps.map((p, i) => ({ id: `txr_${i}`, code: `R${i}`, percentage: p }))),
  // Per line (by index, 12 at most): inclusive or not, which rates, and its credit notes' shares of what is left.
  lineTax: fc.array(
    fc.record({
      inclusive: fc.boolean(),
      rateIdx: fc.uniqueArray(fc.integer({ min: 0, max: RATE_POOL - 1 }), { maxLength: 3 }),
      notes: fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 3 }),
      creditAll: fc.boolean(),
    }),
    { minLength: 12, maxLength: 12 },
  ),
  rounding: fc.constantFrom<TaxRounding>('LINE', 'TOTAL'),
  fullDiscount: fc.boolean(),
});

/** The exact tax of a line at a rate, written apart from the module. */
function exactTax(line: TaxableLine, percentage: string): Decimal {
  const p = new D(percentage);
  if (line.behavior === 'exclusive') return new D(line.netAmount).times(p).div(100);
  return new D(line.netAmount).times(p).div(new D(100).plus(line.rates.reduce((s, r) => s.plus(r.percentage), new D(0))));
}

describe('invoice arithmetic with tax (property, steps 1-6)', () => {
  it('taxes each line on its net after deductions, discounts and credits, and settles and credits it exactly', () => {
    fc.assert(
      fc.property(taxedCase, ({ invoice: c, rates, lineTax, rounding, fullDiscount }) => {
        // Half the time one more discount takes 100 % of every billing line: nothing is left to tax.
        const billing = c.lines.filter((l) => l.lineType === 'CHARGE' || l.lineType === 'COMMITMENT_TRUE_UP').map((l) => l.id);
        const discounts = fullDiscount && billing.length > 0 ? [...c.discounts, { discountId: 'disc_all', kind: 'PERCENTAGE' as const, percent: '100', appliesTo: billing }] : c.discounts;
        const a = invoiceArithmetic({ lines: c.lines, discounts });
        const taxable: TaxableLine[] = a.lines.map((l, i) => ({
          id: l.id,
          netAmount: l.netAmount,
          behavior: lineTax[i]!.inclusive ? 'inclusive' : 'exclusive',
          rates: lineTax[i]!.rateIdx.map((r) => rates[r]!),
        }));
        const taxed = invoiceTax(taxable, rounding);

        if (fullDiscount && billing.length > 0) expect(taxed.totalTax).toBe(0);
        expect(taxed.totalTax).toBe(sum(taxed.lines.map((l) => l.taxAmount)));
        expect(sum(taxed.breakdown.map((b) => b.amount))).toBe(taxed.totalTax);
        taxed.lines.forEach((t, i) => {
          const line = taxable[i]!;
          const source = c.lines[i]!;
          if (source.lineType === 'PRORATION_CREDIT' || source.lineType === 'THRESHOLD_DEDUCTION' || line.netAmount === 0) {
            expect([t.taxAmount, t.taxes]).toEqual([0, []]);
            return;
          }
          // Each rate's tax is the floor or the ceiling of its exact tax on the net (the one edge, a
          // clamp on a tiny inclusive line past 100 %, only ever takes a ceiling down to its floor).
          t.taxes.forEach((x, ri) => {
            const e = exactTax(line, line.rates[ri]!.percentage);
            expect([e.floor().toNumber(), e.ceil().toNumber()]).toContain(x.amount);
            if (rounding === 'LINE' && sum(line.rates.map((r) => exactTax(line, r.percentage).ceil().toNumber())) <= line.netAmount) expect(x.amount).toBe(e.toDecimalPlaces(0).toNumber());
          });
          // No minor unit gained or lost on the line: taxable + tax is the net (inclusive), taxable is the net (exclusive).
          expect(line.behavior === 'inclusive' ? t.taxableAmount + t.taxAmount : t.taxableAmount).toBe(line.netAmount);
          expect(t.taxableAmount).toBeGreaterThanOrEqual(0);
        });

        // Wallet credits pay each line at most what it owes with its tax (coupons before tax, credits after).
        const owed = taxed.lines.map((t, i) => taxable[i]!.netAmount + (t.behavior === 'exclusive' ? t.taxAmount : 0));
        const credits = owed.map((o, i) => Math.floor(o * c.shares.credits[i % 12]!));
        const totals = invoiceTotals({ ...a, exclusiveTax: taxed.exclusiveTax }, { totalPrepaidCreditsApplied: sum(credits), prePaymentCreditNotesAmount: 0, amountPaid: 0 });
        expect(totals.total).toBe(sum(owed) - sum(credits));
        expect(totals.total).toBe(a.subtotal - a.totalDiscount + a.excessCredit + taxed.exclusiveTax - sum(credits));
        expect(totals.total).toBeGreaterThanOrEqual(0);

        // Credit notes per line, in sequence: exactly the tax billed back, never more.
        taxed.lines.forEach((billed, i) => {
          const net = taxable[i]!.netAmount;
          if (net <= 0) return;
          const spec = lineTax[i]!;
          const steps: number[] = [];
          for (const share of spec.notes) steps.push(Math.min(Math.floor((net * share) / 3000), net - sum(steps)));
          if (spec.creditAll) steps.push(net - sum(steps));
          let credited = 0;
          const returned = new Map<string, number>();
          for (const amount of steps) {
            const note = creditNoteLineTax(billed, net, credited, amount);
            note.taxes.forEach((x, ri) => {
              const tax = billed.taxes[ri]!.amount;
              const exact = new D(tax).times(credited + amount).div(net).toDecimalPlaces(0).minus(new D(tax).times(credited).div(net).toDecimalPlaces(0));
              expect(x.amount).toBe(exact.toNumber());
              returned.set(x.taxRateId, (returned.get(x.taxRateId) ?? 0) + x.amount);
            });
            credited += amount;
          }
          for (const x of billed.taxes) {
            expect(returned.get(x.taxRateId) ?? 0).toBeLessThanOrEqual(x.amount);
            if (credited === net && steps.length > 0) expect(returned.get(x.taxRateId) ?? 0).toBe(x.amount);
          }
        });
      }),
      { numRuns: RUNS },
    );
  });
});

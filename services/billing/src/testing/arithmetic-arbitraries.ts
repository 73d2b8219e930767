import fc from 'fast-check';
import type { ArithmeticLine, DiscountInput } from '../invoice-arithmetic';

/**
 * Random invoices of the invoice arithmetic's property tests (docs/api/billing.md#invoice-arithmetic,
 * docs/api/taxes.md#arithmetic): CHARGE and COMMITMENT_TRUE_UP lines, threshold deductions per
 * price, proration credits, PERCENTAGE and FIXED_AMOUNT discounts on random lines, in random line
 * order, and the shares of credits, pre-payment credit notes and payments applied after.
 */
export const PRICES = ['price_a', 'price_b', 'price_c'];

export const money = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 100_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 1_000_000_000_000 }) });
/** A percentage in [0, 100] with 0 to 4 decimals, as a decimal string. */
export const percent = fc
  .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 4 }))
  .map(([whole, frac, digits]) => (whole === 100 || digits === 0 ? String(whole) : `${whole}.${String(frac).padStart(4, '0').slice(0, digits)}`));

export interface Case {
  lines: ArithmeticLine[];
  discounts: DiscountInput[];
  shares: { credits: number[]; creditNotes: number; paid: number };
}

const lineSpec = fc.oneof(
  { weight: 5, arbitrary: fc.record({ type: fc.constant('CHARGE' as const), price: fc.constantFrom(...PRICES), amount: money }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('COMMITMENT_TRUE_UP' as const), price: fc.constant(null), amount: money }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('THRESHOLD_DEDUCTION' as const), price: fc.constantFrom(...PRICES), amount: money.map((a) => -a) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('PRORATION_CREDIT' as const), price: fc.constantFrom(...PRICES, null), amount: money.map((a) => -a) }) },
);

export const invoiceCase: fc.Arbitrary<Case> = fc
  .tuple(fc.array(lineSpec, { minLength: 0, maxLength: 12 }), fc.array(fc.nat(), { minLength: 12, maxLength: 12 }))
  .chain(([specs, keys]) => {
    // Input order is not line order: positions are a random permutation.
    const positions = specs.map((_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
    const lines: ArithmeticLine[] = specs.map((s, i) => ({ id: `line_${i}`, position: positions[i]!, lineType: s.type, priceId: s.price, amount: s.amount === 0 ? 0 : s.amount }));
    const billing = lines.filter((l) => l.lineType === 'CHARGE' || l.lineType === 'COMMITMENT_TRUE_UP').map((l) => l.id);
    const discount = fc.record({
      kind: fc.constantFrom('PERCENTAGE' as const, 'FIXED_AMOUNT' as const),
      percent,
      remaining: money,
      appliesTo: billing.length === 0 ? fc.constant([]) : fc.subarray(billing),
    });
    return fc.record({
      lines: fc.constant(lines),
      discounts: fc.array(discount, { maxLength: 3 }).map((ds) =>
        ds.map(
          (d, i): DiscountInput =>
            d.kind === 'PERCENTAGE'
              ? { discountId: `disc_${i}`, kind: 'PERCENTAGE', percent: d.percent, appliesTo: d.appliesTo }
              : { discountId: `disc_${i}`, kind: 'FIXED_AMOUNT', remaining: d.remaining, appliesTo: d.appliesTo },
        ),
      ),
      shares: fc.record({
        credits: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 12, maxLength: 12 }),
        creditNotes: fc.double({ min: 0, max: 1, noNaN: true }),
        paid: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
    });
  });
